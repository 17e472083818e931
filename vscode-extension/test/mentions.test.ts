import { describe, expect, it } from 'vitest';
import {
  applyMention,
  expandMentions,
  findMentionQuery,
  mentionRanges,
  mentionToken,
  moveSelection,
  pruneMentions,
  type TrackedMention,
} from '../src/webview/mentions';

describe('findMentionQuery', () => {
  it.each([
    ['@', 1, { start: 0, end: 1, query: '' }],
    ['@fix', 4, { start: 0, end: 4, query: 'fix' }],
    ['see @fix', 8, { start: 4, end: 8, query: 'fix' }],
    ['see @fix the bug', 8, { start: 4, end: 8, query: 'fix' }],
    ['see @fix', 6, { start: 4, end: 6, query: 'f' }],
    ['line\n@ab', 8, { start: 5, end: 8, query: 'ab' }],
  ])('finds the mention in %j at %i', (text, cursor, expected) => {
    expect(findMentionQuery(text, cursor)).toEqual(expected);
  });

  it.each([
    ['mail me@example.com', 19],
    ['see @fix the', 12],
    ['no at sign', 5],
    ['@@x', 3],
    ['', 0],
    ['@x', 5],
  ])('finds none in %j at %i', (text, cursor) => {
    expect(findMentionQuery(text, cursor)).toBeUndefined();
  });
});

describe('applyMention', () => {
  it('replaces the typed query with the mention and a space, putting the cursor after it', () => {
    const text = 'compare with @fi please';
    const at = findMentionQuery(text, 16)!;
    const out = applyMention(text, at, '@session:1234');
    expect(out.text).toBe('compare with @session:1234 please');
    expect(out.text.slice(0, out.cursor)).toBe('compare with @session:1234 ');
  });

  it('adds a space at the end of the prompt', () => {
    const out = applyMention('@', findMentionQuery('@', 1)!, '@s:1');
    expect(out).toEqual({ text: '@s:1 ', cursor: 5 });
  });
});

describe('moveSelection', () => {
  it('wraps around and starts from the right end', () => {
    expect(moveSelection(-1, 1, 3)).toBe(0);
    expect(moveSelection(-1, -1, 3)).toBe(2);
    expect(moveSelection(2, 1, 3)).toBe(0);
    expect(moveSelection(0, -1, 3)).toBe(2);
    expect(moveSelection(0, 1, 0)).toBe(-1);
  });
});

describe('mention chips', () => {
  const parser: TrackedMention = { token: '@Fix the parser', mention: '@[Fix the parser](dsh-session:ImRlbW8i)' };
  const ws: TrackedMention = { token: '@ws', mention: '@[ws](dsh-session:IndzMSI)' };
  const ws2: TrackedMention = { token: '@ws (2)', mention: '@[ws](dsh-session:IndzMiI)' };

  it('shows the label, unique per session', () => {
    expect(mentionToken('Fix  the\nparser ', 'm1', [])).toBe('@Fix the parser');
    expect(mentionToken('ws', ws.mention, [ws])).toBe('@ws'); // the same session again
    expect(mentionToken('ws', ws2.mention, [ws])).toBe('@ws (2)');
    expect(mentionToken('  ', 'm', [])).toBe('@session');
  });

  it('sends the mention markup in place of each whole token', () => {
    const text = 'Compare @Fix the parser with @ws (2), not @ws.';
    expect(expandMentions(text, [parser, ws, ws2])).toBe(
      `Compare ${parser.mention} with ${ws2.mention}, not ${ws.mention}.`,
    );
    // Not inside a longer word, and text without tokens is left alone.
    expect(expandMentions('mail@ws @wsx', [ws])).toBe('mail@ws @wsx');
    expect(expandMentions('plain', [ws])).toBe('plain');
  });

  it('locates tokens for the chip backdrop, in order', () => {
    expect(mentionRanges('@ws and @ws (2)', [ws, ws2]).map((r) => [r.start, r.end])).toEqual([
      [0, 3],
      [8, 15],
    ]);
  });

  it('forgets mentions whose token was edited away', () => {
    expect(pruneMentions('see @w', [ws, parser])).toEqual([]);
    expect(pruneMentions('see @ws', [ws, parser])).toEqual([ws]);
  });
});
