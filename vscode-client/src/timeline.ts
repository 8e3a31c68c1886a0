// "Show timeline": the picture of the finding under the cursor (the server's
// `gradwarden.showTimeline`, one self-contained HTML page) in a webview beside the code, reused
// from one finding to the next; clicking an event reveals its line.
import * as crypto from 'crypto';
import * as path from 'path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest } from 'vscode-languageclient/node';

import { CMD_SHOW_TIMELINE } from './protocol';
import { ServerController } from './server';
import { parseReveal, parseTarget, TimelineTarget, webviewHtml } from './timelineHtml';

export const OPEN_TIMELINE = 'gradwarden.openTimeline';

interface ShowTimelineResult {
  path: string;
  findings: number;
  title: string;
  html?: string;
}

export class TimelinePanel implements vscode.Disposable {
  private panel?: vscode.WebviewPanel;
  private sourceColumn: vscode.ViewColumn = vscode.ViewColumn.One;

  constructor(private readonly ctl: ServerController) {}

  private targetFromEditor(): TimelineTarget | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') return undefined;
    const pos = editor.selection.active;
    return { uri: editor.document.uri.toString(), line: pos.line, character: pos.character };
  }

  async open(arg?: unknown): Promise<void> {
    const target = parseTarget(arg) ?? this.targetFromEditor();
    if (!target) {
      void vscode.window.showInformationMessage('gradwarden: put the cursor on a finding in a Python file to see its timeline.');
      return;
    }
    const client = await this.ctl.ready();
    if (!client || !this.ctl.serverCommands().includes(CMD_SHOW_TIMELINE)) {
      void vscode.window.showErrorMessage(`gradwarden: the server is not running, or has no ${CMD_SHOW_TIMELINE}.`);
      return;
    }
    const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === target.uri);
    if (editor?.viewColumn) this.sourceColumn = editor.viewColumn;
    const position = target.line !== undefined ? { line: target.line, character: target.character ?? 0 } : undefined;
    let result: ShowTimelineResult;
    try {
      result = (await client.sendRequest(ExecuteCommandRequest.type, {
        command: CMD_SHOW_TIMELINE,
        arguments: [{ uri: target.uri, position, html: true }],
      })) as ShowTimelineResult;
    } catch (err) {
      void vscode.window.showErrorMessage(`gradwarden: the timeline could not be drawn: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (!result || typeof result.html !== 'string') return;
    this.ctl.output.info(`timeline: ${result.findings} finding(s) drawn, also written to ${result.path}`);
    const panel = this.ensurePanel();
    panel.title = result.title || 'gradwarden timeline';
    const nonce = crypto.randomBytes(16).toString('base64');
    panel.webview.html = webviewHtml(result.html, nonce, panel.webview.cspSource);
    panel.reveal(vscode.ViewColumn.Beside, true);
  }

  private ensurePanel(): vscode.WebviewPanel {
    if (this.panel) return this.panel;
    const panel = vscode.window.createWebviewPanel('gradwarden.timeline', 'gradwarden timeline',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, enableFindWidget: true, retainContextWhenHidden: false, localResourceRoots: [] });
    panel.webview.onDidReceiveMessage((msg) => void this.reveal(msg));
    panel.onDidDispose(() => {
      if (this.panel === panel) this.panel = undefined;
    });
    this.panel = panel;
    return panel;
  }

  private async reveal(msg: unknown): Promise<void> {
    const where = parseReveal(msg);
    if (!where || where.file.toLowerCase().endsWith('.ipynb') || !path.isAbsolute(where.file)) return;
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(where.file));
      const line = Math.min(where.line - 1, Math.max(doc.lineCount - 1, 0));
      const range = doc.lineAt(line).range;
      await vscode.window.showTextDocument(doc, { viewColumn: this.sourceColumn, selection: new vscode.Selection(range.start, range.end), preserveFocus: false });
    } catch (err) {
      this.ctl.output.warn(`timeline: cannot reveal ${where.file}:${where.line}: ${String(err)}`);
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
