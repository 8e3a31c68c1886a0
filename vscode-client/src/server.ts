// The language client: which Python runs `gradwarden serve`, start/stop/restart, crash limit.
import { execFile } from 'child_process';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  DidChangeConfigurationNotification,
  ErrorAction,
  ErrorHandlerResult,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import {
  Candidate,
  chooseInterpreter,
  describeSource,
  fallbackMessage,
  interpreterCandidates,
  noInterpreterMessage,
  ProbeInfo,
  probeInterpreter,
  Runner,
} from './interpreter';
import { findingAt, lensTitle } from './diagnostics';
import { CMD_DEBUG_RUN, SERVER_NAME } from './protocol';
import { timelineLink } from './timelineHtml';
import { RestartPolicy } from './restartPolicy';
import { ClientSettings, readSettings, toServerSettings } from './settings';
import { PythonEnvironments } from './pythonExtension';

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed' | 'disabled';

/** Settings whose change needs a new server process (the rest go through didChangeConfiguration). */
const RESTART_KEYS = ['gradwarden.enable', 'gradwarden.interpreter', 'gradwarden.importStrategy'];

export function getSettings(scope?: vscode.ConfigurationScope): ClientSettings {
  const cfg = vscode.workspace.getConfiguration('gradwarden', scope);
  return readSettings((key) => cfg.get(key));
}

export function nodeRunner(env: NodeJS.ProcessEnv): Runner {
  return (command, args, timeoutMs) =>
    new Promise((resolve) => {
      execFile(command, args, { env, timeout: timeoutMs, windowsHide: true, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
        const out = { stdout: String(stdout ?? ''), stderr: String(stderr ?? '') };
        if (!error) return resolve({ code: 0, ...out });
        const err = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string; code?: unknown };
        if (typeof err.code === 'string') return resolve({ code: null, ...out, spawnError: { code: err.code, message: err.message } });
        if (err.killed) return resolve({ code: null, ...out, timedOut: true });
        resolve({ code: typeof err.code === 'number' ? err.code : null, ...out });
      });
    });
}

