import { describe, expect, it } from 'vitest';
import { checkBaseUrl } from '../src/model/configure';
import { formatAge, mergeIntoPrompt, plural, titleFromPrompt } from '../src/shared/text';

describe('plural', () => {
  it('agrees with the count', () => {
    expect(plural(0, 'message')).toBe('0 messages');
    expect(plural(1, 'message')).toBe('1 message');
    expect(plural(2, 'file')).toBe('2 files');
    expect(plural(1, 'entry', 'entries')).toBe('1 entry');
    expect(plural(3, 'entry', 'entries')).toBe('3 entries');
  });
});

describe('formatAge', () => {
  const now = Date.UTC(2025, 0, 31, 12);
  const ago = (ms: number) => formatAge(now - ms, now);
  it('says how long ago in one unit', () => {
    expect(ago(10_000)).toBe('just now');
    expect(ago(5 * 60_000)).toBe('5 min ago');
    expect(ago(3 * 3_600_000)).toBe('3 h ago');
    expect(ago(26 * 3_600_000)).toBe('yesterday');
    expect(ago(5 * 86_400_000)).toBe('5 days ago');
    expect(ago(40 * 86_400_000)).toBe('a month ago');
    expect(ago(800 * 86_400_000)).toBe('2 years ago');
    expect(formatAge(now + 60_000, now)).toBe('just now'); // a clock a little ahead
  });
});

describe('titleFromPrompt', () => {
  it('takes the first non-blank line, mentions as their labels', () => {
    expect(titleFromPrompt('\n  Fix the parser  \nmore')).toBe('Fix the parser');
    expect(titleFromPrompt('Compare with @[research](dsh-session:InJlc2VhcmNoIg) please')).toBe('Compare with @research please');
    expect(titleFromPrompt('   ')).toBe('');
  });
  it('cuts long lines at a word boundary', () => {
    const title = titleFromPrompt('Please refactor the configuration loader so that every setting is validated once, at start');
    expect(title).toBe('Please refactor the configuration loader so that every…');
    expect(title.length).toBeLessThanOrEqual(61);
  });
});

describe('checkBaseUrl', () => {
  it('accepts http(s) base URLs only', () => {
    expect(checkBaseUrl('https://api.openai.com/v1')).toBeUndefined();
    expect(checkBaseUrl('http://127.0.0.1:11434/v1')).toBeUndefined();
    expect(checkBaseUrl('ftp://x/v1')).toBe('Only http:// and https:// endpoints');
    expect(checkBaseUrl('not a url')).toBe('Not a URL');
    expect(checkBaseUrl('https://api.openai.com/v1/chat/completions')).toBe('Leave out /chat/completions: the part before it');
    expect(checkBaseUrl('')).toMatch(/^The base URL/);
  });
});

describe('mergeIntoPrompt', () => {
  it('merges returned prompts after what is in the box', () => {
    expect(mergeIntoPrompt('', ['a', 'b'])).toBe('a\n\nb');
    expect(mergeIntoPrompt('typing', ['a'])).toBe('typing\n\na');
    expect(mergeIntoPrompt('  ', [])).toBe('');
  });
});
