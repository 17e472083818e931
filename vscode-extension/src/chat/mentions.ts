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
