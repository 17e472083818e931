/**
 * The agent chat panel of one workspace folder: a webview showing the session's visible history
 * and driving turns through the AgentLoop.
 */
import * as vscode from 'vscode';
import { type Sidecar } from '../client';
import { SESSION_COMPACT, SESSION_REFERENCE_CANDIDATES } from '../methods';
import { createChatModel } from '../model/select';
import type { Message } from '../protocol';
import { readClientSettings } from '../settings';
import { runTool, TOOL_DEFINITIONS } from '../tools';
import type { FromChat, ToChat } from '../webview/messages';
import { escapeHtml, webviewHtml, webviewRoots } from '../webviewHtml';
import { surfaceToMessages, toChatItems } from './convert';
import { AgentLoop, type TurnOutcome } from './loop';
import type { ChatSessions, LiveSession } from './sessions';

export interface ChatPanelDeps {
  sidecar: Sidecar;
  sessions: ChatSessions;
  extensionUri: vscode.Uri;
  secrets: vscode.SecretStorage;
  output: vscode.OutputChannel;
  /** Called after every turn (the inspector refreshes). */
  onTurnFinished(session: LiveSession, outcome: TurnOutcome): void;
}

export function systemPrompt(folder: vscode.WorkspaceFolder): string {
  return [
    `You are a coding agent working in the workspace folder "${folder.name}" (${folder.uri.fsPath}).`,
    'Use the read, write and edit tools with paths relative to that folder; they cannot reach outside it.',
    'Follow the workspace instructions you are given. Answer concisely.',
  ].join('\n');
}

const COMPACT_REQUEST =
  'Summarize the conversation so far for your own later use: the goal, decisions made, files touched and their state, and open work. Write only the summary.';

export class ChatPanel implements vscode.Disposable {
  private busy = false;
  private abort: AbortController | undefined;
  private mentionRequest: vscode.CancellationTokenSource | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly loop: AgentLoop;
  private readonly disposed = new vscode.EventEmitter<void>();
  private isDisposed = false;
  private shownSessionId: string | undefined;
  /** Tool call headings of the shown conversation, so results can name their call. */
  private callTitles = new Map<string, string>();
  readonly onDidDispose = this.disposed.event;

