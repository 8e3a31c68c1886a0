// The interpreter selected in Microsoft's Python extension, through its public API
// (@vscode/python-extension), when that extension is installed.
import { PythonExtension } from '@vscode/python-extension';
import * as vscode from 'vscode';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

export class PythonEnvironments implements vscode.Disposable {
  private api?: PythonExtension;
  private subscription?: vscode.Disposable;
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  private async load(): Promise<PythonExtension | undefined> {
    if (this.api) return this.api;
    if (!vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) return undefined;
    try {
      this.api = await PythonExtension.api();
      this.subscription = this.api.environments.onDidChangeActiveEnvironmentPath(() => this.emitter.fire());
      return this.api;
    } catch (err) {
      this.log.warn(`the Python extension's API is not available: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  /** The executable of the active environment for `resource`, if the Python extension has one. */
  async interpreterFor(resource?: vscode.Uri): Promise<string | undefined> {
    const api = await this.load();
    if (!api) return undefined;
    try {
      const active = api.environments.getActiveEnvironmentPath(resource);
      const resolved = await api.environments.resolveEnvironment(active);
      return resolved?.executable.uri?.fsPath ?? (active.path || undefined);
    } catch (err) {
      this.log.warn(`asking the Python extension for the interpreter: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  dispose(): void {
    this.subscription?.dispose();
    this.emitter.dispose();
  }
}
