// Which Python runs the server: discovery, probing and the messages when none works.
// No `vscode` import: the Python extension's answer and the process runner are passed in,
// so that node's test runner covers all of it.
import * as path from 'path';

export const MIN_PYTHON: readonly [number, number] = [3, 9];

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface Candidate {
  command: string;
  source: InterpreterSource;
}

export interface ExpandContext {
  workspaceFolder?: string;
  home: string;
  env: Record<string, string | undefined>;
}

export function describeSource(source: InterpreterSource): string {
  switch (source) {
    case 'setting':
      return 'the gradwarden.interpreter setting';
    case 'python-extension':
      return "the Python extension's selected interpreter";
    default:
      return 'the default';
  }
}

/** `${workspaceFolder}`, `${userHome}`, `${env:NAME}`, a leading `~`; relative paths against the folder. */
export function expandInterpreterPath(value: string, ctx: ExpandContext): string {
  let out = value.trim();
  out = out.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder ?? '${workspaceFolder}');
  out = out.replace(/\$\{userHome\}/g, ctx.home);
  out = out.replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => ctx.env[name] ?? '');
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) out = ctx.home + out.slice(1);
  const looksLikePath = out.includes('/') || out.includes('\\');
  if (looksLikePath && !path.isAbsolute(out) && !/^[A-Za-z]:[\\/]/.test(out) && ctx.workspaceFolder) {
    out = path.join(ctx.workspaceFolder, out);
  }
  return out;
}

export function defaultPython(platform: string): string {
  return platform === 'win32' ? 'python' : 'python3';
}

/** In order: the setting, else the Python extension's interpreter, else python3 (python on Windows). */
export function interpreterCandidates(opts: {
  setting: string;
  pythonExtension?: string;
  platform: string;
  ctx: ExpandContext;
}): Candidate[] {
  const out: Candidate[] = [];
  const add = (command: string | undefined, source: InterpreterSource) => {
    if (command && !out.some((c) => c.command === command)) out.push({ command, source });
  };
  if (opts.setting.trim()) add(expandInterpreterPath(opts.setting, opts.ctx), 'setting');
  add(opts.pythonExtension, 'python-extension');
  add(defaultPython(opts.platform), 'default');
  return out;
}

/** What `launch.py --probe` prints (one JSON object). */
export interface ProbeInfo {
  ok: boolean;
  python: string; // "3.11.7"
  executable: string;
  bundle?: string; // "cp311": the bundled library folder used
  gradwarden?: string; // the version that will run
  gradwardenFrom?: string; // "bundled" | "environment"
  torch: boolean;
  torchVersion?: string | null;
  error?: string | null;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  spawnError?: { code?: string; message: string };
  timedOut?: boolean;
}

export type Runner = (command: string, args: string[], timeoutMs: number) => Promise<RunResult>;

export type ProbeOutcome = { ok: true; info: ProbeInfo } | { ok: false; reason: string; info?: ProbeInfo };

export function parseVersion(text: string): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

export function versionAtLeast(version: string, min: readonly [number, number]): boolean {
  const v = parseVersion(version);
  return !!v && (v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]));
}

/** The last line of the output that parses as a JSON object (site customisations may print before it). */
export function parseProbeOutput(stdout: string): ProbeInfo | undefined {
  const lines = stdout.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i].startsWith('{')) continue;
    try {
      const obj = JSON.parse(lines[i]);
      if (obj && typeof obj === 'object' && typeof obj.python === 'string') return obj as ProbeInfo;
    } catch {
      /* not ours */
    }
  }
  return undefined;
}

function firstLines(text: string, n = 6): string {
  return text.trim().split(/\r?\n/).slice(-n).join('\n');
}

