import { describe, expect, it } from 'vitest';
import { applyMention, findMentionQuery, moveSelection } from '../src/chat/mentions';

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
