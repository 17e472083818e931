/**
 * The prompt box: Enter sends (or queues while the agent works), Shift+Enter is a new line, Esc
 * stops the agent, ↑ in an empty box recalls earlier prompts (↓ goes forward again), and `@`
 * completes a session mention, shown as a chip with the session's label.
 *
 * The box is a plain textarea (native editing, undo, IME and screen-reader support); chips are
 * drawn by a backdrop element behind it that mirrors its text, and the mention markup is put back
 * in place of each chip's `@label` when the prompt is sent.
 */
import type { CandidateView } from '../shared/chatMessages';
import { byId, el } from './dom';
import {
  applyMention,
  expandMentions,
  findMentionQuery,
  type MentionQuery,
  mentionRanges,
  mentionToken,
  moveSelection,
  pruneMentions,
  type TrackedMention,
} from './mentions';

export interface PromptBoxEvents {
  submit(text: string): void;
  stop(): void;
  mentionQuery(requestId: number, query: string): void;
}

export class PromptBox {
  readonly textarea = byId<HTMLTextAreaElement>('prompt');
  private readonly backdrop = byId('prompt-backdrop');
  private readonly list = byId<HTMLUListElement>('mentions');
  private tracked: TrackedMention[] = [];
  private mentionAt: MentionQuery | undefined;
  private candidates: CandidateView[] = [];
  private selected = -1;
  private requestId = 0;
  private history: string[] = [];
  /** Index into history while recalling (history.length: not recalling). */
  private recall = 0;
  busy = false;

  constructor(private readonly events: PromptBoxEvents) {
    this.textarea.addEventListener('input', () => {
      this.recall = this.history.length;
      this.tracked = pruneMentions(this.textarea.value, this.tracked);
      this.drawChips();
      this.updateMentionQuery();
    });
    this.textarea.addEventListener('click', () => this.updateMentionQuery());
    this.textarea.addEventListener('scroll', () => {
      this.backdrop.scrollTop = this.textarea.scrollTop;
    });
    this.textarea.addEventListener('keydown', (e) => this.onKey(e));
  }

  /** The earlier prompts of the session, oldest first. */
  setHistory(prompts: string[]): void {
    this.history = prompts.filter((p) => p.trim() !== '');
    this.recall = this.history.length;
  }

  get text(): string {
    return this.textarea.value;
  }

  /** Put text into the box (a failed prompt, or queued prompts handed back). */
  setText(text: string): void {
    this.textarea.value = text;
    this.tracked = pruneMentions(text, this.tracked);
    this.drawChips();
    this.textarea.focus();
    this.textarea.setSelectionRange(text.length, text.length);
  }

  /** Take the prompt for sending: mentions expanded, the box emptied, history extended. */
  take(): string | undefined {
    const raw = this.textarea.value;
    if (raw.trim() === '') return undefined;
    // Trailing blanks (the space after a chip, a last Enter's newline) carry nothing.
    const text = expandMentions(raw, this.tracked).replace(/\s+$/, '');
    if (this.history[this.history.length - 1] !== raw) this.history.push(raw);
    this.recall = this.history.length;
    this.textarea.value = '';
    this.tracked = [];
    this.drawChips();
    this.closeMentions();
    return text;
  }

  /** Send what is in the box (Enter, or the Send button). */
  submit(): void {
    const text = this.take();
    if (text !== undefined) this.events.submit(text);
  }

  showCandidates(requestId: number, list: CandidateView[]): void {
    if (requestId !== this.requestId || this.mentionAt === undefined) return; // a stale answer
    this.candidates = list;
    this.selected = list.length > 0 ? 0 : -1;
    this.renderCandidates();
  }

  // --- keys ---------------------------------------------------------------------------------------

