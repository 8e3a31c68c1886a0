// Which diagnostics make the code lens / status bar offer a debug run. No `vscode` import.
import { DIAGNOSTIC_SOURCE, PARSE_ERROR_CODE } from './protocol';

export interface DiagnosticLike {
  source?: string;
  code?: string | number | { value: string | number; target?: unknown };
  message: string;
  range: { start: { line: number } };
  relatedInformation?: readonly { message: string }[];
}

export function diagnosticCode(d: DiagnosticLike): string {
  const code = d.code;
  if (code === undefined) return '';
  if (typeof code === 'object') return String(code.value);
  return String(code);
}

export function isGradwarden(d: DiagnosticLike): boolean {
  return (d.source ?? '').toLowerCase().startsWith(DIAGNOSTIC_SOURCE);
}

/**
 * A diagnostic observed in a debug run, not only predicted: a runtime finding (source
 * "gradwarden (runtime)") or a static one that carries the run's evidence (related entries
 * "debug run: ...", see server/gradwarden/runtime/findings.py).
 */
export function isRuntimeConfirmed(d: DiagnosticLike): boolean {
  if (/runtime/i.test(d.source ?? '')) return true;
  return (d.relatedInformation ?? []).some((r) => /^debug run:/i.test(r.message));
}

/** The static autograd diagnostics a debug run could confirm (parse errors excluded). */
export function debugRunCandidates<T extends DiagnosticLike>(diags: readonly T[]): T[] {
  return diags.filter((d) => isGradwarden(d) && diagnosticCode(d) !== PARSE_ERROR_CODE && !isRuntimeConfirmed(d));
}

export function lensTitle(count: number): string {
  return `$(debug-alt) gradwarden: debug run to confirm ${count} autograd diagnostic${count === 1 ? '' : 's'}`;
}
