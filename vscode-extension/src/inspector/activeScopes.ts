/**
 * "Which instruction files apply to the file in front of me?": `dsh/scopes` for the active
 * editor, refreshed when the editor, the files or the sidecar change. Shared by the status bar
 * and the inspector so they never disagree.
 */
import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import { SCOPES } from '../methods';
import type { ScopesResult } from '../protocol';

export interface ActiveScopesState {
  /** The active file, or undefined when no file editor is active. */
  uri: vscode.Uri | undefined;
  result: ScopesResult | undefined;
  error: string | undefined;
}

/** Files that reach the model: included whole or cut to the budget. */
export function applyingFiles(result: ScopesResult): number {
  return result.files.filter((f) => f.state === 'included' || f.state === 'truncated').length;
}

export class ActiveScopes implements vscode.Disposable {
  private state: ActiveScopesState = { uri: undefined, result: undefined, error: undefined };
  private generation = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: vscode.CancellationTokenSource | undefined;
  private readonly changed = new vscode.EventEmitter<ActiveScopesState>();
  private readonly disposables: vscode.Disposable[] = [];
  readonly onDidChange = this.changed.event;

  constructor(private readonly sidecar: Sidecar) {
    this.disposables.push(
      this.changed,
      vscode.window.onDidChangeActiveTextEditor(() => this.schedule(0)),
      vscode.window.onDidChangeVisibleTextEditors(() => this.schedule()),
      // Instruction files appear, change and vanish; saving any file may be one of them.
      vscode.workspace.onDidSaveTextDocument(() => this.schedule()),
      vscode.workspace.onDidCreateFiles(() => this.schedule()),
      vscode.workspace.onDidDeleteFiles(() => this.schedule()),
      vscode.workspace.onDidRenameFiles(() => this.schedule()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('dsh')) this.schedule();
      }),
    );
  }

  get current(): ActiveScopesState {
    return this.state;
  }

  /** Refresh soon; bursts of events collapse into one request. */
  schedule(delayMs = 250): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delayMs);
  }

  async refresh(): Promise<ActiveScopesState> {
    const generation = ++this.generation;
    this.inFlight?.cancel();
    const uri = this.currentFile();
    if (uri === undefined) {
      this.update({ uri: undefined, result: undefined, error: undefined });
      return this.state;
    }
    const source = new vscode.CancellationTokenSource();
    this.inFlight = source;
    try {
      const result = await this.sidecar.request(SCOPES, { uri: uri.toString() }, source.token);
      if (generation === this.generation) this.update({ uri, result, error: undefined });
    } catch (err) {
      if (generation === this.generation && !source.token.isCancellationRequested) {
        this.update({ uri, result: undefined, error: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      source.dispose();
      if (this.inFlight === source) this.inFlight = undefined;
    }
    return this.state;
  }

  /**
   * The active file editor's file. When focus moves to a webview (the chat, the inspector
   * itself) there is no active text editor; the last file stays current while it is visible.
   */
  private currentFile(): vscode.Uri | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active !== undefined) return active.scheme === 'file' ? active : undefined;
    const last = this.state.uri;
    if (last === undefined) return undefined;
    const visible = vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === last.toString());
    return visible ? last : undefined;
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.inFlight?.cancel();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private update(state: ActiveScopesState): void {
    this.state = state;
    this.changed.fire(state);
  }
}
