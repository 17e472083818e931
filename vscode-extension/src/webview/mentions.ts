/**
 * `@` completion of session mentions in the prompt box. Pure text functions shared by the
 * webview (which owns the textarea) and the unit tests; the candidates themselves come from
 * `dsh/sessionReferences/candidates`, and the inserted text is the candidate's `mention`
 * verbatim, because that is what `dsh/step/prepare` resolves.
 */

export interface MentionQuery {
  /** Index of the `@`. */
  start: number;
  /** Index just past the query (the cursor). */
  end: number;
  /** Text typed after the `@`, possibly empty. */
  query: string;
}

/**
 * The mention being typed at `cursor`, if any: an `@` at the start of the text or after
 * whitespace (so `user@example.com` does not trigger), followed by non-space characters up to
 * the cursor.
 */
export function findMentionQuery(text: string, cursor: number): MentionQuery | undefined {
  if (cursor < 0 || cursor > text.length) return undefined;
  let i = cursor - 1;
  while (i >= 0) {
    const ch = text[i]!;
    if (ch === '@') break;
    if (/\s/.test(ch)) return undefined;
    i--;
  }
  if (i < 0) return undefined;
  if (i > 0 && !/\s/.test(text[i - 1]!)) return undefined;
  const query = text.slice(i + 1, cursor);
  if (query.includes('@')) return undefined;
  return { start: i, end: cursor, query };
}

/** Replace the typed `@query` with `mention` and a trailing space; returns the new cursor too. */
export function applyMention(
  text: string,
  at: MentionQuery,
  mention: string,
): { text: string; cursor: number } {
  const after = text.slice(at.end);
  const spacer = after.startsWith(' ') ? '' : ' ';
  const next = text.slice(0, at.start) + mention + spacer + after;
  return { text: next, cursor: at.start + mention.length + 1 };
}

/** Keep the highlighted row in range as the candidate list changes or the arrows wrap. */
export function moveSelection(current: number, delta: number, count: number): number {
  if (count <= 0) return -1;
  if (current < 0) return delta >= 0 ? 0 : count - 1;
  return (((current + delta) % count) + count) % count;
}

// --- chips --------------------------------------------------------------------------------------
//
// The prompt box shows an inserted mention as `@label`, drawn as a chip by a backdrop behind the
// textarea, and keeps the mention markup (`@[label](dsh-session:…)`, which dsh/step/prepare
// resolves) aside; the markup is put back when the prompt is sent. A textarea keeps native
// editing, undo, IME and accessibility that a contenteditable would have to rebuild.

export interface TrackedMention {
  /** What the prompt box shows, e.g. "@Fix the parser". */
  token: string;
  /** What is sent instead. */
  mention: string;
}

/** The token for a candidate: `@label`, made unique when another session already has it. */
export function mentionToken(label: string, mention: string, tracked: readonly TrackedMention[]): string {
  const base = `@${label.replace(/\s+/g, ' ').trim() || 'session'}`;
  for (let n = 1; ; n++) {
    const token = n === 1 ? base : `${base} (${n})`;
    const owner = tracked.find((t) => t.token === token);
    if (owner === undefined || owner.mention === mention) return token;
  }
}

const TOKEN_END = /[\s.,;:!?)\]}'"]/;

/** Where each tracked token stands in `text` (as a whole token), in text order, not overlapping. */
export function mentionRanges(text: string, tracked: readonly TrackedMention[]): { start: number; end: number; mention: string }[] {
  const found: { start: number; end: number; mention: string }[] = [];
  // Longer tokens first, so "@ws (2)" is not taken for "@ws".
  for (const t of [...tracked].sort((a, b) => b.token.length - a.token.length)) {
    let from = 0;
    for (;;) {
      const start = text.indexOf(t.token, from);
      if (start < 0) break;
      const end = start + t.token.length;
      from = start + 1;
      const before = start === 0 || /\s/.test(text[start - 1]!);
      const after = end === text.length || TOKEN_END.test(text[end]!);
      const overlaps = found.some((f) => start < f.end && f.start < end);
      if (before && after && !overlaps) found.push({ start, end, mention: t.mention });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/** The prompt as sent: every token replaced by its mention markup. */
export function expandMentions(text: string, tracked: readonly TrackedMention[]): string {
  let out = '';
  let at = 0;
  for (const r of mentionRanges(text, tracked)) {
    out += text.slice(at, r.start) + r.mention;
    at = r.end;
  }
  return out + text.slice(at);
}

/** Forget mentions whose token was deleted from the text. */
export function pruneMentions(text: string, tracked: readonly TrackedMention[]): TrackedMention[] {
  const present = new Set(mentionRanges(text, tracked).map((r) => r.mention));
  return tracked.filter((t) => present.has(t.mention));
}
