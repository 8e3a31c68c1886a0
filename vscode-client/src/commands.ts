// "Debug run (confirm diagnostics)" and "Check workspace".
import { ChildProcess, execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, State } from 'vscode-languageclient/node';

import { torchMissingMessage } from './interpreter';
import { CMD_CHECK_WORKSPACE, CMD_DEBUG_RUN } from './protocol';
import { getSettings, ServerController } from './server';
import { toCliArgs } from './settings';
import { CliDiagnostic, cliSeverity, summarizeResult } from './results';

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function serverOrExplain(ctl: ServerController): Promise<boolean> {
  const client = await ctl.ready();
  if (client) return true;
  const why = ctl.lastError ?? (ctl.state === 'disabled' ? 'gradwarden.enable is false' : `it is ${ctl.state}`);
  const pick = await vscode.window.showErrorMessage(`gradwarden: the server is not running (${why}).`, 'Restart Server', 'Show Output');
  if (pick === 'Restart Server') await ctl.restart('requested');
  if (pick === 'Show Output') ctl.output.show(true);
  return false;
}

export async function debugRunFile(ctl: ServerController, target?: vscode.Uri): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      'gradwarden: the debug run executes your code, so it is disabled in an untrusted workspace (Manage Workspace Trust to enable it).',
    );
    return;
  }
  const doc = target ? await vscode.workspace.openTextDocument(target) : vscode.window.activeTextEditor?.document;
  if (!doc || doc.languageId !== 'python') {
    void vscode.window.showInformationMessage('gradwarden: open a Python file to debug-run it.');
    return;
  }
  if (doc.uri.scheme !== 'file') {
    void vscode.window.showInformationMessage(
      doc.uri.scheme === 'vscode-notebook-cell'
        ? 'gradwarden: the debug run runs Python files; export the notebook as a .py file to debug-run it.'
        : 'gradwarden: save the file first: the debug run runs the file on disk.',
    );
    return;
  }
  if (doc.isDirty && !(await doc.save())) {
    void vscode.window.showWarningMessage('gradwarden: the file could not be saved, so it was not run.');
    return;
  }
  if (!(await serverOrExplain(ctl))) return;
  let info = ctl.info;
  if (info && !info.torch) info = await ctl.reprobe(); // maybe installed since the server started
  if (info && !info.torch) {
    const pick = await vscode.window.showErrorMessage(torchMissingMessage(info), 'Open Settings', 'Show Output');
    if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'gradwarden.interpreter');
    if (pick === 'Show Output') ctl.output.show(true);
    return;
  }
  if (!ctl.serverCommands().includes(CMD_DEBUG_RUN)) {
    void vscode.window.showErrorMessage(`gradwarden: this server (${ctl.info?.gradwarden ?? '?'}) has no debug run (${CMD_DEBUG_RUN}).`);
    return;
  }
  const settings = getSettings(doc.uri);
  const name = path.basename(doc.uri.fsPath);
  ctl.output.info(`debug run of ${doc.uri.fsPath} on ${settings.debugRun.device}, timeout ${settings.debugRun.timeout}s`);
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `gradwarden: debug run of ${name}`, cancellable: true },
    async (progress, token) => {
      progress.report({ message: `running on ${settings.debugRun.device} (stops after ${settings.debugRun.timeout} s)…` });
      const client = await ctl.ready();
      if (!client) return;
      try {
        const result = await client.sendRequest(
          ExecuteCommandRequest.type,
          {
            command: CMD_DEBUG_RUN,
            arguments: [{ uri: doc.uri.toString(), device: settings.debugRun.device, timeout: settings.debugRun.timeout }],
          },
          token,
        );
        const summary = summarizeResult(result, name);
        ctl.output.info(`debug run result: ${JSON.stringify(result)}`);
        void vscode.window.showInformationMessage(summary);
      } catch (err) {
        if (token.isCancellationRequested) {
          ctl.output.info('debug run cancelled');
          void vscode.window.showInformationMessage(`gradwarden: debug run of ${name} cancelled.`);
          return;
        }
        ctl.output.error(`debug run failed: ${errorText(err)}`);
        const pick = await vscode.window.showErrorMessage(`gradwarden: debug run of ${name} failed: ${errorText(err)}`, 'Show Output');
        if (pick) ctl.output.show(true);
      }
    },
  );
}

