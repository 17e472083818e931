/**
 * The sidecar process and its language client: start, restart, settings, typed requests.
 */
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { CONTEXT_DID_CHANGE, type NotificationMethod, type RequestMethod } from './methods';
import type { ContextDidChangeParams, NotificationParams, RequestParams, RequestResult } from './protocol';
import { readClientSettings, readServerSettings } from './settings';

export class SidecarNotRunningError extends Error {
  constructor() {
    super('The DSH sidecar is not running (see the "DSH Sidecar" output, or run "DSH: Restart Sidecar").');
  }
}

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

export class SidecarClient implements Sidecar, vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly clientDisposables: vscode.Disposable[] = [];
  private readonly didStart = new vscode.EventEmitter<void>();
  private readonly contextDidChange = new vscode.EventEmitter<ContextDidChangeParams>();

  /** Fires each time a sidecar process is up, including after a restart (sessions must be reopened). */
  readonly onDidStart = this.didStart.event;
  /** The server's `dsh/context/didChange`: a session's pending inbox changed. */
  readonly onContextDidChange = this.contextDidChange.event;

  constructor(private readonly output: vscode.OutputChannel) {
    this.disposables.push(
      this.didStart,
      this.contextDidChange,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
    );
  }

  get isRunning(): boolean {
    return this.client?.isRunning() ?? false;
  }

  /** Start the sidecar if it is not running; resolves once it answered `initialize`. */
  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
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
    return token === undefined
      ? client.sendRequest<RequestResult<M>>(method, params)
      : client.sendRequest<RequestResult<M>>(method, params, token);
  }

  async notify<M extends NotificationMethod>(method: M, params: NotificationParams<M>): Promise<void> {
    const client = await this.ready();
    await client.sendNotification(method, params);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private async ready(): Promise<LanguageClient> {
    if (this.starting !== undefined) await this.starting.catch(() => undefined);
    const client = this.client;
    if (client === undefined || !client.isRunning()) throw new SidecarNotRunningError();
    return client;
  }

  private async doStart(): Promise<void> {
    if (this.client?.isRunning()) return;
    await this.stop();
    const { pythonPath } = readClientSettings(vscode.workspace.getConfiguration('dsh'));
    // No `transport` on purpose: with TransportKind.stdio the client appends `--stdio`, which
    // `dsh_sidecar serve` does not take (stdio is its default).
    const serverOptions: ServerOptions = {
      command: pythonPath,
      args: ['-m', 'dsh_sidecar', 'serve'],
      options: { env: process.env },
    };
    const clientOptions: LanguageClientOptions = {
      // Every file on disk: opening, editing, saving, creating, renaming and deleting files are
      // the touches the sidecar turns into instruction updates.
      documentSelector: [{ scheme: 'file' }],
      outputChannel: this.output,
      initializationOptions: () => readServerSettings(vscode.workspace.getConfiguration('dsh')),
      middleware: {
        workspace: {
          // If the server pulls `workspace/configuration` for section `dsh`, answer with the
          // §9 tree rather than the raw section (which holds client-only keys it would refuse).
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
        this.log(`the sidecar failed to initialize: ${error instanceof Error ? error.message : String(error)}`);
        void vscode.window.showErrorMessage(`DSH sidecar failed to start: ${error instanceof Error ? error.message : String(error)}`);
        return false; // retrying with the same settings would fail the same way
      },
    };
    const client = new LanguageClient('dsh', 'DSH Sidecar', serverOptions, clientOptions);
    this.clientDisposables.push(
      client.onNotification(CONTEXT_DID_CHANGE, (params: ContextDidChangeParams) => this.contextDidChange.fire(params)),
      client.onDidChangeState((e) => {
        // Also covers the client's own automatic restart after a crash.
        if (e.newState === State.Running && this.client === client) this.didStart.fire();
      }),
    );
    this.client = client;
    this.log(`starting ${pythonPath} -m dsh_sidecar serve`);
    try {
      await client.start();
    } catch (err) {
      this.log(`the sidecar did not start: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('dsh')) return;
    if (e.affectsConfiguration('dsh.pythonPath')) {
      this.log('dsh.pythonPath changed: restarting the sidecar');
      void this.restart().catch(() => undefined);
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