  constructor(
    private readonly panel: vscode.WebviewPanel,
    readonly folder: vscode.WorkspaceFolder,
    private readonly deps: ChatPanelDeps,
  ) {
    this.loop = new AgentLoop(deps.sidecar);
    panel.webview.html = webviewHtml(panel.webview, deps.extensionUri, {
      title: `Agent: ${folder.name}`,
      script: 'chat',
      style: 'chat.css',
      body: `<header><span id="folder">${escapeHtml(folder.name)}</span><span id="session"></span>
<button id="new-session" title="Start a new session for this folder">New session</button>
<button id="compact" title="Summarize the visible history into one message">Compact</button></header>
<main id="log" aria-live="polite"></main>
<div id="notice" hidden></div>
<footer><ul id="mentions" role="listbox" hidden></ul>
<textarea id="prompt" rows="3" placeholder="Ask the agent… (@ mentions another session, Enter sends, Shift+Enter for a new line)"></textarea>
<button id="send">Send</button></footer>`,
    });
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: FromChat) => void this.handle(m)),
      panel.onDidDispose(() => this.dispose()),
      deps.sessions.onDidChange((s) => {
        // A new or reopened session of this folder: show its history (unless mid-turn).
        const mine = s.folder.uri.toString() === folder.uri.toString();
        if (mine && !this.busy && s.header.id !== this.shownSessionId) void this.load();
      }),
    );
  }

  reveal(column?: vscode.ViewColumn): void {
    this.panel.reveal(column);
  }

  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    this.abort?.abort();
    this.mentionRequest?.cancel();
    for (const d of this.disposables.splice(0)) d.dispose();
    this.disposed.fire();
    this.disposed.dispose();
    this.panel.dispose();
  }

  /** Send a prompt as if typed in the panel (used by tests and commands). */
  async send(text: string, clientTimeZone?: string): Promise<TurnOutcome | undefined> {
    if (this.busy) {
      this.notice('error', 'The agent is still working on the previous prompt.');
      return undefined;
    }
    if (text.trim() === '') return undefined;
    this.setBusy(true);
    this.abort = new AbortController();
    try {
      const settings = readClientSettings(vscode.workspace.getConfiguration('dsh'));
      const session = await this.deps.sessions.ensure(this.folder);
      const model = await createChatModel(settings, this.deps.secrets);
      const history = surfaceToMessages((await this.deps.sessions.surface(session)).events);
      // Taken even if the turn fails to start: a gap in turn numbers is harmless, reusing a
      // number that a half-finished step/prepare may have written is not.
      const turn = session.nextTurn++;
      let streaming = false;
      const outcome = await this.loop.runTurn({
        sessionId: session.header.id,
        turn,
        prompt: text,
        ...(clientTimeZone !== undefined ? { clientTimeZone } : {}),
        history,
        model,
        system: systemPrompt(this.folder),
        tools: TOOL_DEFINITIONS,
        runTool: (call) => runTool(this.folder.uri.fsPath, call),
        maxSteps: settings.maxSteps,
        signal: this.abort.signal,
        observer: {
          onTextDelta: (delta) => {
            streaming = true;
            this.post({ type: 'delta', text: delta });
          },
          onMessage: (message: Message) => {
            if (streaming && message.role === 'assistant') {
              streaming = false;
              this.post({ type: 'streamEnd' });
            }
            this.post({ type: 'items', items: toChatItems([message], this.callTitles) });
          },
        },
      });
      if (streaming) this.post({ type: 'streamEnd' });
      if (outcome.reason === 'error') {
        const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
        this.deps.output.appendLine(`[chat] turn ${turn} failed: ${message}`);
        this.notice('error', message);
      } else if (outcome.reason === 'max-steps') {
        this.notice('info', `Stopped after ${settings.maxSteps} steps (dsh.model.maxSteps).`);
      } else if (outcome.reason === 'aborted') {
        this.notice('info', 'Stopped.');
      }
      this.deps.onTurnFinished(session, outcome);
      return outcome;
    } catch (err) {
      this.notice('error', err instanceof Error ? err.message : String(err));
      return undefined;
    } finally {
      this.abort = undefined;
      this.setBusy(false);
    }
  }

  /** Summarize the visible history with the model and replace it by that summary. */
  async compact(): Promise<boolean> {
    if (this.busy) {
      this.notice('error', 'Wait for the agent to finish before compacting.');
      return false;
    }
    this.setBusy(true);
    this.abort = new AbortController();
    try {
      const session = await this.deps.sessions.ensure(this.folder);
      const surface = await this.deps.sessions.surface(session);
      const messages = surfaceToMessages(surface.events);
      if (surface.events.length < 2) {
        this.notice('info', 'Nothing to compact yet.');
        return false;
      }
      const model = await createChatModel(readClientSettings(vscode.workspace.getConfiguration('dsh')), this.deps.secrets);
      this.notice('info', 'Compacting…');
      const answer = await model.complete({
        messages: [
          ...messages,
          { id: 'compact-request', role: 'user', content: [{ type: 'text', text: COMPACT_REQUEST }], source: { kind: 'user' } },
        ],
        system: systemPrompt(this.folder),
        tools: [],
        signal: this.abort.signal,
        onText: () => undefined,
      });
      const summary = answer.text.trim();
      if (summary === '') throw new Error('The model returned an empty summary; nothing was compacted.');
      await this.deps.sidecar.request(SESSION_COMPACT, {
        sessionId: session.header.id,
        start: 0,
        end: surface.events.length - 1,
        summary,
      });
      await this.load();
      this.notice('info', `Compacted ${surface.events.length} messages into a summary.`);
      return true;
    } catch (err) {
      this.notice('error', `Compacting failed: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    } finally {
      this.abort = undefined;
      this.setBusy(false);
    }
  }

  async newSession(): Promise<void> {
    if (this.busy) {
      this.notice('error', 'Wait for the agent to finish before starting a new session.');
      return;
    }
    try {
      await this.deps.sessions.replace(this.folder);
    } catch (err) {
      this.notice('error', err instanceof Error ? err.message : String(err));
    }
  }

  /** (Re)render the whole history of the folder's session. */
  async load(): Promise<void> {
    try {
      const session = await this.deps.sessions.ensure(this.folder);
      const { events } = await this.deps.sessions.surface(session);
      this.shownSessionId = session.header.id;
      this.callTitles = new Map();
      this.post({
        type: 'init',
        folder: this.folder.name,
        sessionId: session.header.id,
        items: toChatItems(surfaceToMessages(events), this.callTitles),
        busy: this.busy,
      });
    } catch (err) {
      this.post({ type: 'init', folder: this.folder.name, sessionId: undefined, items: [], busy: this.busy });
      this.notice('error', err instanceof Error ? err.message : String(err));
    }
  }

  private async handle(message: FromChat): Promise<void> {
    switch (message.type) {
      case 'ready':
        await this.load();
        break;
      case 'send':
        await this.send(message.text, message.clientTimeZone);
        break;
      case 'stop':
        this.abort?.abort();
        break;
      case 'mention':
        await this.completeMention(message.requestId, message.query);
        break;
      case 'newSession':
        await this.newSession();
        break;
      case 'compact':
        await this.compact();
        break;
    }
  }

  private async completeMention(requestId: number, query: string): Promise<void> {
    // Only the newest query matters: cancel the one in flight (candidates are cancellable).
    this.mentionRequest?.cancel();
    const source = new vscode.CancellationTokenSource();
    this.mentionRequest = source;
    try {
      const session = await this.deps.sessions.ensure(this.folder);
      const params: { sessionId: string; query?: string } = { sessionId: session.header.id };
      if (query !== '') params.query = query;
      const result = await this.deps.sidecar.request(SESSION_REFERENCE_CANDIDATES, params, source.token);
      if (source.token.isCancellationRequested) return;
      this.post({
        type: 'candidates',
        requestId,
        candidates: result.candidates.map((c) => ({
          label: c.label,
          mention: c.mention,
          detail: [c.cwd, new Date(c.createdAt).toLocaleString()].filter(Boolean).join(' · '),
        })),
      });
    } catch (err) {
      if (!source.token.isCancellationRequested) {
        this.deps.output.appendLine(`[chat] mention candidates failed: ${err instanceof Error ? err.message : String(err)}`);
        this.post({ type: 'candidates', requestId, candidates: [] });
      }
    } finally {
      if (this.mentionRequest === source) this.mentionRequest = undefined;
      source.dispose();
    }
  }

  private setBusy(busy: boolean): void {
    this.busy = busy;
    this.post({ type: 'busy', busy });
  }

  private notice(level: 'info' | 'error', text: string): void {
    this.post({ type: 'notice', level, text });
  }

  private post(message: ToChat): void {
    void this.panel.webview.postMessage(message);
  }
}

/** The panels, one per workspace folder. */
export class ChatPanels implements vscode.Disposable {
  private readonly panels = new Map<string, ChatPanel>();

  constructor(private readonly deps: ChatPanelDeps) {}

  get(folder: vscode.WorkspaceFolder): ChatPanel | undefined {
    return this.panels.get(folder.uri.toString());
  }

  open(folder: vscode.WorkspaceFolder, column: vscode.ViewColumn = vscode.ViewColumn.Beside): ChatPanel {
    const key = folder.uri.toString();
    const existing = this.panels.get(key);
    if (existing !== undefined) {
      existing.reveal(column);
      return existing;
    }
    const webviewPanel = vscode.window.createWebviewPanel('dsh.chat', `Agent: ${folder.name}`, column, {
      enableScripts: true,
      // A running turn keeps streaming into the panel while another tab is in front.
      retainContextWhenHidden: true,
      localResourceRoots: webviewRoots(this.deps.extensionUri),
    });
    const panel = new ChatPanel(webviewPanel, folder, this.deps);
    panel.onDidDispose(() => this.panels.delete(key));
    this.panels.set(key, panel);
    return panel;
  }

  dispose(): void {
    for (const panel of [...this.panels.values()]) panel.dispose();
    this.panels.clear();
  }
}