  private onKey(e: KeyboardEvent): void {
    if (e.isComposing) return;
    if (!this.list.hidden && this.candidates.length > 0) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        this.selected = moveSelection(this.selected, e.key === 'ArrowDown' ? 1 : -1, this.candidates.length);
        this.renderCandidates();
        e.preventDefault();
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        this.choose(this.selected);
        e.preventDefault();
        return;
      }
      if (e.key === 'Escape') {
        this.closeMentions();
        e.preventDefault();
        return;
      }
    }
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      this.submit();
      return;
    }
    if (e.key === 'Escape' && this.busy) {
      e.preventDefault();
      this.events.stop();
      return;
    }
    if (e.key === 'ArrowUp' && this.canRecall(-1)) {
      e.preventDefault();
      this.recallStep(-1);
      return;
    }
    if (e.key === 'ArrowDown' && this.canRecall(1)) {
      e.preventDefault();
      this.recallStep(1);
    }
  }

  /** ↑ works in an empty box or while showing a recalled prompt with the caret at its start. */
  private canRecall(direction: -1 | 1): boolean {
    const value = this.textarea.value;
    const recalling = this.recall < this.history.length && value === this.history[this.recall];
    if (direction < 0) {
      if (this.history.length === 0) return false;
      return value === '' || (recalling && this.textarea.selectionStart === 0 && this.recall > 0);
    }
    return recalling && this.textarea.selectionEnd === value.length;
  }

  private recallStep(direction: -1 | 1): void {
    this.recall = Math.max(0, Math.min(this.history.length, this.recall + direction));
    const text = this.history[this.recall] ?? '';
    this.textarea.value = text;
    this.tracked = [];
    this.drawChips();
    const caret = direction < 0 ? 0 : text.length;
    this.textarea.setSelectionRange(caret, caret);
  }

  // --- mentions -----------------------------------------------------------------------------------

  private updateMentionQuery(): void {
    const at = findMentionQuery(this.textarea.value, this.textarea.selectionStart ?? this.textarea.value.length);
    this.mentionAt = at;
    if (at === undefined) {
      this.closeMentions();
      return;
    }
    this.requestId += 1;
    this.events.mentionQuery(this.requestId, at.query);
  }

  private renderCandidates(): void {
    this.list.replaceChildren();
    if (this.candidates.length === 0) {
      this.closeMentions(false);
      return;
    }
    this.candidates.forEach((c, i) => {
      const li = el('li', i === this.selected ? 'selected' : '');
      li.id = `mention-option-${i}`;
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', String(i === this.selected));
      li.append(el('span', 'label', c.label), el('span', 'age', c.age));
      if (c.detail !== '') li.append(el('span', 'detail', c.detail));
      li.addEventListener('mousedown', (e) => {
        e.preventDefault(); // keep the caret in the textarea
        this.choose(i);
      });
      this.list.append(li);
    });
    this.list.hidden = false;
    this.textarea.setAttribute('aria-expanded', 'true');
    if (this.selected >= 0) {
      this.textarea.setAttribute('aria-activedescendant', `mention-option-${this.selected}`);
      this.list.children[this.selected]?.scrollIntoView({ block: 'nearest' });
    }
  }

  private choose(index: number): void {
    const candidate = this.candidates[index];
    if (candidate === undefined || this.mentionAt === undefined) return;
    const token = mentionToken(candidate.label, candidate.mention, this.tracked);
    const next = applyMention(this.textarea.value, this.mentionAt, token);
    if (!this.tracked.some((t) => t.token === token)) this.tracked.push({ token, mention: candidate.mention });
    this.textarea.value = next.text;
    this.textarea.setSelectionRange(next.cursor, next.cursor);
    this.drawChips();
    this.closeMentions();
    this.textarea.focus();
  }

  private closeMentions(forgetQuery = true): void {
    if (forgetQuery) this.mentionAt = undefined;
    this.candidates = [];
    this.selected = -1;
    this.list.hidden = true;
    this.list.replaceChildren();
    this.textarea.setAttribute('aria-expanded', 'false');
    this.textarea.removeAttribute('aria-activedescendant');
  }

  /** Mirror the text into the backdrop, each mention token wrapped as a chip. */
  private drawChips(): void {
    const text = this.textarea.value;
    const parts: (string | HTMLElement)[] = [];
    let at = 0;
    for (const r of mentionRanges(text, this.tracked)) {
      parts.push(text.slice(at, r.start));
      const chip = el('mark', 'chip', text.slice(r.start, r.end));
      chip.title = r.mention;
      parts.push(chip);
      at = r.end;
    }
    // A trailing newline needs a character after it to take up its line in the mirror.
    parts.push(`${text.slice(at)}\u200b`);
    this.backdrop.replaceChildren(...parts);
    this.backdrop.scrollTop = this.textarea.scrollTop;
    this.textarea.classList.toggle('has-chips', this.tracked.length > 0);
  }

  /** Mentions currently shown as chips (the e2e test reads them from the page). */
  chips(): TrackedMention[] {
    return [...this.tracked];
  }
}
