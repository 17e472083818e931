/**
 * The sidecar process and its language client: find a Python, start, restart, settings, typed
 * requests. The sidecar runs as `<python> bundled/tool/launch.py serve`, from the libraries the
 * .vsix bundles (bundled/libs) unless `dsh.importStrategy` says otherwise.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  CloseAction,
  type CloseHandlerResult,
  DidChangeConfigurationNotification,
  ErrorAction,
  type ErrorHandler,
  type ErrorHandlerResult,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { askCompactPaths, expandAnswer } from './compactPaths';
import { CONTEXT_DID_CHANGE, type NotificationMethod, type RequestMethod, SETTINGS_DID_CHECK } from './methods';
import type {
  ContextDidChangeParams,
  NotificationParams,
  RequestParams,
  RequestResult,
  SettingsDidCheckParams,
} from './protocol';
import {
  describeMissing,
  expandPythonPath,
  findInterpreter,
  type FoundInterpreter,
  interpreterCandidates,
  probeWithLauncher,
} from './python/interpreter';
import { onPythonInterpreterChanged, selectedPythonInterpreter } from './python/pythonExtension';
import { readClientSettings, readServerSettings } from './settings';
import type { SettingRefusals } from './settingRefusals';
import type { StartupProblem, StartupProblems } from './startupProblem';

export class SidecarNotRunningError extends Error {
  constructor(reason?: string) {
    super(
      reason !== undefined
        ? `The DSH sidecar is not running: ${reason}`
        : 'The DSH sidecar is not running (see the "DSH Sidecar" output, or run "DSH: Restart Sidecar").',
    );
  }
}

/** A start that failed for a reason already reported to the user. */
export class SidecarStartError extends Error {}

/**
 * The narrow surface the chat, inspector and status bar use (fakes implement it in tests).
 * Typed by the method tables of protocol.ts: the wrong params, or reading a result as the wrong
 * shape, is a compile error.
 */
export interface Sidecar {
  request<M extends RequestMethod>(
    method: M,
    params: RequestParams<M>,
    token?: vscode.CancellationToken,
  ): Promise<RequestResult<M>>;
  notify<M extends NotificationMethod>(method: M, params: NotificationParams<M>): Promise<void>;
}

/** The client's own notifications go to the output channel only; StartupProblems tells the user. */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
  }
}

/** Crashes within this window count towards giving up. */
const CRASH_WINDOW_MS = 3 * 60 * 1000;
const MAX_RESTARTS = 3;