export class ServerController implements vscode.Disposable {
  client?: LanguageClient;
  info?: ProbeInfo;
  candidate?: Candidate;
  state: ServerState = 'stopped';
  lastError?: string;
  private readonly policy = new RestartPolicy();
  private queue: Promise<unknown> = Promise.resolve();
  private stopping = false;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
    private readonly python: PythonEnvironments,
  ) {
    this.disposables.push(
      this.stateEmitter,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.restart('the workspace is now trusted')),
      this.python.onDidChange(() => {
        if (!getSettings(this.folder()?.uri).interpreter) void this.restart("the Python extension's interpreter changed");
      }),
    );
  }

  get launcher(): string {
    return this.context.asAbsolutePath(path.join('vscode-client', 'tool', 'launch.py'));
  }

  private folder(): vscode.WorkspaceFolder | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && vscode.workspace.getWorkspaceFolder(active)) || vscode.workspace.workspaceFolders?.[0];
  }

  private setState(state: ServerState, error?: string): void {
    this.state = state;
    this.lastError = error;
    this.stateEmitter.fire(state);
  }

  /** The environment of the probe and of the server (the import strategy travels in it). */
  env(settings: ClientSettings): NodeJS.ProcessEnv {
    return { ...process.env, GRADWARDEN_IMPORT_STRATEGY: settings.importStrategy, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' };
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const next = this.queue.then(job, job);
    this.queue = next.catch(() => undefined);
    return next;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(reason: string): Promise<void> {
    return this.enqueue(async () => {
      this.output.info(`restarting the server: ${reason}`);
      this.policy.reset();
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  /** The running client, after any start or restart in flight. */
  async ready(): Promise<LanguageClient | undefined> {
    await this.queue;
    return this.client && this.client.state === State.Running ? this.client : undefined;
  }

  serverCommands(): string[] {
    const provider = this.client?.initializeResult?.capabilities.executeCommandProvider;
    return provider?.commands ?? [];
  }

  /** Re-probe the interpreter (e.g. torch was installed since the server started). */
  async reprobe(): Promise<ProbeInfo | undefined> {
    if (!this.candidate) return this.info;
    const outcome = await probeInterpreter(this.candidate.command, this.launcher, nodeRunner(this.env(getSettings(this.folder()?.uri))));
    if (outcome.ok) this.info = outcome.info;
    return this.info;
  }

  private async resolveInterpreter(settings: ClientSettings): Promise<{ candidate: Candidate; info: ProbeInfo } | undefined> {
    const folder = this.folder();
    const trusted = vscode.workspace.isTrusted;
    // In an untrusted workspace the Python extension's choice may be an interpreter inside that
    // workspace (a .venv it found): running it would run the workspace's code. Not used then.
    const fromPythonExtension = trusted ? await this.python.interpreterFor(folder?.uri) : undefined;
    const candidates = interpreterCandidates({
      setting: settings.interpreter,
      pythonExtension: fromPythonExtension,
      platform: process.platform,
      ctx: { workspaceFolder: folder?.uri.fsPath, home: os.homedir(), env: process.env },
    });
    this.output.info(`interpreter candidates: ${candidates.map((c) => `${c.command} (${describeSource(c.source)})`).join(', ')}`);
    const choice = await chooseInterpreter(candidates, this.launcher, nodeRunner(this.env(settings)));
    for (const f of choice.failures) this.output.warn(`${f.reason} (${describeSource(f.candidate.source)})`);
    if (!choice.chosen) {
      const message = noInterpreterMessage(choice.failures);
      this.output.error(message);
      this.setState('failed', message);
      void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((pick) => {
        if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'gradwarden.interpreter');
        if (pick === 'Show Output') this.output.show(true);
      });
      return undefined;
    }
    const warning = fallbackMessage(choice);
    if (warning) {
      this.output.warn(warning);
      void vscode.window.showWarningMessage(warning);
    }
    return choice.chosen;
  }

  private async doStart(): Promise<void> {
    const settings = getSettings(this.folder()?.uri);
    if (!settings.enable) {
      this.output.info('gradwarden.enable is false: the server is not started');
      this.setState('disabled');
      return;
    }
    this.setState('starting');
    const chosen = await this.resolveInterpreter(settings);
    if (!chosen) return;
    this.candidate = chosen.candidate;
    this.info = chosen.info;
    const { info } = chosen;
    this.output.info(
      `using ${info.executable} (Python ${info.python}, from ${describeSource(chosen.candidate.source)}); ` +
        `gradwarden ${info.gradwarden} (${info.gradwardenFrom}); torch ${info.torch ? info.torchVersion ?? 'installed' : 'not installed (the debug run needs it)'}`,
    );
    const serverOptions: ServerOptions = {
      command: info.executable || chosen.candidate.command,
      args: [this.launcher, 'serve'],
      transport: TransportKind.stdio,
      options: { cwd: this.folder()?.uri.fsPath, env: this.env(settings) },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
        { scheme: 'vscode-notebook-cell', language: 'python' },
        { notebook: { notebookType: 'jupyter-notebook' }, language: 'python' },
      ],
      outputChannel: this.output,
      traceOutputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: { settings: toServerSettings(settings) },
      errorHandler: {
        error: (): ErrorHandlerResult => ({ action: ErrorAction.Continue }),
        closed: (): CloseHandlerResult => this.onClosed(),
      },
      middleware: {
        // The hover on a finding links to its timeline picture (gradwarden.openTimeline, a
        // command of this extension: the link is trusted for that command only).
        provideHover: async (document, position, token, next) => {
          const hover = await next(document, position, token);
          if (!hover || !findingAt(vscode.languages.getDiagnostics(document.uri), document.uri.toString(), position.line, position.character)) {
            return hover;
          }
          const link = new vscode.MarkdownString(
            timelineLink('gradwarden.openTimeline', { uri: document.uri.toString(), line: position.line, character: position.character }),
            true,
          );
          link.isTrusted = { enabledCommands: ['gradwarden.openTimeline'] };
          return new vscode.Hover([...hover.contents, link], hover.range);
        },
        // The server's lens ("Confirm with a debug run") runs the extension's own command, which
        // saves the file, checks the workspace trust and torch, and shows the run's progress.
        provideCodeLenses: async (document, token, next) => {
          const lenses = (await next(document, token)) ?? [];
          if (!vscode.workspace.isTrusted || document.uri.scheme !== 'file' || !getSettings(document.uri).codeLens.enable) return [];
          return lenses.map((lens) =>
            lens.command?.command === CMD_DEBUG_RUN
              ? new vscode.CodeLens(lens.range, { title: lensTitle(lens.command.title), command: 'gradwarden.debugRunFile', arguments: [document.uri] })
              : lens,
          );
        },
        // vscode-languageclient also registers the server's commands as VS Code commands: the
        // debug run (the only one that executes user code) is refused in an untrusted workspace
        // whoever invokes it.
        executeCommand: async (command, args, next) => {
          if (command === CMD_DEBUG_RUN && !vscode.workspace.isTrusted) {
            void vscode.window.showWarningMessage('gradwarden: the debug run is disabled in an untrusted workspace.');
            return undefined;
          }
          return next(command, args);
        },
        workspace: {
          // vscode-languageclient would send the raw `gradwarden.*` settings (the extension's
          // own keys included) when the server registers for them; the server gets the mapped
          // settings from onConfigurationChanged below instead.
          didChangeConfiguration: async () => undefined,
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) return answer;
            return params.items.map((item, i) => {
              if (item.section !== SERVER_NAME) return answer[i];
              const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
              return toServerSettings(getSettings(scope));
            });
          },
        },
      },
    };
    const client = new LanguageClient(SERVER_NAME, 'gradwarden', serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      const message = `gradwarden: the server (${info.executable}) failed to start: ${err instanceof Error ? err.message : String(err)}`;
      this.output.error(message);
      this.setState('failed', message);
      void vscode.window.showErrorMessage(message, 'Show Output').then((pick) => pick && this.output.show(true));
      return;
    }
    this.output.info(`server running (commands: ${this.serverCommands().join(', ') || 'none'})`);
    this.setState('running');
  }

  private onClosed(): CloseHandlerResult {
    if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
    if (this.policy.recordCrash()) {
      this.output.warn(`the server exited unexpectedly; restarting it (${this.policy.recent} of at most ${this.policy.max} within 3 minutes)`);
      this.setState('starting');
      setTimeout(() => {
        if (this.client?.state === State.Running) this.setState('running');
      }, 3000);
      return { action: CloseAction.Restart, handled: true };
    }
    const message = `gradwarden: the server crashed ${this.policy.recent} times within 3 minutes and was not restarted again. See the output, then use "gradwarden: Restart server".`;
    this.output.error(message);
    this.setState('failed', message);
    void vscode.window.showErrorMessage(message, 'Restart Server', 'Show Output').then((pick) => {
      if (pick === 'Restart Server') void this.restart('requested after crashes');
      if (pick === 'Show Output') this.output.show(true);
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      if (client.needsStop()) await client.stop(5000);
    } catch (err) {
      this.output.warn(`stopping the server: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await client.dispose().catch(() => undefined);
      this.stopping = false;
      this.setState('stopped');
    }
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (RESTART_KEYS.some((key) => e.affectsConfiguration(key))) {
      void this.restart('the interpreter settings changed');
      return;
    }
    if (e.affectsConfiguration(SERVER_NAME) && this.client?.state === State.Running) {
      const settings = { [SERVER_NAME]: toServerSettings(getSettings(this.folder()?.uri)) };
      void this.client.sendNotification(DidChangeConfigurationNotification.type, { settings }).catch((err) =>
        this.output.warn(`didChangeConfiguration: ${String(err)}`),
      );
    }
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}
