/**
 * The agent's `write` and `edit` calls wait for the user: the proposed change opens in VS Code's
 * diff editor (both sides are virtual files served from memory, so the diff shows exactly what
 * Accept writes), and the call resumes with the user's decision, taken in the chat or from the
 * diff editor's title bar. Nothing is written before Accept.
 *
 * The text before is read-only; the proposed side is editable, and Accept writes what the user
 * left there (typed and unsaved, or saved with Ctrl+S, which only saves it here). The model is
 * then told it was edited, with a diff from its proposal.
 *
 * Each hunk of the proposed side has its own Accept and Reject (CodeLens above it, and the
 * editor's context menu at the cursor). Rejecting a hunk takes it out of the proposed side, so
 * that side is always what Accept writes; once every hunk left is accepted the proposal is
 * accepted, and once none is left it is rejected. The model is told which hunks were written.
 */
import * as vscode from 'vscode';
import type { ProposedChange, ToolOutcome } from '../tools';
import { compose, diffLines, type Hunk, keptOf, keptText, keptVerdict, sameHunk, splitLines } from './hunks';

export const PROPOSAL_SCHEME = 'dsh-proposal';

export type Decision = 'accepted' | 'rejected' | 'stopped';

interface Waiting {
  change: ProposedChange;
  left: vscode.Uri;
  right: vscode.Uri;
  /** The proposal's hunks, numbered for people and the model in this order. */
  proposed: Hunk[];
  /** Hunks of the proposed side the user accepted one by one (the same change at the same place). */
  accepted: Hunk[];
  resolve(decision: Decision): void;
}

/** A hunk of the proposed side as it is now, with its number in the proposal (undefined: the user's own). */
export interface HunkAt {
  hunk: Hunk;
  index: number;
  number: number | undefined;
  accepted: boolean;
}

export class EditApprovals implements vscode.FileSystemProvider, vscode.CodeLensProvider, vscode.Disposable {
  /** Each side's text, by URI; the proposed side's is what the user last saved there. */
  private readonly contents = new Map<string, string>();
  /** When each side last changed, so the editor sees a save or a rejected hunk as new. */
  private readonly mtimes = new Map<string, number>();
  private readonly waiting = new Map<string, Waiting>();
  /** Why the user rejected a proposal, when they said (read once by whoever answers the model). */
  private readonly reasons = new Map<string, string>();
  /** The text an accepted proposal writes, when it is not the proposal's own (read once, on apply). */
  private readonly finals = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly decided = new vscode.EventEmitter<{ id: string; decision: Decision; verdict?: string }>();
  private readonly registrations: vscode.Disposable[];
  readonly onDidChangeFile = this.changed.event;
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  /** Fires once per proposal, whoever decided it (chat, diff editor, stop); `verdict` when only part was kept. */
  readonly onDidDecide = this.decided.event;

  constructor() {
    this.registrations = [
      vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider({ scheme: PROPOSAL_SCHEME }, this),
    ];
  }

  // --- the two sides as files: the text before read-only, the proposed side writable ------------

  stat(uri: vscode.Uri): vscode.FileStat {
    const text = this.contents.get(uri.toString());
    if (text === undefined) throw vscode.FileSystemError.FileNotFound(uri);
    const mtime = this.mtimes.get(uri.toString()) ?? 0;
    const size = Buffer.byteLength(text, 'utf8');
    return { type: vscode.FileType.File, ctime: 0, mtime, size, ...(isProposedSide(uri) ? {} : { permissions: vscode.FilePermission.Readonly }) };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const text = this.contents.get(uri.toString());
    if (text === undefined) throw vscode.FileSystemError.FileNotFound(uri);
    return Buffer.from(text, 'utf8');
  }