export class SidecarClient implements Sidecar, vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private interpreter: FoundInterpreter | undefined;
  private pythonWatch: vscode.Disposable | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly clientDisposables: vscode.Disposable[] = [];
  private readonly didStart = new vscode.EventEmitter<void>();
  private readonly contextDidChange = new vscode.EventEmitter<ContextDidChangeParams>();

  /** Fires each time a sidecar process is up, including after a restart (sessions must be reopened). */
  readonly onDidStart = this.didStart.event;
  /** The server's `dsh/context/didChange`: a session's pending inbox changed. */
  readonly onContextDidChange = this.contextDidChange.event;

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly extensionUri: vscode.Uri,
    private readonly problems: StartupProblems,
    /** The keys the running sidecar refused (it runs with their defaults or previous values). */
    readonly refusals?: SettingRefusals,
  ) {
    this.disposables.push(
      this.didStart,
      this.contextDidChange,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
    );
  }

  get isRunning(): boolean {
    return this.client?.isRunning() ?? false;
  }

  /**
   * Whether the running sidecar implements `method` (its `initialize` result lists its dsh/
   * methods). A sidecar from an older install (dsh.importStrategy=fromEnvironment) may lack newer
   * ones; the UI leaves out what it cannot do.
   */
  supports(method: string): boolean {
    const experimental = this.client?.initializeResult?.capabilities.experimental as
      | { dsh?: { methods?: unknown } }
      | undefined;
    const methods = experimental?.dsh?.methods;
    return Array.isArray(methods) && methods.includes(method);
  }

  /** The interpreter the running (or last started) sidecar uses. */
  get python(): FoundInterpreter | undefined {
    return this.interpreter;
  }

  /** Start the sidecar if it is not running; resolves once it answered `initialize`. */
  start(options: { userAsked?: boolean } = {}): Promise<void> {
    this.starting ??= this.doStart(options.userAsked === true).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(options: { userAsked?: boolean } = {}): Promise<void> {
    await this.stop();
    await this.start(options);
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    void vscode.commands.executeCommand('setContext', 'dsh.sidecarRunning', false);
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    if (client !== undefined && client.needsStop()) {
      await client.stop(5000).catch((err: unknown) => this.log(`stopping the sidecar failed: ${String(err)}`));
    }
  }

  async request<M extends RequestMethod>(
    method: M,
    params: RequestParams<M>,
    token?: vscode.CancellationToken,
  ): Promise<RequestResult<M>> {
    const client = await this.ready();
    // dsh/scopes and dsh/context/preview go out asking for compact paths and come back whole
    // (compactPaths.ts): the one place they are sent, so no caller sees the compact shape.
    const sent = askCompactPaths(method, params);
    const answer: unknown =
      token === undefined ? await client.sendRequest(method, sent) : await client.sendRequest(method, sent, token);
    return expandAnswer(method, answer);
  }

  async notify<M extends NotificationMethod>(method: M, params: NotificationParams<M>): Promise<void> {
    const client = await this.ready();
    await client.sendNotification(method, params);
  }

  dispose(): void {
    void this.stop();
    this.pythonWatch?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private async ready(): Promise<LanguageClient> {
    if (this.starting !== undefined) await this.starting.catch(() => undefined);
    const client = this.client;
    if (client === undefined || !client.isRunning()) throw new SidecarNotRunningError(this.problems.current?.message);
    return client;
  }

  private launcherPath(): string {
    return vscode.Uri.joinPath(this.extensionUri, 'bundled', 'tool', 'launch.py').fsPath;
  }

  /** Find a usable Python (reporting the one problem if there is none). */
  private async findPython(userAsked: boolean): Promise<FoundInterpreter> {
    const settings = readClientSettings(vscode.workspace.getConfiguration('dsh'));
    const folder = vscode.workspace.workspaceFolders?.[0];
    const explicit =
      settings.pythonPath !== undefined ? expandPythonPath(settings.pythonPath, folder?.uri.fsPath) : undefined;
    const fromExtension =
      explicit === undefined ? await selectedPythonInterpreter(folder?.uri, (m) => this.log(m)) : undefined;
    const candidates = interpreterCandidates(explicit, fromExtension);
    const search = await findInterpreter(candidates, probeWithLauncher(this.launcherPath(), settings.importStrategy));
    for (const r of search.kind === 'missing' ? search.rejected : []) {
      this.log(`not using ${r.candidate.command} (${r.candidate.source}): ${r.problem}`);
    }
    if (search.kind === 'found') return search;
    const problem: StartupProblem = {
      message: `${describeMissing(search)} Set dsh.pythonPath to a Python 3.11+ interpreter${
        search.explicit ? '' : ', or select one with the Python extension'
      }.`,
      setting: 'dsh.pythonPath',
    };
    this.problems.report(problem, { force: userAsked });
    throw new SidecarStartError(problem.message);
  }

  private async doStart(userAsked: boolean): Promise<void> {
    if (this.client?.isRunning()) return;
    await this.stop();
    await this.watchPythonExtension();
    const python = await this.findPython(userAsked);
    this.interpreter = python;
    this.refusals?.clear(); // a new process reports its own refusals after `initialized`
    const { importStrategy } = readClientSettings(vscode.workspace.getConfiguration('dsh'));
    const launcher = this.launcherPath();
    const serverOptions: ServerOptions = {
      command: python.command,
      args: [launcher, '--import-strategy', importStrategy, 'serve'],
      // Never a workspace folder (the client's default): the sidecar must not import from there.
      options: { cwd: path.dirname(launcher), env: process.env },
    };
    let initFailure: { message: string; settings: boolean } | undefined;
    const clientOptions: LanguageClientOptions = {
      // Every file on disk: opening, editing, saving, creating, renaming and deleting files are
      // the touches the sidecar turns into instruction updates.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => readServerSettings(vscode.workspace.getConfiguration('dsh')),
      errorHandler: this.errorHandler(),
      middleware: {
        workspace: {
          // If the server pulls `workspace/configuration` for section `dsh`, answer with the
          // settings tree rather than the raw section (which holds client-only keys it would refuse).
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) return answers;
            return params.items.map((item, i) =>
              item.section === 'dsh' ? readServerSettings(vscode.workspace.getConfiguration('dsh')) : answers[i],
            );
          },
        },
      },
      initializationFailedHandler: (error) => {
        const code = (error as { data?: { code?: unknown } } | undefined)?.data?.code;
        initFailure = {
          message: error instanceof Error ? error.message : String(error),
          settings: code === 'invalid-config' || code === 'SESSION_REFERENCE_INVALID_CONFIG',
        };
        return false; // retrying with the same settings would fail the same way
      },
    };
    const client = new QuietLanguageClient('dsh', 'DSH Sidecar', serverOptions, clientOptions);
    this.clientDisposables.push(
      client.onNotification(CONTEXT_DID_CHANGE, (params: ContextDidChangeParams) => this.contextDidChange.fire(params)),
      client.onNotification(SETTINGS_DID_CHECK, (params: SettingsDidCheckParams) => this.refusals?.update(params.refused)),
      client.onDidChangeState((e) => {
        // Also covers the client's own automatic restart after a crash.
        if (e.newState === State.Running && this.client === client) {
          this.problems.clear();
          void vscode.commands.executeCommand('setContext', 'dsh.sidecarRunning', true);
          this.didStart.fire();
        }
      }),
    );
    this.client = client;
    const source = python.source === 'setting' ? 'dsh.pythonPath' : python.source === 'python-extension' ? 'the Python extension' : 'PATH';
    this.log(
      `starting ${python.command} (Python ${python.probe.version.join('.')} from ${source}) with the sidecar ` +
        `${python.probe.sidecar?.version ?? '?'} from ${python.probe.sidecar?.path ?? '?'}`,
    );
    try {
      await client.start();
    } catch (err) {
      const reason = initFailure?.message ?? (err instanceof Error ? err.message : String(err));
      const settingsProblem = initFailure?.settings === true;
      this.problems.report(
        {
          message: settingsProblem
            ? `the sidecar refused its settings: ${reason}`
            : `the sidecar (${python.command}) did not start: ${reason}`,
          setting: settingsProblem ? '@ext:dsh-sidecar.dsh-sidecar' : 'dsh.pythonPath',
        },
        { force: userAsked },
      );
      throw new SidecarStartError(reason);
    }
  }

  /** Restart a few times after crashes, then give up with one notification. */
  private errorHandler(): ErrorHandler {
    const crashes: number[] = [];
    return {
      error: (_error, _message, count): ErrorHandlerResult => ({
        action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown,
        handled: true,
      }),
      closed: (): CloseHandlerResult => {
        const now = Date.now();
        crashes.push(now);
        while (crashes.length > 0 && crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
        if (crashes.length <= MAX_RESTARTS) {
          this.log('the sidecar exited unexpectedly; restarting it');
          return { action: CloseAction.Restart, handled: true };
        }
        this.problems.report({
          message: `the sidecar exited ${crashes.length} times in 3 minutes and was not restarted (its log is in the "DSH Sidecar" output).`,
          setting: 'dsh.pythonPath',
        });
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    };
  }

  /** Follow the Python extension's interpreter while it is the one in use (or none was found). */
  private async watchPythonExtension(): Promise<void> {
    if (this.pythonWatch !== undefined) return;
    this.pythonWatch = await onPythonInterpreterChanged(() => {
      const settings = readClientSettings(vscode.workspace.getConfiguration('dsh'));
      if (settings.pythonPath !== undefined) return;
      if (this.isRunning && this.interpreter?.source !== 'python-extension') return;
      this.log('the Python extension selected another interpreter: restarting the sidecar');
      void this.restart().catch(() => undefined);
    }, (m) => this.log(m));
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('dsh')) return;
    if (e.affectsConfiguration('dsh.pythonPath') || e.affectsConfiguration('dsh.importStrategy')) {
      this.log('the Python setting changed: restarting the sidecar');
      void this.restart({ userAsked: true }).catch(() => undefined);
      return;
    }
    const client = this.client;
    if (client === undefined || !client.isRunning()) return;
    // Sent by hand instead of `synchronize.configurationSection`, which would send the raw
    // section including the client-only keys.
    void client
      .sendNotification(DidChangeConfigurationNotification.type, {
        settings: { dsh: readServerSettings(vscode.workspace.getConfiguration('dsh')) },
      })
      .catch((err: unknown) => this.log(`sending settings failed: ${String(err)}`));
  }

  private log(message: string): void {
    this.output.appendLine(`[dsh] ${message}`);
  }
}
