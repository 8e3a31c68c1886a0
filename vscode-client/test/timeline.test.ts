import assert from 'node:assert/strict';
import { test } from 'node:test';

import { findingAt } from '../src/diagnostics';
import { parseReveal, parseTarget, timelineCommandUri, timelineLink, webviewHtml } from '../src/timelineHtml';

const uri = 'file:///w/a.py';
const diag = (code: string, line: number, from: number, to: number, source = 'gradwarden', related: number[] = []) => ({
  source,
  code,
  message: 'm',
  range: { start: { line, character: from }, end: { line, character: to } },
  relatedInformation: related.map((l) => ({ message: 'r', location: { uri: { toString: () => uri }, range: { start: { line: l } } } })),
});

test('a finding under the cursor: its range, else one of its related lines in this document', () => {
  const diags = [diag('GW201', 10, 4, 10, 'gradwarden', [9, 12]), diag('GW001', 3, 0, 5), diag('reportX', 20, 0, 9, 'Pylance')];
  assert.equal(findingAt(diags, uri, 10, 6)?.code, 'GW201');
  assert.equal(findingAt(diags, uri, 10, 2), undefined, 'before the flagged range on its line: no');
  assert.equal(findingAt(diags, uri, 12, 0)?.code, 'GW201', 'the backward line of the finding');
  assert.equal(findingAt(diags, 'file:///w/other.py', 12, 0), undefined);
  assert.equal(findingAt(diags, uri, 3, 1), undefined, 'a parse error has no timeline');
  assert.equal(findingAt(diags, uri, 20, 1), undefined, "another tool's diagnostic");
});

test('the hover link runs gradwarden.openTimeline with the position', () => {
  const target = { uri, line: 10, character: 6 };
  const link = timelineLink('gradwarden.openTimeline', target);
  assert.match(link, /^\[\$\(graph-line\) Show timeline\]\(command:gradwarden\.openTimeline\?/);
  const encoded = timelineCommandUri('gradwarden.openTimeline', target).split('?')[1];
  assert.deepEqual(parseTarget(JSON.parse(decodeURIComponent(encoded))), target);
  assert.equal(parseTarget([{ line: 1 }]), undefined);
  assert.deepEqual(parseTarget({ uri }), { uri, line: undefined, character: undefined });
});

test('the webview page: a CSP with a nonce, one script, the page kept', () => {
  const page = '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>x{}</style></head><body><svg></svg></body></html>';
  const html = webviewHtml(page, 'N0nce', 'vscode-resource:');
  assert.match(html, /<head>\n<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src vscode-resource: 'unsafe-inline'; img-src vscode-resource: data:; script-src 'nonce-N0nce';">/);
  assert.equal((html.match(/<script nonce="N0nce">/g) ?? []).length, 1);
  assert.ok(html.includes('<svg></svg>') && html.indexOf('<script') > html.indexOf('<svg>'));
  assert.deepEqual(parseReveal({ type: 'reveal', file: '/w/a.py', line: 3 }), { file: '/w/a.py', line: 3 });
  assert.equal(parseReveal({ type: 'reveal', file: '/w/a.py', line: 0 }), undefined);
  assert.equal(parseReveal({ type: 'other', file: '/w/a.py', line: 3 }), undefined);
});
