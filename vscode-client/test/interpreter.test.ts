import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import {
  chooseInterpreter,
  expandInterpreterPath,
  fallbackMessage,
  interpreterCandidates,
  noInterpreterMessage,
  parseProbeOutput,
  probeInterpreter,
  RunResult,
  Runner,
  torchMissingMessage,
  versionAtLeast,
} from '../src/interpreter';

const ctx = { workspaceFolder: '/ws/proj', home: '/home/me', env: { VENV: '/opt/venv' } as Record<string, string | undefined> };

test('setting expansion: variables, ~, relative paths against the workspace folder', () => {
  assert.equal(expandInterpreterPath('${workspaceFolder}/.venv/bin/python', ctx), '/ws/proj/.venv/bin/python');
  assert.equal(expandInterpreterPath('${userHome}/py/bin/python3', ctx), '/home/me/py/bin/python3');
  assert.equal(expandInterpreterPath('~/py/bin/python3', ctx), '/home/me/py/bin/python3');
  assert.equal(expandInterpreterPath('${env:VENV}/bin/python', ctx), '/opt/venv/bin/python');
  assert.equal(expandInterpreterPath('${env:NOPE}/bin/python', ctx), '/bin/python');
  assert.equal(expandInterpreterPath('.venv/bin/python', ctx), path.join('/ws/proj', '.venv/bin/python'));
  assert.equal(expandInterpreterPath('  python3.12 ', ctx), 'python3.12', 'a bare command stays a PATH lookup');
  assert.equal(expandInterpreterPath('/usr/bin/python3', ctx), '/usr/bin/python3');
});

test('candidates: setting, then the Python extension, then python3; duplicates collapse', () => {
  const c = interpreterCandidates({ setting: '~/venv/bin/python', pythonExtension: '/x/python', platform: 'linux', ctx });
  assert.deepEqual(c, [
    { command: '/home/me/venv/bin/python', source: 'setting' },
    { command: '/x/python', source: 'python-extension' },
    { command: 'python3', source: 'default' },
  ]);
  assert.deepEqual(interpreterCandidates({ setting: '', platform: 'linux', ctx }), [{ command: 'python3', source: 'default' }]);
  assert.deepEqual(interpreterCandidates({ setting: ' ', pythonExtension: undefined, platform: 'win32', ctx }), [{ command: 'python', source: 'default' }]);
  assert.deepEqual(
    interpreterCandidates({ setting: 'python3', pythonExtension: 'python3', platform: 'linux', ctx }),
    [{ command: 'python3', source: 'setting' }],
  );
});

test('version comparison', () => {
  assert.ok(versionAtLeast('3.9.0', [3, 9]));
  assert.ok(versionAtLeast('3.14.1', [3, 9]));
  assert.ok(versionAtLeast('4.0', [3, 9]));
  assert.ok(!versionAtLeast('3.8.18', [3, 9]));
  assert.ok(!versionAtLeast('2.7.18', [3, 9]));
  assert.ok(!versionAtLeast('garbage', [3, 9]));
});

const good = { ok: true, python: '3.11.7', executable: '/usr/bin/python3.11', torch: false, gradwarden: '0.1.0', gradwardenFrom: 'bundled' };

test('probe output: the last JSON line wins, noise before it is ignored', () => {
  const out = `some sitecustomize banner\n{"not": "ours"}\n${JSON.stringify(good)}\n`;
  assert.deepEqual(parseProbeOutput(out), good);
  assert.equal(parseProbeOutput('Traceback ...\nSyntaxError'), undefined);
});

function fakeRunner(table: Record<string, Partial<RunResult>>): Runner & { calls: string[] } {
  const calls: string[] = [];
  const run = (async (command: string, args: string[]) => {
    calls.push(command);
    assert.equal(args[1], '--probe');
    const r = table[command] ?? { spawnError: { code: 'ENOENT', message: 'spawn ENOENT' } };
    return { code: 0, stdout: '', stderr: '', ...r } as RunResult;
  }) as unknown as Runner & { calls: string[] };
  run.calls = calls;
  return run;
}

