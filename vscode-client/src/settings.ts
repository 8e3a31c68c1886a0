// The extension's settings (`gradwarden.*` in the manifest) and their mapping onto what the
// server and the CLI understand. No `vscode` import: unit-tested with node's test runner.

export type Severity = 'error' | 'warning' | 'information' | 'hint';
export type RunOn = 'onType' | 'onSave';
export type Device = 'cpu' | 'cuda' | 'auto';
export type ImportStrategy = 'useBundled' | 'fromEnvironment';

export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'information', 'hint'];
export const DEVICES: readonly Device[] = ['cpu', 'cuda', 'auto'];
export const DEFAULT_TIMEOUT_S = 60;

export interface ClientSettings {
  enable: boolean;
  interpreter: string;
  importStrategy: ImportStrategy;
  select: string[] | null; // null: keep the configuration file's selection
  extendSelect: string[];
  ignore: string[];
  severity: Record<string, Severity>;
  run: RunOn;
  debugRun: { device: Device; timeout: number };
  codeLens: { enable: boolean };
}

/** What `vscode.WorkspaceConfiguration.get` looks like (keys relative to `gradwarden.`). */
export type ConfigGetter = (key: string) => unknown;

function codes(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const v of value) {
    if (typeof v !== 'string') continue;
    for (const part of v.split(',')) {
      const code = part.trim().toUpperCase();
      if (code && !out.includes(code)) out.push(code);
    }
  }
  return out;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

/** Read and normalise the settings; invalid values fall back to the defaults. */
export function readSettings(get: ConfigGetter): ClientSettings {
  const severity: Record<string, Severity> = {};
  const rawSeverity = get('severity');
  if (rawSeverity && typeof rawSeverity === 'object' && !Array.isArray(rawSeverity)) {
    for (const [code, level] of Object.entries(rawSeverity as Record<string, unknown>)) {
      const lvl = typeof level === 'string' ? level.trim().toLowerCase() : '';
      const key = code.trim().toUpperCase();
      if (key && (SEVERITIES as readonly string[]).includes(lvl)) severity[key] = lvl as Severity;
    }
  }
  const rawSelect = get('select');
  const timeout = Number(get('debugRun.timeout'));
  const interpreter = get('interpreter');
  return {
    enable: get('enable') !== false,
    interpreter: typeof interpreter === 'string' ? interpreter.trim() : '',
    importStrategy: oneOf(get('importStrategy'), ['useBundled', 'fromEnvironment'] as const, 'useBundled'),
    select: Array.isArray(rawSelect) ? codes(rawSelect) : null,
    extendSelect: codes(get('extendSelect')),
    ignore: codes(get('ignore')),
    severity,
    run: oneOf(get('run'), ['onType', 'onSave'] as const, 'onType'),
    debugRun: {
      device: oneOf(get('debugRun.device'), DEVICES, 'cpu'),
      timeout: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_S,
    },
    codeLens: { enable: get('codeLens.enable') !== false },
  };
}

/**
 * The settings object sent to `gradwarden serve` (initializationOptions.settings, the `settings`
 * of workspace/didChangeConfiguration, and the answer to workspace/configuration for section
 * `gradwarden`); keys as server/gradwarden/lsp/options.py reads them. The debug run's device and
 * timeout travel with the gradwarden.debugRun command instead, and workspace trust is enforced
 * here (the server runs user code only on that explicit command).
 */
export interface ServerSettings {
  select: string[] | null; // null (sent explicitly): the project's selection applies again
  extendSelect: string[];
  ignore: string[];
  severity: Record<string, Severity>;
  lintOn: 'type' | 'save';
}

export function toServerSettings(s: ClientSettings): ServerSettings {
  return {
    select: s.select === null ? null : [...s.select],
    extendSelect: [...s.extendSelect],
    ignore: [...s.ignore],
    severity: { ...s.severity },
    lintOn: s.run === 'onSave' ? 'save' : 'type',
  };
}

/** The same choices as `gradwarden check` options (for "Check workspace"). */
export function toCliArgs(s: ClientSettings): string[] {
  const args: string[] = [];
  if (s.select !== null) args.push('--select', s.select.join(','));
  if (s.extendSelect.length) args.push('--extend-select', s.extendSelect.join(','));
  if (s.ignore.length) args.push('--ignore', s.ignore.join(','));
  for (const [code, level] of Object.entries(s.severity)) args.push('--severity-override', `${code}=${level}`);
  return args;
}
