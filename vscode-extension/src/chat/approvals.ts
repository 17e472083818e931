/**
 * The agent's `write` and `edit` calls wait for the user: the proposed change opens in VS Code's
 * diff editor (both sides are read-only virtual documents served from memory, so the diff shows
 * exactly what Accept writes), and the call resumes with the user's decision, taken in the chat
 * or from the diff editor's title bar. Nothing is written before Accept.
 */
import * as vscode from 'vscode';
import type { ProposedChange } from '../tools';

export const PROPOSAL_SCHEME = 'dsh-proposal';

export type Decision = 'accepted' | 'rejected' | 'stopped';

interface Waiting {
  change: ProposedChange;
  left: vscode.Uri;
  right: vscode.Uri;
  resolve(decision: Decision): void;
}

export class EditApprovals implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly waiting = new Map<string, Waiting>();
  /** Why the user rejected a proposal, when they said (read once by whoever answers the model). */
  private readonly reasons = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly decided = new vscode.EventEmitter<{ id: string; decision: Decision }>();
  private readonly registration: vscode.Disposable;
  readonly onDidChange = this.changed.event;
  /** Fires once per proposal, whoever decided it (chat, diff editor, stop). */
  readonly onDidDecide = this.decided.event;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  /** Proposals still waiting for a decision. */
  pending(): string[] {
    return [...this.waiting.keys()];
  }

  /**
   * Show the change and wait. Resolves 'stopped' when `signal` aborts (the turn was stopped) or
   * the panel goes away; the change is then not applied either.
   */
  request(id: string, change: ProposedChange, signal: AbortSignal, column: vscode.ViewColumn): Promise<Decision> {
    if (signal.aborted) return Promise.resolve('stopped');
    const left = proposalUri(id, 'before', change.display);
    const right = proposalUri(id, 'after', change.display);
    this.contents.set(left.toString(), change.before ?? '');
    this.contents.set(right.toString(), change.after);
    const decision = new Promise<Decision>((resolve) => {
      this.waiting.set(id, { change, left, right, resolve });
    });
    const onAbort = (): void => {
      this.decide(id, 'stopped');
    };
    signal.addEventListener('abort', onAbort, { once: true });
    void this.showDiff(id, column);
    return decision.finally(() => signal.removeEventListener('abort', onAbort));
  }

  /** Record the decision for `id`; false when it was already decided (or never asked). */
  decide(id: string, decision: Decision, reason?: string): boolean {
    const waiting = this.waiting.get(id);
    if (waiting === undefined) return false;
    this.waiting.delete(id);
    const why = reason?.trim() ?? '';
    if (decision === 'rejected' && why !== '') this.reasons.set(id, why);
    waiting.resolve(decision);
    this.decided.fire({ id, decision });
    void this.closeDiff(waiting).finally(() => {
      this.contents.delete(waiting.left.toString());
      this.contents.delete(waiting.right.toString());
    });
    return true;
  }

  async showDiff(id: string, column: vscode.ViewColumn = vscode.ViewColumn.Active): Promise<void> {
    const waiting = this.waiting.get(id);
    if (waiting === undefined) return;
    const { change } = waiting;
    const what = change.before === null ? 'new file' : change.name === 'write' ? 'rewrite' : 'edit';
    await vscode.commands.executeCommand(
      'vscode.diff',
      waiting.left,
      waiting.right,
      `${change.display} (${what} proposed by the agent)`,
      { preview: true, preserveFocus: true, viewColumn: column },
    );
  }

  /** The reason given with the rejection of `id` (once). */
  takeReason(id: string): string | undefined {
    const reason = this.reasons.get(id);
    this.reasons.delete(id);
    return reason;
  }

  /** The proposal a diff editor shows (from either side's URI). */
  idOf(uri: vscode.Uri | undefined): string | undefined {
    if (uri?.scheme !== PROPOSAL_SCHEME) return undefined;
    const id = decodeURIComponent(uri.path.split('/')[1] ?? '');
    return this.waiting.has(id) ? id : undefined;
  }

  dispose(): void {
    for (const id of [...this.waiting.keys()]) this.decide(id, 'stopped');
    this.registration.dispose();
    this.changed.dispose();
    this.decided.dispose();
  }

  private async closeDiff(waiting: Waiting): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === waiting.right.toString());
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  }
}

function proposalUri(id: string, side: 'before' | 'after', display: string): vscode.Uri {
  // The file's own name last, so the diff editor picks its language (and icon) from it.
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${encodeURIComponent(id)}/${side}/${display}` });
}

/** The tool result the model reads when the change was not applied. */
export function notAppliedText(change: ProposedChange, decision: Exclude<Decision, 'accepted'>, reason?: string): string {
  if (decision === 'rejected') {
    const rejected = `Error: the user rejected the ${change.name} of ${change.display}; the file was not changed.`;
    return reason === undefined || reason.trim() === '' ? rejected : `${rejected} The user's reason: ${reason.trim()}`;
  }
  return `Error: the turn was stopped before the ${change.name} of ${change.display} was approved; the file was not changed.`;
}