  /** A save of the proposed side: kept here, as what Accept writes. Nothing else is writable. */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.contents.has(uri.toString())) throw vscode.FileSystemError.FileNotFound(uri);
    if (!isProposedSide(uri)) throw vscode.FileSystemError.NoPermissions(uri);
    this.store(uri, Buffer.from(content).toString('utf8'));
    this.lensesChanged.fire();
  }

  watch(): vscode.Disposable {
    // Changes are reported for every side anyway (onDidChangeFile); there is nothing to set up.
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
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
    this.store(left, change.before ?? '');
    this.store(right, change.after);
    const proposed = diffLines(change.before ?? '', change.after);
    const decision = new Promise<Decision>((resolve) => {
      this.waiting.set(id, { change, left, right, proposed, accepted: [], resolve });
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
    let verdict: string | undefined;
    if (decision === 'accepted') {
      const final = this.draftOf(waiting);
      const before = waiting.change.before ?? '';
      // Every hunk rejected: nothing to write, which is a rejection (and no empty new file).
      if (final === before && waiting.change.after !== before) decision = 'rejected';
      else if (final !== waiting.change.after) {
        this.finals.set(id, final);
        verdict = keptVerdict(keptOf(before, waiting.change.after, final));
      }
    }
    this.waiting.delete(id);
    const why = reason?.trim() ?? '';
    if (decision === 'rejected' && why !== '') this.reasons.set(id, why);
    waiting.resolve(decision);
    this.decided.fire({ id, decision, ...(verdict !== undefined ? { verdict } : {}) });
    this.lensesChanged.fire();
    void this.closeDiff(waiting).finally(() => {
      for (const uri of [waiting.left, waiting.right]) {
        this.contents.delete(uri.toString());
        this.mtimes.delete(uri.toString());
      }
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

  /**
   * Write what the user accepted for `id`: the proposal, or the part of it they kept, through
   * the change's own checks; the tool result then says which hunks were written.
   */
  async apply(id: string, change: ProposedChange): Promise<ToolOutcome> {
    const final = this.finals.get(id);
    this.finals.delete(id);
    if (final === undefined) return change.apply();
    const outcome = await change.applyText(final);
    if (outcome.isError) return outcome;
    const told = keptText(keptOf(change.before ?? '', change.after, final));
    return told === '' ? outcome : { ...outcome, text: `${outcome.text}.${told}` };
  }

  /** The hunks the proposed side of `id` shows now, each with its number in the proposal. */
  hunksOf(id: string): HunkAt[] {
    const waiting = this.waiting.get(id);
    if (waiting === undefined) return [];
    return diffLines(waiting.change.before ?? '', this.draftOf(waiting)).map((hunk, index) => {
      const at = waiting.proposed.findIndex((p) => sameHunk(p, hunk));
      return { hunk, index, number: at < 0 ? undefined : at + 1, accepted: waiting.accepted.some((a) => sameHunk(a, hunk)) };
    });
  }

  /**
   * Accept or reject one hunk of `id`, found by where it starts in the text before (`at`). A
   * rejected hunk leaves the proposed side; the proposal is decided once no hunk is left undecided.
   * False when there is no such proposal or hunk.
   */
  async decideHunk(id: string, at: number, accept: boolean): Promise<boolean> {
    const waiting = this.waiting.get(id);
    const current = this.hunksOf(id);
    const target = current.find((h) => h.hunk.beforeStart === at);
    if (waiting === undefined || target === undefined) return false;
    if (accept) {
      if (!target.accepted) waiting.accepted.push(target.hunk);
    } else {
      waiting.accepted = waiting.accepted.filter((a) => !sameHunk(a, target.hunk));
      await this.revertHunk(waiting, current, target);
      if (this.waiting.get(id) !== waiting) return true; // decided meanwhile
    }
    const left = this.hunksOf(id);
    if (left.length === 0) this.decide(id, 'rejected');
    else if (left.every((h) => h.accepted)) this.decide(id, 'accepted');
    else this.lensesChanged.fire();
    return true;
  }

  /** The proposal and hunk at the cursor of `editor` (either side of its diff), if any. */
  hunkAtCursor(editor: vscode.TextEditor | undefined): { id: string; at: number } | undefined {
    const id = this.idOf(editor?.document.uri);
    if (editor === undefined || id === undefined) return undefined;
    const isBefore = editor.document.uri.path.split('/')[2] === 'before';
    const line = editor.selection.active.line;
    const hit = this.hunksOf(id).find(({ hunk }) => {
      const start = isBefore ? hunk.beforeStart : hunk.afterStart;
      const count = isBefore ? hunk.beforeLines.length : hunk.afterLines.length;
      // A hunk with no lines on this side sits between two lines: the one after it counts.
      return line >= start && line < start + Math.max(count, 1);
    });
    return hit === undefined ? undefined : { id, at: hit.hunk.beforeStart };
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const id = this.idOf(document.uri);
    if (id === undefined || document.uri.toString() !== this.waiting.get(id)?.right.toString()) return [];
    const hunks = this.hunksOf(id);
    const total = this.waiting.get(id)!.proposed.length;
    return hunks.flatMap(({ hunk, number, accepted }) => {
      const line = Math.min(hunk.afterStart, Math.max(document.lineCount - 1, 0));
      const range = new vscode.Range(line, 0, line, 0);
      const name = number === undefined ? 'your change' : `hunk ${number} of ${total}`;
      const args = [{ id, at: hunk.beforeStart }];
      if (accepted) {
        return [
          new vscode.CodeLens(range, { title: `$(check) Accepted ${name}`, command: '' }),
          new vscode.CodeLens(range, { title: 'Reject', command: 'dsh.proposal.rejectHunk', arguments: args, tooltip: `Reject ${name}` }),
        ];
      }
      return [
        new vscode.CodeLens(range, { title: `Accept ${name}`, command: 'dsh.proposal.acceptHunk', arguments: args, tooltip: `Write ${name} on Accept` }),
        new vscode.CodeLens(range, { title: `Reject ${name}`, command: 'dsh.proposal.rejectHunk', arguments: args, tooltip: `Take ${name} out of the proposal` }),
      ];
    });
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
    for (const r of this.registrations) r.dispose();
    this.changed.dispose();
    this.lensesChanged.dispose();
    this.decided.dispose();
  }

  /**
   * What Accept writes now: the proposed side as it stands, with what the user typed there and
   * did not save. An unedited side is read from here rather than from its editor, which would
   * have made a file's mixed line endings all one kind.
   */
  private draftOf(waiting: Waiting): string {
    const open = this.openDocument(waiting.right);
    if (open?.isDirty === true) return open.getText();
    return this.contents.get(waiting.right.toString()) ?? waiting.change.after;
  }

  private openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  }

  /**
   * Put one hunk of the proposed side back as it was before. In a side the user is editing (unsaved
   * changes), the hunk's lines are replaced in the editor, keeping the rest of their typing;
   * otherwise the side's text changes here and the editor reloads it.
   */
  private async revertHunk(waiting: Waiting, current: HunkAt[], target: HunkAt): Promise<void> {
    const open = this.openDocument(waiting.right);
    if (open?.isDirty === true) {
      const lines = splitLines(open.getText());
      const start = lines.slice(0, target.hunk.afterStart).join('').length;
      const end = start + target.hunk.afterLines.join('').length;
      const edit = new vscode.WorkspaceEdit();
      edit.replace(open.uri, new vscode.Range(open.positionAt(start), open.positionAt(end)), target.hunk.beforeLines.join(''));
      await vscode.workspace.applyEdit(edit);
      return;
    }
    const hunks = current.map((h) => h.hunk);
    this.store(waiting.right, compose(waiting.change.before ?? '', hunks, (i) => i !== target.index));
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri: waiting.right }]);
  }

  private store(uri: vscode.Uri, text: string): void {
    this.contents.set(uri.toString(), text);
    // Strictly later than before, even within one millisecond, so the editor never takes a
    // changed side for the one it already has.
    this.mtimes.set(uri.toString(), Math.max(Date.now(), (this.mtimes.get(uri.toString()) ?? 0) + 1));
  }

  private async closeDiff(waiting: Waiting): Promise<void> {
    // Saved first (here, not to disk) so closing an edited proposed side asks nothing.
    const open = this.openDocument(waiting.right);
    if (open?.isDirty === true) await open.save();
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === waiting.right.toString());
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  }
}

/** The side Accept writes (`/<id>/after/<file>`); the other is the text before, read-only. */
function isProposedSide(uri: vscode.Uri): boolean {
  return uri.path.split('/')[2] === 'after';
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
