import assert from 'node:assert/strict';
import { test } from 'node:test';

import { readSettings, toCliArgs, toServerSettings } from '../src/settings';

const getter = (values: Record<string, unknown>) => (key: string) => values[key];

test('defaults when nothing is set', () => {
  const s = readSettings(getter({}));
  assert.equal(s.enable, true);
  assert.equal(s.interpreter, '');
  assert.equal(s.importStrategy, 'useBundled');
  assert.equal(s.select, null);
  assert.deepEqual(s.extendSelect, []);
  assert.deepEqual(s.ignore, []);
  assert.deepEqual(s.severity, {});
  assert.equal(s.run, 'onType');
  assert.deepEqual(s.debugRun, { device: 'cpu', timeout: 60 });
  assert.equal(s.codeLens.enable, true);
});

test('rule codes are normalised: upper case, trimmed, comma lists split, duplicates dropped', () => {
  const s = readSettings(getter({ select: ['gw2', ' GW401 ', 'GW2'], extendSelect: ['gw6,gw7'], ignore: ['', 'gw404', 3] }));
  assert.deepEqual(s.select, ['GW2', 'GW401']);
  assert.deepEqual(s.extendSelect, ['GW6', 'GW7']);
  assert.deepEqual(s.ignore, ['GW404']);
});

test('an empty select list is kept (it selects nothing), null keeps the config file', () => {
  assert.deepEqual(readSettings(getter({ select: [] })).select, []);
  assert.equal(readSettings(getter({ select: null })).select, null);
});

test('severity: levels lower-cased, unknown levels and non-objects dropped', () => {
  const s = readSettings(getter({ severity: { gw404: 'Warning', GW5: 'error', GW1: 'fatal', GW2: 3 } }));
  assert.deepEqual(s.severity, { GW404: 'warning', GW5: 'error' });
  assert.deepEqual(readSettings(getter({ severity: ['error'] })).severity, {});
});

test('invalid enum and number values fall back to the defaults', () => {
  const s = readSettings(getter({ run: 'sometimes', 'debugRun.device': 'tpu', 'debugRun.timeout': -5, importStrategy: 'x' }));
  assert.equal(s.run, 'onType');
  assert.equal(s.debugRun.device, 'cpu');
  assert.equal(s.debugRun.timeout, 60);
  assert.equal(s.importStrategy, 'useBundled');
  const t = readSettings(getter({ run: 'onSave', 'debugRun.device': 'cuda', 'debugRun.timeout': 12.5, importStrategy: 'fromEnvironment' }));
  assert.equal(t.run, 'onSave');
  assert.deepEqual(t.debugRun, { device: 'cuda', timeout: 12.5 });
  assert.equal(t.importStrategy, 'fromEnvironment');
});

test('the server gets the keys of server/gradwarden/lsp/options.py', () => {
  const s = readSettings(getter({ select: ['GW2'], extendSelect: ['GW6'], ignore: ['GW201'], severity: { GW2: 'hint' }, run: 'onSave' }));
  assert.deepEqual(toServerSettings(s), {
    select: ['GW2'],
    extendSelect: ['GW6'],
    ignore: ['GW201'],
    severity: { GW2: 'hint' },
    lintOn: 'save',
  });
  const d = toServerSettings(readSettings(getter({})));
  assert.equal(d.lintOn, 'type');
  assert.equal(d.select, null, 'select: null (explicit, so that clearing the setting resets the server)');
});

test('CLI arguments for the workspace check mirror the settings', () => {
  assert.deepEqual(toCliArgs(readSettings(getter({}))), []);
  const s = readSettings(getter({ select: ['GW2'], extendSelect: ['GW6', 'GW7'], ignore: ['GW201'], severity: { GW404: 'warning' } }));
  assert.deepEqual(toCliArgs(s), ['--select', 'GW2', '--extend-select', 'GW6,GW7', '--ignore', 'GW201', '--severity-override', 'GW404=warning']);
});
