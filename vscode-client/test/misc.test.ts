import assert from 'node:assert/strict';
import { test } from 'node:test';

import { debugRunCandidates, diagnosticCode, lensTitle } from '../src/diagnostics';
import { RestartPolicy } from '../src/restartPolicy';
import { cliSeverity, summarizeResult } from '../src/results';

test('restart policy: at most `max` restarts within the window, then none; old crashes expire', () => {
  let now = 0;
  const p = new RestartPolicy(3, 1000, () => now);
  assert.equal(p.recordCrash(), true);
  assert.equal(p.recordCrash(), true);
  assert.equal(p.recordCrash(), true);
  assert.equal(p.recordCrash(), false, 'the 4th crash within the window is not restarted');
  now = 5000;
  assert.equal(p.recordCrash(), true, 'crashes long ago no longer count');
  assert.equal(p.recent, 1);
  p.reset();
  assert.equal(p.recent, 0);
});

const d = (source: string | undefined, code: unknown, message = 'm', line = 0) =>
  ({ source, code, message, range: { start: { line } } }) as Parameters<typeof diagnosticCode>[0];

test('debug-run candidates: gradwarden diagnostics only, no parse errors, not already confirmed', () => {
  const diags = [
    d('gradwarden', 'GW201', 'in-place +=', 10),
    d('gradwarden', { value: 'GW101', target: 'x' }, 'leaf', 3),
    d('gradwarden', 'GW001', 'does not parse'),
    d('Pylance', 'reportX'),
    d(undefined, 'GW201'),
    d('gradwarden (runtime)', 'GW201', 'confirmed'),
    { ...d('gradwarden', 'GW402', 'freed graph', 7), relatedInformation: [{ message: 'debug run: backward raised here' }] },
  ];
  assert.deepEqual(debugRunCandidates(diags).map(diagnosticCode), ['GW201', 'GW101']);
  assert.equal(lensTitle('Confirm with a debug run (2 findings)'), '$(debug-alt) Confirm with a debug run (2 findings)');
});

test('result summaries', () => {
  assert.equal(summarizeResult({ message: '2 of 2 confirmed' }, 'x.py'), 'gradwarden: 2 of 2 confirmed');
  assert.equal(summarizeResult({ confirmed: 1, notConfirmed: 2 }, 'x.py'), 'gradwarden: x.py: 1 diagnostic confirmed at runtime, 2 not reproduced.');
  assert.equal(summarizeResult({ findings: 3, files: 2 }, 'the workspace'), 'gradwarden: the workspace: 3 findings, in 2 files.');
  assert.equal(summarizeResult(null, 'x.py'), 'gradwarden: x.py done.');
  assert.equal(
    summarizeResult({ files: 4, checked: 3, diagnostics: 2, errors: 1, cancelled: true }, 'the workspace'),
    'gradwarden: the workspace: 2 findings, in 4 files (3 checked), 1 file could not be read, cancelled.',
  );
  assert.equal(cliSeverity('error'), 0);
  assert.equal(cliSeverity('warning'), 1);
  assert.equal(cliSeverity('information'), 2);
  assert.equal(cliSeverity('hint'), 3);
});
