/**
 * The agent chat panel of one workspace folder: a webview showing the session's visible history
 * and driving turns through the AgentLoop, with edits approved in a diff, queued prompts, a
 * session list and the pending context.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import { CONTEXT_DISCARD, CONTEXT_PENDING, SCOPES, SESSION_COMPACT, SESSION_EVENTS, SESSION_REFERENCE_CANDIDATES } from '../methods';
import { createChatModel } from '../model/select';
import { ModelError } from '../model/types';
import { lmRuntime } from '../model/vscodeLm';
import type { ContextDidChangeParams, DshEvent, Message } from '../protocol';
import { promptTimeZone, readClientSettings } from '../settings';
import { formatAge, plural, titleFromPrompt } from '../shared/text';
import { planTool, readIfExists, resolveInside, TOOL_DEFINITIONS, type ToolCall, type ToolOutcome } from '../tools';
import { placeBlock } from './placement';
import { DISCARD_ID_PREFIX, discardSummary, expandDiscards, isDiscardCheckpoint, lastTurnOf, modelHistory, transcriptItems } from './rewind';
import type { LastTextEditor } from '../lastEditor';
import type { ApprovalView, FromChat, ModelView, NoticeAction, SessionView, ToChat } from '../shared/chatMessages';
import { webviewHtml, webviewRoots } from '../webviewHtml';
import { type EditApprovals, notAppliedText } from './approvals';
import { chatBody } from './chatHtml';
import { summarizeHistory } from './compaction';
import { isUserPrompt, messageText, surfaceToMessages, toChatItems } from './convert';
import { discardPending } from './discard';
import { type ActionReport, insertAtCursor, openLink } from './editorActions';
import { AgentLoop, type TurnOutcome } from './loop';
import { describeModel } from './modelInfo';
import { pendingViews } from './pendingView';
import { PromptQueue } from './queue';
import type { ChatSessions, LiveSession } from './sessions';

export interface ChatPanelDeps {
  sidecar: Sidecar & { onContextDidChange: vscode.Event<ContextDidChangeParams>; supports(method: string): boolean };
  sessions: ChatSessions;
  extensionUri: vscode.Uri;
  secrets: vscode.SecretStorage;
  output: vscode.OutputChannel;
  approvals: EditApprovals;
  editors: LastTextEditor;
  /** After every turn, compaction or dropped context (the inspector refreshes). */
  onSessionChanged(session: LiveSession, outcome?: TurnOutcome): void;
  /** Whether the sidecar refused a settings key (it then runs with the default). */
  isSettingRefused?(key: string): boolean;
}

export function systemPrompt(folder: vscode.WorkspaceFolder): string {
  return [
    `You are a coding agent working in the workspace folder "${folder.name}" (${folder.uri.fsPath}).`,
    'Use the read, write and edit tools with paths relative to that folder; they cannot reach outside it.',
    'The user reviews every write and edit before it is applied and may reject it.',
    'Follow the workspace instructions you are given. Answer concisely, in Markdown.',
  ].join('\n');
}

/** Whether edits apply without asking (`dsh.chat.autoApproveEdits`, User settings only). */
function autoApproveEdits(): boolean {
  return vscode.workspace.getConfiguration('dsh').get<boolean>('chat.autoApproveEdits') === true;
}

/**
 * Where a chat is shown: the chat view (a webview view, in the activity bar or the secondary side
 * bar) or an editor tab (`DSH: Open Agent Chat in Editor`). The chat itself does not care.
 */
export interface ChatHost {
  readonly webview: vscode.Webview;
  readonly onDidDispose: vscode.Event<void>;
  /** The editor column of a tab; undefined for the view. */
  readonly viewColumn: vscode.ViewColumn | undefined;
  reveal(column?: vscode.ViewColumn): void;
  dispose(): void;
}

export function panelHost(panel: vscode.WebviewPanel): ChatHost {
  return {
    webview: panel.webview,
    onDidDispose: panel.onDidDispose,
    get viewColumn() {
      return panel.viewColumn;
    },
    reveal: (column) => panel.reveal(column),
    dispose: () => panel.dispose(),
  };
}

export function viewHost(view: vscode.WebviewView): ChatHost {
  return {
    webview: view.webview,
    onDidDispose: view.onDidDispose,
    viewColumn: undefined,
    reveal: () => view.show(false),
    // The view belongs to the workbench (the user may move or close it); nothing to dispose.
    dispose: () => undefined,
  };
}

const LOG_PAGE = 1000;

