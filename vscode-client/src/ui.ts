// The status-bar entry that offers the debug run when a file has autograd diagnostics (the code
// lens comes from the server: see the middleware in server.ts).
import * as vscode from 'vscode';

import { debugRunCandidates } from './diagnostics';
import { ServerController } from './server';

export const CONTEXT_HAS_DIAGNOSTICS = 'gradwarden.activeFileHasDiagnostics';

function candidatesFor(uri: vscode.Uri): vscode.Diagnostic[] {
  return debugRunCandidates(vscode.languages.getDiagnostics(uri));
}

export class StatusEntry implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('gradwarden.status', vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly ctl: ServerController) {
    this.item.name = 'gradwarden';
    this.disposables = [
      this.item,
      ctl.onDidChangeState(() => this.update()),
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
      vscode.languages.onDidChangeDiagnostics(() => this.update()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.update()),
    ];
    this.update();
  }

  update(): void {
    const doc = vscode.window.activeTextEditor?.document;
    const isPython = doc?.languageId === 'python';
    const count = doc && isPython ? candidatesFor(doc.uri).length : 0;
    void vscode.commands.executeCommand('setContext', CONTEXT_HAS_DIAGNOSTICS, count > 0);
    const state = this.ctl.state;
    if (state === 'failed') {
      this.item.text = '$(error) gradwarden';
      this.item.tooltip = this.ctl.lastError ?? 'gradwarden: the server is not running';
      this.item.command = 'gradwarden.showOutput';
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    } else if (state === 'starting') {
      this.item.text = '$(sync~spin) gradwarden';
      this.item.tooltip = 'gradwarden: starting the server';
      this.item.command = 'gradwarden.showOutput';
      this.item.backgroundColor = undefined;
    } else if (count > 0 && vscode.workspace.isTrusted && doc?.uri.scheme === 'file') {
      this.item.text = `$(debug-alt) gradwarden: ${count}`;
      this.item.tooltip = `${count} autograd diagnostic${count === 1 ? '' : 's'} in this file: click to debug-run it and confirm them`;
      this.item.command = { title: 'Debug run', command: 'gradwarden.debugRunFile', arguments: [doc.uri] };
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else {
      this.item.text = state === 'running' ? '$(check) gradwarden' : '$(circle-slash) gradwarden';
      const py = this.ctl.info ? ` with Python ${this.ctl.info.python} (${this.ctl.info.executable})` : '';
      this.item.tooltip = state === 'running' ? `gradwarden: running${py}` : `gradwarden: ${state}`;
      this.item.command = 'gradwarden.showOutput';
      this.item.backgroundColor = undefined;
    }
    if (isPython || state === 'failed') this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
