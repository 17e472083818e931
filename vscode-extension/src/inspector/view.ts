/**
 * The context inspector (a webview view in the DSH side bar): the session's visible
 * instructions and pending batch, live through `dsh/context/didChange`, and the instruction
 * chain of the active editor with each file's state and size.
 */
import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import type { ChatSessions, LiveSession } from '../chat/sessions';
import { discardPending } from '../chat/discard';
import { CONTEXT_DISCARD, CONTEXT_PENDING, SESSION_EVENTS, SESSION_LIST, SESSION_SURFACE } from '../methods';
import type { FromInspector, InspectorState, ToInspector } from '../shared/inspectorMessages';
import { webviewHtml, webviewRoots } from '../webviewHtml';
import type { ActiveScopes } from './activeScopes';
import { agentSessionsIn, buildInspectorState, type InspectorInputs } from './model';

export const INSPECTOR_VIEW_ID = 'dsh.inspector';

export class InspectorView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private generation = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastState: InspectorState | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly rendered = new vscode.EventEmitter<InspectorState>();
  /** Fires after each render (tests wait on it). */
  readonly onDidRender = this.rendered.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly sidecar: Sidecar & {
      onContextDidChange: vscode.Event<{ sessionId: string; pendingCount: number }>;
      supports(method: string): boolean;
    },
    private readonly sessions: ChatSessions,
    private readonly scopes: ActiveScopes,
    private readonly openChat: () => void,
  ) {
    this.disposables.push(
      this.rendered,
      scopes.onDidChange(() => this.schedule()),
      sessions.onDidChange(() => this.schedule()),
      sidecar.onContextDidChange((p) => {
        // Only the session on display matters, but which one that is may be changing: refresh.
        if (this.shownSession()?.header.id === p.sessionId || this.shownSession() === undefined) this.schedule(50);
      }),
    );
  }

  get state(): InspectorState | undefined {
    return this.lastState;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: webviewRoots(this.extensionUri) };
    view.webview.html = webviewHtml(view.webview, this.extensionUri, {
      title: 'DSH Context Inspector',
      script: 'inspector',
      style: 'inspector.css',
      body: '<main id="root"><p class="muted">Loading…</p></main>',
    });
    // The editor may dispose and re-resolve the view (moved, hidden, reloaded): these live
    // exactly as long as this instance of it.
    const subscriptions = [
      view.webview.onDidReceiveMessage((m: FromInspector) => {
        if (m.type === 'ready' || m.type === 'refresh') void this.refresh();
        else if (m.type === 'openChat') this.openChat();
        else if (m.type === 'discard') void this.discard(m.sessionId, m.messageId, m.scopes);
      }),
      view.onDidChangeVisibility(() => {
        if (view.visible) this.schedule(0);
      }),
    ];
    subscriptions.push(
      view.onDidDispose(() => {
        if (this.view === view) this.view = undefined;
        for (const d of subscriptions) d.dispose();
      }),
    );
  }

  async show(): Promise<void> {
    await vscode.commands.executeCommand(`${INSPECTOR_VIEW_ID}.focus`);
    this.schedule(0);
  }

  schedule(delayMs = 150): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, delayMs);
  }

  /** Gather everything and render; an older refresh that finishes late is dropped. */
  async refresh(): Promise<InspectorState | undefined> {
    const view = this.view;
    if (view === undefined) return undefined;
    const generation = ++this.generation;
    const state = buildInspectorState(await this.gather());
    if (generation !== this.generation) return this.lastState;
    this.lastState = state;
    const message: ToInspector = { type: 'state', state };
    await view.webview.postMessage(message);
    this.rendered.fire(state);
    return state;
  }

  /** A pending item's Drop button: the next step will not carry it. */
  async discard(sessionId: string, messageId: string, scopes?: string[]): Promise<void> {
    try {
      const outcome = await discardPending(this.sidecar, sessionId, messageId, scopes);
      if (outcome.note !== undefined) void vscode.window.showInformationMessage(`DSH: ${outcome.note}`);
    } catch (err) {
      void vscode.window.showErrorMessage(`DSH: could not drop it: ${err instanceof Error ? err.message : String(err)}`);
    }
    await this.refresh();
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** The live session of the active editor's folder, else of the first folder that has one. */
  private shownSession(): LiveSession | undefined {
    const uri = this.scopes.current.uri ?? vscode.window.activeTextEditor?.document.uri;
    const folder = uri !== undefined ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
    if (folder !== undefined) {
      const session = this.sessions.get(folder);
      if (session !== undefined) return session;
    }
    return this.sessions.all()[0];
  }

  private async gather(): Promise<InspectorInputs> {
    const inputs: InspectorInputs = { now: Date.now() };
    const session = this.shownSession();
    if (session === undefined) {
      inputs.sessionNote = 'No chat session is open yet. Open the agent chat to start one.';
    } else {
      try {
        const [surface, pending] = await Promise.all([
          this.sessions.surface(session),
          this.sidecar.request(CONTEXT_PENDING, { sessionId: session.header.id }),
        ]);
        inputs.session = {
          id: session.header.id,
          folder: session.folder.name,
          surface: surface.events,
          pending: pending.messages,
          canDrop: this.sidecar.supports(CONTEXT_DISCARD),
        };
      } catch (err) {
        inputs.sessionNote = `Session ${session.header.id}: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    inputs.agents = await this.agentSessions();
    inputs.ruleSets = vscode.workspace.getConfiguration('dsh').get<string[]>('instructions.ruleSets') ?? [];
    const scopes = this.scopes.current;
    if (scopes.uri === undefined) {
      inputs.chainNote = 'Open a file to see which instruction files apply to it.';
    } else if (scopes.result !== undefined) {
      inputs.chain = { file: vscode.workspace.asRelativePath(scopes.uri), result: scopes.result };
    } else {
      inputs.chainNote = scopes.error ?? 'Loading…';
    }
    return inputs;
  }

  /** The sessions agents' hooks drive in the open folders, each with what its log says it was
   *  given, its last event, what is pending and waiting for it (read from the store); none when
   *  the sidecar cannot say (an older one, an error). */
  private async agentSessions(): Promise<InspectorInputs['agents']> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    try {
      const listed = await this.sidecar.request(SESSION_LIST, {});
      const headers = agentSessionsIn(listed.sessions, folders);
      return await Promise.all(
        headers.map(async (header) => {
          const sessionId = header.id;
          const [pending, surface] = await Promise.all([
            this.sidecar.request(CONTEXT_PENDING, { sessionId }),
            this.sidecar.request(SESSION_SURFACE, { sessionId }),
          ]);
          // The log's last event (the surface leaves out step and turn ends).
          const last = surface.capturedThroughSeq;
          const tail = last === null ? [] : (await this.sidecar.request(SESSION_EVENTS, { sessionId, afterSeq: last - 1, limit: 1 })).events;
          const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(header.cwd))?.uri.fsPath;
          return {
            header,
            pending: pending.messages,
            surface: surface.events,
            ...(tail[0] !== undefined ? { lastEventAt: tail[0].time } : {}),
            ...(folder !== undefined ? { folder } : {}),
            // An older sidecar does not send waitingTouches.
            waiting: listed.waitingTouches?.[sessionId] ?? 0,
          };
        }),
      );
    } catch {
      return undefined;
    }
  }
}
