// The timeline page of the server (`gradwarden.showTimeline`, self-contained HTML) made into a
// webview page: a Content-Security-Policy that allows only its inline style and our one script,
// and the script that asks the extension to reveal an event's source line. No `vscode` import.

/** Arguments of `gradwarden.openTimeline` (the hover link passes them; 0-based like LSP). */
export interface TimelineTarget {
  uri: string;
  line?: number;
  character?: number;
}

export function timelineCommandUri(command: string, target: TimelineTarget): string {
  return `command:${command}?${encodeURIComponent(JSON.stringify([target]))}`;
}

/** The hover's link to the picture (Markdown; the command must be trusted by the hover). */
export function timelineLink(command: string, target: TimelineTarget): string {
  return `[$(graph-line) Show timeline](${timelineCommandUri(command, target)} "Open the timeline picture of this finding beside the code")`;
}

/** Parse a `gradwarden.openTimeline` argument (from a hover link, a keybinding or the palette). */
export function parseTarget(arg: unknown): TimelineTarget | undefined {
  const a = Array.isArray(arg) ? arg[0] : arg;
  if (!a || typeof a !== 'object') return undefined;
  const r = a as Record<string, unknown>;
  if (typeof r.uri !== 'string') return undefined;
  return {
    uri: r.uri,
    line: typeof r.line === 'number' ? r.line : undefined,
    character: typeof r.character === 'number' ? r.character : undefined,
  };
}

// Clicking an event (an SVG link, a source line) reveals that line in the editor; the page's own
// anchors still scroll to the source excerpt.
const SCRIPT = `
(function () {
  const vscode = acquireVsCodeApi();
  document.addEventListener('click', (event) => {
    const el = event.target && event.target.closest ? event.target.closest('[data-file][data-line]') : null;
    if (!el) return;
    vscode.postMessage({ type: 'reveal', file: el.getAttribute('data-file'), line: Number(el.getAttribute('data-line')) });
  });
})();`;

export function webviewHtml(page: string, nonce: string, cspSource: string): string {
  const csp =
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; ` +
    `style-src ${cspSource} 'unsafe-inline'; img-src ${cspSource} data:; script-src 'nonce-${nonce}';">`;
  let html = page.includes('<head>') ? page.replace('<head>', `<head>\n${csp}`) : `${csp}\n${page}`;
  const script = `<script nonce="${nonce}">${SCRIPT}</script>`;
  html = html.includes('</body>') ? html.replace('</body>', `${script}\n</body>`) : `${html}\n${script}`;
  return html;
}

/** A reveal request posted by the page, checked (the page is ours, but its data is the user's). */
export function parseReveal(msg: unknown): { file: string; line: number } | undefined {
  if (!msg || typeof msg !== 'object') return undefined;
  const m = msg as Record<string, unknown>;
  if (m.type !== 'reveal' || typeof m.file !== 'string' || !m.file) return undefined;
  const line = Number(m.line);
  if (!Number.isInteger(line) || line < 1) return undefined;
  return { file: m.file, line };
}