export class ChatPanel implements vscode.Disposable {
  private busy = false;
  private abort: AbortController | undefined;
  private mentionRequest: vscode.CancellationTokenSource | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly loop: AgentLoop;
  private readonly queue = new PromptQueue();
  private readonly approvalViews = new Map<string, ApprovalView>();
  private readonly disposed = new vscode.EventEmitter<void>();
  private isDisposed = false;
  private shownSessionId: string | undefined;
  private lastTimeZone: string | undefined;
  private approvalCount = 0;
  /** Per session, the directories whose new instructions an edit has been held for already. */
  private readonly preEditDirs = new Map<string, Set<string>>();
  /** Tool call headings of the shown conversation, so results can name their call. */
  private callTitles = new Map<string, string>();
  readonly onDidDispose = this.disposed.event;

  constructor(
    private readonly panel: ChatHost,
    readonly folder: vscode.WorkspaceFolder,
    private readonly deps: ChatPanelDeps,
  ) {
    this.loop = new AgentLoop(deps.sidecar);
    panel.webview.html = webviewHtml(panel.webview, deps.extensionUri, {
      title: `Agent: ${folder.name}`,
      script: 'chat',
      style: 'chat.css',
      body: chatBody(folder.name),
    });
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: FromChat) => void this.handle(m)),
      panel.onDidDispose(() => this.dispose()),
      deps.sessions.onDidChange((s) => {
        if (s.folder.uri.toString() !== folder.uri.toString()) return;
        // A new or reopened session of this folder: show its history (unless mid-turn).
        if (!this.busy && s.header.id !== this.shownSessionId) void this.load();
        else if (s.header.id === this.shownSessionId) this.post({ type: 'session', session: sessionView(s) });
      }),
      deps.sidecar.onContextDidChange((p) => {
        if (p.sessionId === this.shownSessionId) void this.refreshPending();
      }),
      deps.approvals.onDidDecide(({ id, decision, verdict }) => this.updateApproval(id, decision, verdict)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('dsh.model')) void this.postModel();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.post({ type: 'trust', trusted: true })),
    );
  }

  reveal(column?: vscode.ViewColumn): void {
    this.panel.reveal(column);
  }

  /**
   * Put the caret in the prompt box. Revealing or focusing the view gives focus to the webview,
   * not to anything inside it (a hidden view's textarea lost its focus), so typed keys went
   * nowhere; the page focuses the box when told.
   */
  focusPrompt(): void {
    this.post({ type: 'focusPrompt' });
  }

  /** Whether a turn (or a compaction) is running. */
  get isBusy(): boolean {
    return this.busy;
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

  /**
   * Send a prompt as if typed in the panel (used by tests and commands). While a turn runs the
   * prompt is queued and sent when the turn completes; the result is then undefined.
   */
  async send(text: string, clientTimeZone?: string): Promise<TurnOutcome | undefined> {
    if (text.trim() === '') return undefined;
    if (clientTimeZone !== undefined) this.lastTimeZone = clientTimeZone;
    if (this.busy) {
      this.queue.add(text);
      this.post({ type: 'queue', items: this.queue.list() });
      this.status(`Queued: it is sent when the agent finishes (${plural(this.queue.size, 'message')} waiting).`);
      return undefined;
    }
    return this.runTurn(text, clientTimeZone);
  }

  /**
   * Retry the last answer (`text` undefined) or send an edited last prompt: the last turn is
   * discarded from the model's view first (chat/rewind.ts), so nothing is in it twice.
   */
  async redoLast(text?: string): Promise<TurnOutcome | undefined> {
    if (this.busy) {
      this.notice('error', 'Wait for the agent to finish first.');
      return undefined;
    }
    try {
      const session = await this.deps.sessions.ensure(this.folder);
      const last = lastTurnOf((await this.deps.sessions.surface(session)).events);
      if (last === undefined) {
        this.notice('info', 'There is no earlier prompt to send again.');
        return undefined;
      }
      const prompt = text !== undefined && text.trim() !== '' ? text : last.prompt;
      // What the range stands for in the log (earlier checkpoints in it expanded), so the
      // checkpoint can say which files the discarded attempts left changed on disk.
      const surface = (await this.deps.sessions.surface(session)).events;
      const bySeq = await this.logBySeq(session.header.id);
      const discarded = expandDiscards(surface.slice(last.start, last.end + 1), bySeq);
      await this.deps.sidecar.request(SESSION_COMPACT, {
        sessionId: session.header.id,
        start: last.start,
        end: last.end,
        summary: discardSummary(discarded),
        compactionId: `${DISCARD_ID_PREFIX}${globalThis.crypto.randomUUID()}`,
      });
      await this.load();
      this.deps.onSessionChanged(session);
      return await this.runTurn(prompt, this.lastTimeZone);
    } catch (err) {
      this.notice('error', `Could not send it again: ${errorText(err)}`);
      return undefined;
    }
  }

  /** Ask the model again after a failed turn; the prompt is already in the session. */
  async retry(): Promise<TurnOutcome | undefined> {
    if (this.busy) return undefined;
    return this.runTurn(undefined, this.lastTimeZone);
  }

  private async runTurn(prompt: string | undefined, clientTimeZone: string | undefined): Promise<TurnOutcome | undefined> {
    this.setBusy(true);
    this.post({ type: 'clearNotice' });
    const abort = new AbortController();
    this.abort = abort;
    let outcome: TurnOutcome | undefined;
    let session: LiveSession | undefined;
    try {
      const config = vscode.workspace.getConfiguration('dsh');
      const settings = readClientSettings(config);
      const zone = promptTimeZone(
        config.get<unknown>('timeContext.timeZone'),
        this.deps.isSettingRefused?.('timeContext.timeZone') === true,
        clientTimeZone,
      );
      session = await this.deps.sessions.ensure(this.folder);
      const model = await createChatModel(settings, this.deps.secrets);
      // Without the checkpoints of discarded attempts that changed nothing (chat/rewind.ts).
      const history = modelHistory((await this.deps.sessions.surface(session)).events);
      // Taken even if the turn fails to start: a gap in turn numbers is harmless, reusing a
      // number that a half-finished step/prepare may have written is not.
      const turn = session.nextTurn++;
      let streaming = false;
      this.status('The agent is working…');
      outcome = await this.loop.runTurn({
        sessionId: session.header.id,
        turn,
        ...(prompt !== undefined ? { prompt } : {}),
        ...(zone !== undefined ? { clientTimeZone: zone } : {}),
        history,
        model,
        system: systemPrompt(this.folder),
        tools: TOOL_DEFINITIONS,
        runTool: (call, signal) => this.runTool(call, signal),
        maxSteps: settings.maxSteps,
        signal: abort.signal,
        observer: {
          onTextDelta: (delta) => {
            if (!streaming) this.status('The agent is answering…');
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
      if (outcome.promptRecorded && prompt !== undefined) await this.titleFromFirstPrompt(session, prompt);
      this.report(outcome, prompt, settings.maxSteps);
      this.deps.onSessionChanged(session, outcome);
      return outcome;
    } catch (err) {
      // Failed before the loop ran (no session, no model): the prompt never reached anyone.
      const reason = errorText(err);
      this.deps.output.appendLine(`[chat] the turn did not start: ${reason}`);
      if (prompt !== undefined) {
        this.post({ type: 'promptFailed', text: prompt, reason, actions: actionsFor(err) });
      } else {
        this.notice('error', reason, actionsFor(err));
      }
      return undefined;
    } finally {
      if (this.abort === abort) this.abort = undefined;
      this.setBusy(false);
      void this.refreshPending();
      this.afterTurn(outcome);
    }
  }

  /** What the user is told when a turn ends; the queue goes on only after a completed turn. */
  private report(outcome: TurnOutcome, prompt: string | undefined, maxSteps: number): void {
    if (outcome.reason === 'error') {
      const reason = errorText(outcome.error);
      const detail = outcome.error instanceof ModelError && outcome.error.detail !== undefined ? `\n${outcome.error.detail}` : '';
      this.deps.output.appendLine(`[chat] the turn failed: ${reason}${detail}`);
      if (!outcome.promptRecorded && prompt !== undefined) {
        this.post({ type: 'promptFailed', text: prompt, reason, actions: actionsFor(outcome.error) });
      } else {
        this.notice('error', reason, ['retry', ...actionsFor(outcome.error)]);
      }
      this.status('The agent stopped with an error.');
    } else if (outcome.reason === 'max-steps') {
      this.notice('info', `Stopped after ${plural(maxSteps, 'step')} (dsh.model.maxSteps).`);
      this.status('The agent stopped at the step limit.');
    } else if (outcome.reason === 'aborted') {
      this.status('Stopped. What the agent had said so far is kept.');
    } else {
      this.status('The agent answered.');
    }
  }

  private afterTurn(outcome: TurnOutcome | undefined): void {
    if (this.queue.size === 0 || this.isDisposed) return;
    if (outcome !== undefined && (outcome.reason === 'completed' || outcome.reason === 'max-steps')) {
      const next = this.queue.shift()!;
      this.post({ type: 'queue', items: this.queue.list() });
      void this.runTurn(next.text, this.lastTimeZone);
      return;
    }
    // Stopped or failed: the user decides again, with their queued text back in the box.
    this.post({ type: 'restorePrompt', texts: this.queue.drain() });
    this.post({ type: 'queue', items: [] });
  }

  private async titleFromFirstPrompt(session: LiveSession, prompt: string): Promise<void> {
    if (session.header.title !== undefined && session.header.title.trim() !== '') return;
    const title = titleFromPrompt(prompt);
    if (title === '') return;
    await this.deps.sessions.setTitle(session, title).catch((err: unknown) => {
      this.deps.output.appendLine(`[chat] naming the session failed: ${errorText(err)}`);
    });
  }

  /** A tool call: reads at once; writes and edits after the user accepted the diff. */
  private async runTool(call: ToolCall, signal: AbortSignal): Promise<ToolOutcome> {
    const plan = await planTool(this.folder.uri.fsPath, call);
    if (plan.kind === 'done') return plan.outcome;
    // The touch seam's pre-edit rule (docs/sources.md): instructions first, then the edit.
    const unseen = await this.unseenInstructions(plan.path);
    if (unseen !== undefined) {
      this.status(`New instructions apply to ${plan.display}: the agent reads them before its ${plan.name}.`);
      return { text: preEditText(plan.name, plan.display, unseen), isError: false, resolvedPath: plan.path };
    }
    if (autoApproveEdits()) return plan.apply();
    const id = `${Date.now().toString(36)}-${++this.approvalCount}`;
    const view: ApprovalView = { id, tool: plan.name, path: plan.display, isNewFile: plan.before === null, state: 'pending' };
    this.approvalViews.set(id, view);
    this.post({ type: 'approval', approval: view });
    this.status(`The agent proposes to ${plan.name === 'write' && plan.before === null ? 'create' : 'change'} ${plan.display}. Accept or reject it.`);
    const decision = await this.deps.approvals.request(id, plan, signal, this.diffColumn());
    if (decision === 'accepted') return this.deps.approvals.apply(id, plan);
    const reason = decision === 'rejected' ? this.deps.approvals.takeReason(id) : undefined;
    return { text: notAppliedText(plan, decision, reason), isError: true, resolvedPath: plan.path };
  }

  /**
   * The instruction files that govern `file` and that the session has not been given yet, once
   * per directory per session; undefined when there are none (or they were announced already).
   * Asked with `dsh/scopes`: its chain, against the session's active changes (by scope).
   */
  private async unseenInstructions(file: string): Promise<string[] | undefined> {
    const session = this.deps.sessions.get(this.folder);
    if (session === undefined) return undefined;
    const dir = path.dirname(file);
    const announced = this.preEditDirs.get(session.header.id) ?? new Set<string>();
    if (announced.has(dir)) return undefined;
    let chain;
    try {
      chain = await this.deps.sidecar.request(SCOPES, { uri: vscode.Uri.file(file).toString() });
    } catch (err) {
      this.deps.output.appendLine(`[chat] no pre-edit check for ${file}: ${errorText(err)}`);
      return undefined;
    }
    const active = new Set((chain.sessions.find((s) => s.sessionId === session.header.id)?.active ?? []).map((c) => c.scope));
    const unseen = chain.files.filter((f) => (f.state === 'included' || f.state === 'truncated') && !active.has(f.scope));
    if (unseen.length === 0) return undefined;
    announced.add(dir);
    this.preEditDirs.set(session.header.id, announced);
    return unseen.map((f) => f.displayPath);
  }

  /**
   * Apply a code block from the chat as a reviewed change: into the file it names (or one the
   * user picks), placed by its enclosing symbol or the closest region (chat/placement.ts), shown
   * in the diff with Accept/Reject like the agent's own edits. Nothing is written before Accept.
   */
  async applyBlock(code: string, named?: string): Promise<'accepted' | 'rejected' | 'stopped' | undefined> {
    const root = this.folder.uri.fsPath;
    const file = named ?? (await this.pickFile());
    if (file === undefined) return undefined;
    let before: string | null = null;
    try {
      const absolute = await resolveInside(root, file);
      before = await readIfExists(absolute);
    } catch (err) {
      this.notice('error', `Cannot apply to ${file}: ${errorText(err)}`);
      return undefined;
    }
    const placed = before === null || before === '' ? undefined : placeBlock(before, code);
    const call: ToolCall =
      placed === undefined
        ? { id: 'apply', name: 'write', arguments: { file_path: file, content: code } }
        : { id: 'apply', name: 'edit', arguments: { file_path: file, old_string: before!, new_string: placed.text } };
    const plan = await planTool(root, call);
    if (plan.kind === 'done') {
      this.notice('error', plan.outcome.text.replace(/^Error: /, ''));
      return undefined;
    }
    const id = `${Date.now().toString(36)}-${++this.approvalCount}`;
    const view: ApprovalView = { id, tool: plan.name, path: plan.display, isNewFile: plan.before === null, state: 'pending', byUser: true };
    this.approvalViews.set(id, view);
    this.post({ type: 'approval', approval: view });
    const where =
      placed === undefined ? 'as a new file' : placed.placement.how === 'symbol' ? `replacing ${placed.placement.name}` : placed.placement.how === 'region' ? 'replacing the closest region' : 'at the end';
    this.status(`Review the change to ${plan.display} (${where}), then accept or reject it.`);
    const decision = await this.deps.approvals.request(id, plan, new AbortController().signal, this.diffColumn());
    if (decision === 'accepted') {
      const outcome = await this.deps.approvals.apply(id, plan);
      if (outcome.isError) this.notice('error', outcome.text.replace(/^Error: /, ''));
    }
    return decision;
  }

  private async pickFile(): Promise<string | undefined> {
    const root = this.folder.uri.fsPath;
    const found = await vscode.workspace.findFiles(new vscode.RelativePattern(this.folder, '**/*'), '**/{node_modules,.git}/**', 2000);
    const last = this.deps.editors.get()?.document.uri.fsPath;
    const rel = (p: string): string => path.relative(root, p).split(path.sep).join('/');
    // The file last edited first: it is the likeliest target.
    const mine = last !== undefined && last.startsWith(root + path.sep) ? rel(last) : undefined;
    const others = found.map((u) => rel(u.fsPath)).filter((p) => p !== mine).sort();
    const items = mine !== undefined ? [mine, ...others] : others;
    return vscode.window.showQuickPick(items, { placeHolder: 'Apply the code to which file? (the change is shown before anything is written)' });
  }

  private async insertIntoNewFile(code: string, language: string): Promise<void> {
    const id = LANGUAGE_IDS[language.toLowerCase()] ?? (language !== '' ? language.toLowerCase() : 'plaintext');
    let doc: vscode.TextDocument;
    try {
      doc = await vscode.workspace.openTextDocument({ content: code, language: id });
    } catch {
      doc = await vscode.workspace.openTextDocument({ content: code });
    }
    await vscode.window.showTextDocument(doc, { viewColumn: this.diffColumn() });
    this.status('Inserted into a new, unsaved file.');
  }

  private updateApproval(id: string, decision: ApprovalView['state'], verdict?: string): void {
    const view = this.approvalViews.get(id);
    if (view === undefined) return;
    this.approvalViews.delete(id);
    this.post({ type: 'approval', approval: { ...view, state: decision, ...(verdict !== undefined ? { verdict } : {}) } });
    this.status(decision === 'accepted' ? `Accepted: ${view.path} is written${verdict !== undefined ? ` (${verdict.replace(/: written\.$/, '')})` : ''}.` : `Rejected: ${view.path} is unchanged.`);
  }

  /** The editor column for diffs and opened files: not the chat's own. */
  private diffColumn(): vscode.ViewColumn {
    return this.panel.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Beside : vscode.ViewColumn.One;
  }

  /**
   * Summarize the visible history with the model and replace it by that summary. Without
   * `confirmed` the panel asks first and this resolves false; the user's yes compacts.
   */
  async compact(confirmed = false): Promise<boolean> {
    if (this.busy) {
      this.notice('error', 'Wait for the agent to finish before compacting.');
      return false;
    }
    let started = false;
    try {
      const session = await this.deps.sessions.ensure(this.folder);
      const surface = await this.deps.sessions.surface(session);
      if (surface.events.length < 2) {
        this.notice('info', 'Nothing to compact yet.');
        return false;
      }
      if (!confirmed) {
        this.post({ type: 'confirmCompact', count: surface.events.length });
        return false;
      }
      this.setBusy(true);
      started = true;
      this.abort = new AbortController();
      const messages = modelHistory(surface.events);
      const model = await createChatModel(readClientSettings(vscode.workspace.getConfiguration('dsh')), this.deps.secrets);
      this.status('Compacting…');
      const summary = await summarizeHistory(model, messages, systemPrompt(this.folder), this.abort.signal);
      await this.deps.sidecar.request(SESSION_COMPACT, {
        sessionId: session.header.id,
        start: 0,
        end: surface.events.length - 1,
        summary,
      });
      this.setBusy(false);
      await this.load();
      this.notice('info', `Compacted ${plural(surface.events.length, 'message')} into a summary.`);
      this.deps.onSessionChanged(session);
      return true;
    } catch (err) {
      this.notice('error', `Compacting failed: ${errorText(err)}`, actionsFor(err));
      return false;
    } finally {
      this.abort = undefined;
      if (started) {
        if (this.busy) this.setBusy(false);
        // Prompts typed while the summary was written go out now, against the compacted history.
        this.afterTurn({ reason: 'completed', steps: 0, promptRecorded: false });
      }
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
      this.notice('error', errorText(err));
    }
  }

  async switchSession(id: string): Promise<void> {
    if (this.busy) {
      this.notice('error', 'Wait for the agent to finish before switching sessions.');
      return;
    }
    try {
      await this.deps.sessions.switchTo(this.folder, id);
    } catch (err) {
      this.notice('error', `Could not open that session: ${errorText(err)}`);
    }
  }

  async renameSession(id: string, title: string): Promise<void> {
    const name = title.trim().slice(0, 200);
    if (name === '') return;
    try {
      await this.deps.sessions.rename(this.folder, id, name);
      this.status(`Renamed to "${name}".`);
    } catch (err) {
      this.notice('error', `Could not rename that session: ${errorText(err)}`);
    }
    await this.listSessions();
  }

  /** Delete a session from the store (the panel asked the user first). */
  async deleteSession(id: string, title: string): Promise<boolean> {
    if (this.busy && id === this.shownSessionId) {
      this.notice('error', 'Wait for the agent to finish before deleting this session.');
      return false;
    }
    try {
      await this.deps.sessions.delete(this.folder, id);
      this.status(`Deleted the session "${title}".`);
    } catch (err) {
      this.notice('error', `Could not delete that session: ${errorText(err)}`);
      return false;
    }
    return true;
  }

  /** (Re)render the whole history of the folder's session. */
  async load(): Promise<void> {
    const model = await this.modelView();
    try {
      const session = await this.deps.sessions.ensure(this.folder);
      const { events } = await this.deps.sessions.surface(session);
      this.shownSessionId = session.header.id;
      this.callTitles = new Map();
      const messages = surfaceToMessages(events);
      // A discarded attempt is shown by the writes and edits it decided, read from the log.
      const hasDiscards = messages.some(isDiscardCheckpoint);
      const bySeq = hasDiscards ? await this.logBySeq(session.header.id) : new Map<number, DshEvent>();
      this.post({
        type: 'init',
        folder: this.folder.name,
        session: sessionView(session),
        items: transcriptItems(events, bySeq, this.callTitles),
        busy: this.busy,
        model,
        history: messages.filter(isUserPrompt).map(messageText),
        queue: this.queue.list(),
      });
      void this.refreshPending();
    } catch (err) {
      this.post({
        type: 'init',
        folder: this.folder.name,
        session: undefined,
        items: [],
        busy: this.busy,
        model,
        history: [],
        queue: this.queue.list(),
      });
      this.notice('error', errorText(err));
    }
  }

  /** The session's whole log by seq (`dsh/session/events`, paged). */
  private async logBySeq(sessionId: string): Promise<Map<number, DshEvent>> {
    const bySeq = new Map<number, DshEvent>();
    let afterSeq: number | undefined;
    for (;;) {
      const { events } = await this.deps.sidecar.request(SESSION_EVENTS, { sessionId, limit: LOG_PAGE, ...(afterSeq !== undefined ? { afterSeq } : {}) });
      for (const event of events) bySeq.set(event.seq, event);
      if (events.length < LOG_PAGE) return bySeq;
      afterSeq = events[events.length - 1]!.seq;
    }
  }

  private async refreshPending(): Promise<void> {
    const session = this.deps.sessions.get(this.folder);
    if (session === undefined || session.header.id !== this.shownSessionId) return;
    try {
      const { messages } = await this.deps.sidecar.request(CONTEXT_PENDING, { sessionId: session.header.id });
      this.postPending(messages);
    } catch (err) {
      this.deps.output.appendLine(`[chat] reading the pending context failed: ${errorText(err)}`);
    }
  }

  private postPending(messages: Message[]): void {
    this.post({ type: 'pending', items: pendingViews(messages), canDrop: this.deps.sidecar.supports(CONTEXT_DISCARD) });
  }

  private async modelView(): Promise<ModelView> {
    const settings = readClientSettings(vscode.workspace.getConfiguration('dsh'));
    let offered: { name: string; family: string; id: string }[] | undefined;
    const lm = lmRuntime();
    if (lm !== undefined) offered = await Promise.resolve(lm.lm.selectChatModels()).catch(() => []);
    return describeModel(settings, offered);
  }

  private async postModel(): Promise<void> {
    this.post({ type: 'model', model: await this.modelView() });
  }

  private async handle(message: FromChat): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.post({ type: 'trust', trusted: vscode.workspace.isTrusted });
        await this.load();
        break;
      case 'manageTrust':
        await vscode.commands.executeCommand('workbench.trust.manage');
        break;
      case 'send':
        await this.send(message.text, message.clientTimeZone);
        break;
      case 'stop':
        this.abort?.abort();
        break;
      case 'retry':
        await this.retry();
        break;
      case 'mention':
        await this.completeMention(message.requestId, message.query);
        break;
      case 'newSession':
        await this.newSession();
        break;
      case 'compact':
        await this.compact(false);
        break;
      case 'compactConfirmed':
        await this.compact(true);
        break;
      case 'openLink':
        await this.openLink(message.href);
        break;
      case 'copy':
        try {
          await vscode.env.clipboard.writeText(message.text);
          this.status('Copied to the clipboard.');
        } catch (err) {
          this.notice('error', `Could not copy: ${errorText(err)}`);
        }
        break;
      case 'insert':
        await this.insertAtCursor(message.text);
        break;
      case 'apply':
        await this.applyBlock(message.text, message.file);
        break;
      case 'newFile':
        await this.insertIntoNewFile(message.text, message.language);
        break;
      case 'approve':
        this.deps.approvals.decide(message.id, message.accept ? 'accepted' : 'rejected', message.reason);
        break;
      case 'showDiff':
        await this.deps.approvals.showDiff(message.id, this.diffColumn());
        break;
      case 'unqueue':
        if (this.queue.remove(message.id)) this.post({ type: 'queue', items: this.queue.list() });
        break;
      case 'listSessions':
        await this.listSessions();
        break;
      case 'switchSession':
        await this.switchSession(message.id);
        break;
      case 'retryLast':
        await this.redoLast();
        break;
      case 'editLast':
        await this.redoLast(message.text);
        break;
      case 'renameSession':
        await this.renameSession(message.id, message.title);
        break;
      case 'deleteSession':
        await this.deleteSession(message.id, message.title);
        break;
      case 'discard':
        await this.discard(message.messageId, message.scopes);
        break;
      case 'action':
        await this.runAction(message.action);
        break;
    }
  }

  private async runAction(action: NoticeAction): Promise<void> {
    switch (action) {
      case 'retry':
        await this.retry();
        break;
      case 'configureModel':
        await vscode.commands.executeCommand('dsh.model.configure');
        break;
      case 'openModelSettings':
        await vscode.commands.executeCommand('workbench.action.openSettings', 'dsh.model');
        break;
      case 'showOutput':
        this.deps.output.show(true);
        break;
    }
  }

  private async listSessions(): Promise<void> {
    try {
      this.post({ type: 'sessions', sessions: await this.deps.sessions.list(this.folder) });
    } catch (err) {
      this.notice('error', `Could not list the sessions: ${errorText(err)}`);
    }
  }

  /** Drop pending context before the next step sees it (the whole message, or some changes). */
  private async discard(messageId: string, scopes: string[] | undefined): Promise<void> {
    const session = this.deps.sessions.get(this.folder);
    if (session === undefined) return;
    try {
      const outcome = await discardPending(this.deps.sidecar, session.header.id, messageId, scopes);
      this.postPending(outcome.messages);
      if (outcome.note !== undefined) this.notice('info', outcome.note);
      else this.status(scopes !== undefined ? 'Dropped that change: the next step will not carry it.' : 'Dropped: the next step will not carry it.');
      this.deps.onSessionChanged(session);
    } catch (err) {
      this.notice('error', `Could not drop it: ${errorText(err)}`);
      void this.refreshPending();
    }
  }

  private async openLink(href: string): Promise<void> {
    const problem = await openLink(href, this.folder.uri.fsPath, this.diffColumn());
    if (problem !== undefined) this.say(problem);
  }

  private async insertAtCursor(text: string): Promise<void> {
    this.say(await insertAtCursor(this.deps.editors.get(), text));
  }

  private say(report: ActionReport): void {
    if (report.level === 'status') this.status(report.text);
    else this.notice(report.level, report.text);
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
      const now = Date.now();
      this.post({
        type: 'candidates',
        requestId,
        candidates: result.candidates.map((c) => ({
          label: c.label,
          mention: c.mention,
          age: formatAge(c.createdAt, now),
          detail: c.cwd !== undefined && c.cwd !== this.folder.uri.fsPath ? c.cwd : '',
        })),
      });
    } catch (err) {
      if (!source.token.isCancellationRequested) {
        this.deps.output.appendLine(`[chat] mention candidates failed: ${errorText(err)}`);
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

  private notice(level: 'info' | 'error', text: string, actions: NoticeAction[] = []): void {
    this.post(actions.length > 0 ? { type: 'notice', level, text, actions } : { type: 'notice', level, text });
  }

  private status(text: string): void {
    this.post({ type: 'status', text });
  }

  private post(message: ToChat): void {
    if (!this.isDisposed) void this.panel.webview.postMessage(message);
  }
}

/** The tool result of an edit held back until the model has the instructions that govern it. */
export function preEditText(tool: string, file: string, unseen: readonly string[]): string {
  return (
    `Not applied yet: workspace instructions you have not seen apply to ${file} (${unseen.join(', ')}). ` +
    `They follow this result. Read them, then issue the ${tool} again if it still fits them.`
  );
}

/** Fence names that are not VS Code language ids. */
const LANGUAGE_IDS: Record<string, string> = {
  py: 'python', js: 'javascript', ts: 'typescript', sh: 'shellscript', bash: 'shellscript', shell: 'shellscript',
  md: 'markdown', yml: 'yaml', rs: 'rust', rb: 'ruby', cs: 'csharp', 'c++': 'cpp', text: 'plaintext', txt: 'plaintext',
};

function sessionView(session: LiveSession): SessionView {
  return { id: session.header.id, title: session.header.title };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The buttons that help with a failure: model problems lead to the model's setup. */
function actionsFor(err: unknown): NoticeAction[] {
  if (!(err instanceof ModelError)) return [];
  if (/^Set dsh\.model|offers no|No model/i.test(err.message)) return ['configureModel'];
  if (err.status === 401 || err.status === 403 || err.status === 404) return ['openModelSettings'];
  return [];
}

export const CHAT_VIEW_ID = 'dsh.chat';

/**
 * The chats: the chat view (one folder at a time, the active editor's or the first) and editor
 * tabs, one per folder, for those who want the chat as a tab. `open` prefers the view.
 */
export class ChatPanels implements vscode.Disposable, vscode.WebviewViewProvider {
  private readonly tabs = new Map<string, ChatPanel>();
  private inView: ChatPanel | undefined;
  private viewResolved: ((panel: ChatPanel) => void) | undefined;

  constructor(
    private readonly deps: ChatPanelDeps,
    /** The folder the view shows when it is first resolved. */
    private readonly viewFolder: () => vscode.WorkspaceFolder | undefined,
  ) {}

  get(folder: vscode.WorkspaceFolder): ChatPanel | undefined {
    const key = folder.uri.toString();
    if (this.inView !== undefined && this.inView.folder.uri.toString() === key) return this.inView;
    return this.tabs.get(key);
  }

  /** The view's chat when it shows `folder` (or shows nothing yet); otherwise a tab. */
  async open(folder: vscode.WorkspaceFolder): Promise<ChatPanel> {
    const key = folder.uri.toString();
    if (this.inView === undefined || this.inView.folder.uri.toString() === key) {
      const pending = this.inView === undefined ? this.waitForView(folder) : undefined;
      await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
      const panel = this.inView ?? (await pending);
      if (panel !== undefined && panel.folder.uri.toString() === key) return panel;
    }
    return this.openInEditor(folder);
  }

  openInEditor(folder: vscode.WorkspaceFolder, column: vscode.ViewColumn = vscode.ViewColumn.Beside): ChatPanel {
    const key = folder.uri.toString();
    const existing = this.tabs.get(key);
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
    const panel = new ChatPanel(panelHost(webviewPanel), folder, this.deps);
    panel.onDidDispose(() => this.tabs.delete(key));
    this.tabs.set(key, panel);
    return panel;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    const folder = this.nextViewFolder ?? this.viewFolder();
    this.nextViewFolder = undefined;
    view.webview.options = { enableScripts: true, localResourceRoots: webviewRoots(this.deps.extensionUri) };
    if (folder === undefined) {
      view.webview.html = '<p style="padding: 0 12px">Open a folder first: the agent works inside a workspace folder.</p>';
      return;
    }
    view.title = `Agent: ${folder.name}`;
    const panel = new ChatPanel(viewHost(view), folder, this.deps);
    panel.onDidDispose(() => {
      if (this.inView === panel) this.inView = undefined;
    });
    this.inView = panel;
    this.viewResolved?.(panel);
    this.viewResolved = undefined;
  }

  private nextViewFolder: vscode.WorkspaceFolder | undefined;

  private waitForView(folder: vscode.WorkspaceFolder): Promise<ChatPanel | undefined> {
    this.nextViewFolder = folder;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 10000);
      this.viewResolved = (panel) => {
        clearTimeout(timer);
        resolve(panel);
      };
    });
  }

  dispose(): void {
    for (const panel of [...this.tabs.values()]) panel.dispose();
    this.tabs.clear();
    this.inView?.dispose();
    this.inView = undefined;
  }
}
