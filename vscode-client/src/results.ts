// Rendering what the server / CLI answer. No `vscode` import.

export interface CliLocation {
  row: number;
  column: number;
}

export interface CliDiagnostic {
  code: string;
  message: string;
  severity: string;
  filename: string;
  location: CliLocation;
  end_location?: CliLocation;
  related?: { message: string; filename?: string; location: CliLocation }[];
}

/** vscode.DiagnosticSeverity values (Error 0, Warning 1, Information 2, Hint 3). */
export function cliSeverity(severity: string): 0 | 1 | 2 | 3 {
  switch (severity) {
    case 'error':
      return 0;
    case 'warning':
      return 1;
    case 'information':
    case 'info':
      return 2;
    default:
      return 3;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A one-line summary of a command's result (a message, or counts, or a generic line). */
export function summarizeResult(result: unknown, what: string): string {
  if (result && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    for (const key of ['summary', 'message']) {
      if (typeof r[key] === 'string' && (r[key] as string).trim()) return `gradwarden: ${(r[key] as string).trim()}`;
    }
    const parts: string[] = [];
    if (typeof r.confirmed === 'number') parts.push(`${plural(r.confirmed, 'diagnostic')} confirmed at runtime`);
    else if (Array.isArray(r.confirmed)) parts.push(`${plural(r.confirmed.length, 'diagnostic')} confirmed at runtime`);
    if (typeof r.notConfirmed === 'number') parts.push(`${r.notConfirmed} not reproduced`);
    if (typeof r.findings === 'number') parts.push(plural(r.findings, 'finding'));
    else if (typeof r.diagnostics === 'number') parts.push(plural(r.diagnostics, 'finding'));
    if (typeof r.files === 'number') parts.push(`in ${plural(r.files, 'file')}${typeof r.checked === 'number' && r.checked !== r.files ? ` (${r.checked} checked)` : ''}`);
    if (typeof r.errors === 'number' && r.errors > 0) parts.push(`${plural(r.errors, 'file')} could not be read`);
    if (r.cancelled === true) parts.push('cancelled');
    if (parts.length) return `gradwarden: ${what}: ${parts.join(', ')}.`;
  }
  if (typeof result === 'string' && result.trim()) return `gradwarden: ${result.trim()}`;
  return `gradwarden: ${what} done.`;
}