/** Run the launcher's probe with `command`; a reason in words when it cannot run the server. */
export async function probeInterpreter(command: string, launcher: string, run: Runner, timeoutMs = 20000): Promise<ProbeOutcome> {
  const res = await run(command, [launcher, '--probe'], timeoutMs);
  if (res.spawnError) {
    if (res.spawnError.code === 'ENOENT') return { ok: false, reason: `\`${command}\` was not found` };
    if (res.spawnError.code === 'EACCES') return { ok: false, reason: `\`${command}\` is not executable` };
    return { ok: false, reason: `\`${command}\` could not be started: ${res.spawnError.message}` };
  }
  if (res.timedOut) return { ok: false, reason: `\`${command}\` did not answer within ${Math.round(timeoutMs / 1000)} s` };
  const info = parseProbeOutput(res.stdout);
  if (!info) {
    // Python 2 or < 3.6 cannot even parse the launcher: say what it is if we can tell.
    const out = `${res.stderr}\n${res.stdout}`;
    const version = /Python (\d+\.\d+(?:\.\d+)?)/.exec(out);
    if (version && !versionAtLeast(version[1], MIN_PYTHON)) {
      return { ok: false, reason: `\`${command}\` is Python ${version[1]}; gradwarden needs Python ${MIN_PYTHON.join('.')} or newer` };
    }
    return {
      ok: false,
      reason: `\`${command}\` is not a working Python ${MIN_PYTHON.join('.')}+ (exit code ${res.code}${out.trim() ? `: ${firstLines(out)}` : ''})`,
    };
  }
  if (!versionAtLeast(info.python, MIN_PYTHON)) {
    return { ok: false, info, reason: `\`${command}\` is Python ${info.python}; gradwarden needs Python ${MIN_PYTHON.join('.')} or newer` };
  }
  if (!info.ok) return { ok: false, info, reason: `\`${command}\` (Python ${info.python}) cannot run the gradwarden server: ${info.error ?? 'unknown error'}` };
  return { ok: true, info };
}

export interface Failure {
  candidate: Candidate;
  reason: string;
}

export interface Choice {
  chosen?: { candidate: Candidate; info: ProbeInfo };
  failures: Failure[];
}

/** Probe the candidates in order; the first that works wins, the failures before it are kept. */
export async function chooseInterpreter(candidates: Candidate[], launcher: string, run: Runner, timeoutMs?: number): Promise<Choice> {
  const failures: Failure[] = [];
  for (const candidate of candidates) {
    const outcome = await probeInterpreter(candidate.command, launcher, run, timeoutMs);
    if (outcome.ok) return { chosen: { candidate, info: outcome.info }, failures };
    failures.push({ candidate, reason: outcome.reason });
  }
  return { failures };
}

/** The error shown when no candidate works. */
export function noInterpreterMessage(failures: Failure[]): string {
  const tried = failures.map((f) => `${f.reason} (${describeSource(f.candidate.source)})`).join('; ');
  return (
    `gradwarden: no usable Python ${MIN_PYTHON.join('.')}+ found, so the server is not running. ` +
    `Tried: ${tried || 'nothing'}. Set "gradwarden.interpreter" to a Python ${MIN_PYTHON.join('.')}+ executable.`
  );
}

/** The warning shown when a configured interpreter fails and a later one is used instead. */
export function fallbackMessage(choice: Choice): string | undefined {
  if (!choice.chosen) return undefined;
  const explicit = choice.failures.filter((f) => f.candidate.source !== 'default');
  if (!explicit.length) return undefined;
  const f = explicit[0];
  return `gradwarden: ${f.reason} (${describeSource(f.candidate.source)}); using \`${choice.chosen.candidate.command}\` (Python ${choice.chosen.info.python}) instead.`;
}

export function torchMissingMessage(info: ProbeInfo): string {
  return (
    `gradwarden: the debug run executes your file and needs torch, which is not installed in ${info.executable} ` +
    `(Python ${info.python}). Install it there (\`${info.executable} -m pip install torch\`) or point ` +
    `"gradwarden.interpreter" at the environment your code runs in.`
  );
}
