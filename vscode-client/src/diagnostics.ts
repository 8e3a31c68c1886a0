// Which diagnostics make the code lens / status bar offer a debug run. No `vscode` import.
import { DIAGNOSTIC_SOURCE, PARSE_ERROR_CODE } from './protocol';

export interface DiagnosticLike {
  source?: string;
  code?: string | number | { value: string | number; target?: unknown };
  message: string;
  range: { start: { line: number; character?: number }; end?: { line: number; character?: number } };
  relatedInformation?: readonly { message: string; location?: { uri: { toString(): string }; range: { start: { line: number } } } }[];
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

/** The server's lens title ("Confirm with a debug run (2 findings)") with VS Code's icon. */
export function lensTitle(serverTitle: string): string {
  return `$(debug-alt) ${serverTitle}`;
}

/**
 * Is there a gradwarden finding at this position (its range, or one of its related sites in
 * the same document: where the tensor was saved, where backward fails)? The hover then offers
 * the finding's timeline picture.
 */
export function findingAt<T extends DiagnosticLike>(diags: readonly T[], uri: string, line: number, character: number): T | undefined {
  const ours = diags.filter((d) => isGradwarden(d) && diagnosticCode(d) !== PARSE_ERROR_CODE);
  const inside = ours.find((d) => {
    const s = d.range.start;
    const e = d.range.end ?? d.range.start;
    if (line < s.line || line > e.line) return false;
    if (line === s.line && character < (s.character ?? 0)) return false;
    if (line === e.line && e.character !== undefined && character > e.character) return false;
    return true;
  });
  if (inside) return inside;
  return ours.find((d) => (d.relatedInformation ?? []).some((r) => r.location && r.location.uri.toString() === uri && r.location.range.start.line === line));
}