test('probe: each failure is explained in words', async () => {
  const run = fakeRunner({
    old: { stdout: JSON.stringify({ ...good, ok: false, python: '3.8.18', error: 'Python 3.8 is too old' }) },
    py2: { code: 1, stderr: '  File "launch.py", line 3\nSyntaxError: invalid syntax\nPython 2.6.9' },
    broken: { stdout: JSON.stringify({ ...good, ok: false, error: 'importing the server failed: ImportError: libcst' }) },
    slow: { timedOut: true, code: null },
    noexec: { spawnError: { code: 'EACCES', message: 'spawn EACCES' } },
    weird: { code: 127, stderr: 'boom' },
    fine: { stdout: JSON.stringify(good) },
  });
  const reason = async (cmd: string) => {
    const o = await probeInterpreter(cmd, '/ext/launch.py', run, 1000);
    return o.ok ? 'OK' : o.reason;
  };
  assert.match(await reason('missing'), /`missing` was not found/);
  assert.match(await reason('old'), /Python 3\.8\.18; gradwarden needs Python 3\.9 or newer/);
  assert.match(await reason('py2'), /Python 2\.6\.9; gradwarden needs Python 3\.9/);
  assert.match(await reason('broken'), /cannot run the gradwarden server: importing the server failed/);
  assert.match(await reason('slow'), /did not answer within 1 s/);
  assert.match(await reason('noexec'), /is not executable/);
  assert.match(await reason('weird'), /not a working Python 3\.9\+ \(exit code 127: boom\)/);
  assert.equal(await reason('fine'), 'OK');
});

test('choose: first working candidate wins; an explicit failure before it becomes a warning', async () => {
  const run = fakeRunner({ python3: { stdout: JSON.stringify(good) } });
  const cands = interpreterCandidates({ setting: '/bad/python', pythonExtension: '/ext/python', platform: 'linux', ctx });
  const choice = await chooseInterpreter(cands, '/ext/launch.py', run);
  assert.equal(choice.chosen?.candidate.command, 'python3');
  assert.deepEqual(run.calls, ['/bad/python', '/ext/python', 'python3']);
  assert.equal(choice.failures.length, 2);
  const warning = fallbackMessage(choice) ?? '';
  assert.match(warning, /`\/bad\/python` was not found \(the gradwarden\.interpreter setting\); using `python3` \(Python 3\.11\.7\) instead/);
});

test('choose: nothing works -> one error naming every attempt and the setting to change', async () => {
  const run = fakeRunner({});
  const cands = interpreterCandidates({ setting: '/bad/python', platform: 'linux', ctx });
  const choice = await chooseInterpreter(cands, '/ext/launch.py', run);
  assert.equal(choice.chosen, undefined);
  const msg = noInterpreterMessage(choice.failures);
  assert.match(msg, /no usable Python 3\.9\+ found/);
  assert.match(msg, /`\/bad\/python` was not found \(the gradwarden\.interpreter setting\)/);
  assert.match(msg, /`python3` was not found \(the default\)/);
  assert.match(msg, /Set "gradwarden\.interpreter"/);
});

test('no warning when only the default was tried before success, or nothing failed', async () => {
  const run = fakeRunner({ python3: { stdout: JSON.stringify(good) } });
  const choice = await chooseInterpreter([{ command: 'python3', source: 'default' }], '/l', run);
  assert.equal(fallbackMessage(choice), undefined);
});

test('torch missing message names the interpreter and the install command', () => {
  const msg = torchMissingMessage({ ...good, torch: false });
  assert.match(msg, /needs torch, which is not installed in \/usr\/bin\/python3\.11 \(Python 3\.11\.7\)/);
  assert.match(msg, /\/usr\/bin\/python3\.11 -m pip install torch/);
});
