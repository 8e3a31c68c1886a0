// gradwarden for VS Code: the language client for `gradwarden serve` (bundled with the
// extension, run by the user's Python), the debug run, the workspace check, the timeline picture.
import * as vscode from 'vscode';

import { debugRunFile, WorkspaceChecker } from './commands';
import { PythonEnvironments } from './pythonExtension';
import { ServerController } from './server';
import { OPEN_TIMELINE, TimelinePanel } from './timeline';
import { StatusEntry } from './ui';

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('gradwarden', { log: true });
  const python = new PythonEnvironments(output);
  const ctl = new ServerController(context, output, python);
  controller = ctl;
  const checker = new WorkspaceChecker(ctl);
  const timeline = new TimelinePanel(ctl);
  context.subscriptions.push(
    output,
    python,
    ctl,
    checker,
    timeline,
    new StatusEntry(ctl),
    vscode.commands.registerCommand(OPEN_TIMELINE, (arg?: unknown) => timeline.open(arg)),
    vscode.commands.registerCommand('gradwarden.debugRunFile', (uri?: vscode.Uri) => debugRunFile(ctl, uri instanceof vscode.Uri ? uri : undefined)),
    vscode.commands.registerCommand('gradwarden.lintWorkspace', () => checker.run()),
    vscode.commands.registerCommand('gradwarden.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('gradwarden.restart', () => ctl.restart('"Restart server" command')),
  );
  output.info(`gradwarden extension ${context.extension.packageJSON.version} (VS Code ${vscode.version}); workspace ${vscode.workspace.isTrusted ? 'trusted' : 'NOT trusted: static analysis only'}`);
  await ctl.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
}