/** Workspace diagnostics from the CLI, for the files the server does not publish (not open). */
export class WorkspaceChecker implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection('gradwarden-workspace');
  private readonly disposables: vscode.Disposable[] = [
    this.collection,
    vscode.workspace.onDidOpenTextDocument((doc) => this.collection.delete(doc.uri)),
  ];

  constructor(private readonly ctl: ServerController) {}

  async run(): Promise<void> {
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (!folders.length) {
      void vscode.window.showInformationMessage('gradwarden: open a folder to check a workspace.');
      return;
    }
    if (!(await serverOrExplain(this.ctl))) return;
    const client = await this.ctl.ready();
    if (client && this.ctl.serverCommands().includes(CMD_CHECK_WORKSPACE)) {
      // The server publishes the diagnostics and reports progress itself ($/progress).
      try {
        const result = await client.sendRequest(ExecuteCommandRequest.type, { command: CMD_CHECK_WORKSPACE, arguments: [] });
        this.ctl.output.info(`workspace check: ${JSON.stringify(result)}`);
        void vscode.window.showInformationMessage(summarizeResult(result, 'the workspace'));
      } catch (err) {
        void vscode.window.showErrorMessage(`gradwarden: workspace check failed: ${errorText(err)}`);
      }
      return;
    }
    await this.runCli(folders);
  }

  private async runCli(folders: readonly vscode.WorkspaceFolder[]): Promise<void> {
    const info = this.ctl.info;
    if (!info) return;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'gradwarden: checking the workspace', cancellable: true },
      async (progress, token) => {
        const byFile = new Map<string, vscode.Diagnostic[]>();
        let total = 0;
        for (const folder of folders) {
          if (token.isCancellationRequested) break;
          progress.report({ message: folder.name });
          const settings = getSettings(folder.uri);
          const args = [this.ctl.launcher, 'check', '--output-format', 'json', '--exit-zero', '--no-progress', ...toCliArgs(settings), '.'];
          let proc: ChildProcess | undefined;
          const stdout = await new Promise<string>((resolve, reject) => {
            proc = execFile(info.executable, args, { cwd: folder.uri.fsPath, env: this.ctl.env(settings), maxBuffer: 256 * 1024 * 1024 }, (err, out, errOut) => {
              if (err && !token.isCancellationRequested) reject(new Error(`${err.message}\n${String(errOut).slice(-2000)}`));
              else resolve(String(out));
            });
            token.onCancellationRequested(() => proc?.kill());
          }).catch((err) => {
            void vscode.window.showErrorMessage(`gradwarden: checking ${folder.name} failed: ${errorText(err)}`);
            return '';
          });
          if (!stdout.trim()) continue;
          let items: CliDiagnostic[] = [];
          try {
            items = JSON.parse(stdout) as CliDiagnostic[];
          } catch (err) {
            this.ctl.output.error(`unexpected output of gradwarden check: ${errorText(err)}`);
            continue;
          }
          for (const item of items) {
            const file = path.resolve(folder.uri.fsPath, item.filename);
            const start = new vscode.Position(Math.max(0, item.location.row - 1), Math.max(0, item.location.column - 1));
            const endLoc = item.end_location ?? item.location;
            const end = new vscode.Position(Math.max(0, endLoc.row - 1), Math.max(0, endLoc.column - 1));
            const d = new vscode.Diagnostic(new vscode.Range(start, end), item.message, cliSeverity(item.severity));
            d.source = 'gradwarden';
            d.code = item.code;
            if (item.related?.length) {
              d.relatedInformation = item.related.map((r) => {
                const rs = new vscode.Position(Math.max(0, r.location.row - 1), Math.max(0, r.location.column - 1));
                return new vscode.DiagnosticRelatedInformation(
                  new vscode.Location(vscode.Uri.file(path.resolve(folder.uri.fsPath, r.filename ?? item.filename)), rs),
                  r.message,
                );
              });
            }
            byFile.set(file, [...(byFile.get(file) ?? []), d]);
            total++;
          }
        }
        if (token.isCancellationRequested) return;
        const open = new Set(vscode.workspace.textDocuments.map((doc) => doc.uri.fsPath));
        this.collection.clear();
        for (const [file, diags] of byFile) if (!open.has(file)) this.collection.set(vscode.Uri.file(file), diags);
        void vscode.window.showInformationMessage(`gradwarden: ${total} finding${total === 1 ? '' : 's'} in ${byFile.size} file${byFile.size === 1 ? '' : 's'} (see Problems).`);
      },
    );
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

export function isRunning(ctl: ServerController): boolean {
  return ctl.client?.state === State.Running;
}
