import { describe, expect, it } from 'vitest';
import { compose, diffLines, type Hunk, keptOf, keptText, keptVerdict, lineSpan, splitLines, unifiedDiff } from '../src/chat/hunks';

/** A small seeded generator (mulberry32), so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;

/** Texts from few distinct lines, so repeats make the alignment ambiguous; some end without "\n", some use "\r\n". */
function randomText(r: () => number): string {
  const eol = r() < 0.2 ? '\r\n' : '\n';
  const count = Math.floor(r() * 12);
  const lines = Array.from({ length: count }, () => pick(r, ['a', 'b', 'c', '', 'return x', '}']) + eol);
  if (lines.length > 0 && r() < 0.3) lines[lines.length - 1] = lines[lines.length - 1]!.replace(/\r?\n$/, '');
  return lines.join('');
}

/** Length of a longest common subsequence of lines, by the textbook table (the oracle for minimality). */
function lcsLength(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let diag = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = x === b[j - 1] ? diag + 1 : Math.max(row[j]!, row[j - 1]!);
      diag = up;
    }
  }
  return row[b.length]!;
}

const changedLines = (hunks: readonly Hunk[]): number => hunks.reduce((n, h) => n + h.beforeLines.length + h.afterLines.length, 0);

describe('diffLines and compose', () => {
  it('keeping every hunk gives the text after, keeping none the text before, and the script is a shortest one', () => {
    for (let seed = 1; seed <= 600; seed++) {
      const r = rng(seed);
      const before = randomText(r);
      const after = randomText(r);
      const hunks = diffLines(before, after);
      expect(compose(before, hunks, () => true), `seed ${seed}`).toBe(after);
      expect(compose(before, hunks, () => false), `seed ${seed}`).toBe(before);
      const a = splitLines(before);
      const b = splitLines(after);
      expect(changedLines(hunks), `seed ${seed}`).toBe(a.length + b.length - 2 * lcsLength(a, b));
      // In order, apart (a shared line between any two), and never empty.
      hunks.forEach((h, i) => {
        expect(h.beforeLines.length + h.afterLines.length).toBeGreaterThan(0);
        const next = hunks[i + 1];
        if (next !== undefined) expect(next.beforeStart).toBeGreaterThan(h.beforeStart + h.beforeLines.length);
      });
    }
  });

  it('any subset of known hunks composes to exactly the text with those hunks and no others', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      // Built from known parts: unique shared lines between hunks whose old and new lines are
      // unique too, so the hunks the diff must find are known in advance.
      const count = 1 + Math.floor(r() * 5);
      const shared = (i: number): string[] => Array.from({ length: 1 + Math.floor(r() * 3) }, (_, j) => `shared ${i}.${j}\n`);
      const parts = Array.from({ length: count }, (_, i) => ({
        old: Array.from({ length: Math.floor(r() * 3) }, (_, j) => `old ${i}.${j}\n`),
        new: Array.from({ length: 0 }, () => ''),
        gap: shared(i + 1),
      }));
      for (const [i, p] of parts.entries()) {
        p.new = Array.from({ length: (p.old.length === 0 ? 1 : 0) + Math.floor(r() * 3) }, (_, j) => `new ${i}.${j}\n`);
      }
      const head = r() < 0.5 ? shared(0) : [];
      const build = (keep: (i: number) => boolean): string =>
        [...head, ...parts.flatMap((p, i) => [...(keep(i) ? p.new : p.old), ...p.gap])].join('');
      const before = build(() => false);
      const hunks = diffLines(before, build(() => true));
      expect(hunks.map((h) => [h.beforeLines, h.afterLines]), `seed ${seed}`).toEqual(parts.map((p) => [p.old, p.new]));
      const subset = parts.map(() => r() < 0.5);
      expect(compose(before, hunks, (i) => subset[i]!), `seed ${seed}`).toBe(build((i) => subset[i]!));
    }
  });

  it('keeps line endings and a missing final newline exactly', () => {
    const before = 'one\r\ntwo\r\nmid\r\nthree';
    const after = 'one\r\nTWO\r\nmid\r\nthree\r\nfour';
    const hunks = diffLines(before, after);
    expect(hunks).toEqual([
      { beforeStart: 1, beforeLines: ['two\r\n'], afterStart: 1, afterLines: ['TWO\r\n'] },
      { beforeStart: 3, beforeLines: ['three'], afterStart: 3, afterLines: ['three\r\n', 'four'] },
    ]);
    expect(compose(before, hunks, (i) => i === 0)).toBe('one\r\nTWO\r\nmid\r\nthree');
    expect(compose(before, hunks, (i) => i === 1)).toBe('one\r\ntwo\r\nmid\r\nthree\r\nfour');
  });

  it('a new file is one hunk of added lines, and equal texts have none', () => {
    expect(diffLines('', 'a\nb\n')).toEqual([{ beforeStart: 0, beforeLines: [], afterStart: 0, afterLines: ['a\n', 'b\n'] }]);
    expect(diffLines('same\n', 'same\n')).toEqual([]);
  });

  it('a rewrite past the edit budget is one hunk between the shared first and last lines', () => {
    const before = ['top\n', ...Array.from({ length: 1500 }, (_, i) => `a${i}\n`), 'bottom\n'].join('');
    const after = ['top\n', ...Array.from({ length: 1500 }, (_, i) => `b${i}\n`), 'bottom\n'].join('');
    const hunks = diffLines(before, after);
    expect(hunks).toHaveLength(1);
    expect(hunks[0]!.beforeStart).toBe(1);
    expect(hunks[0]!.beforeLines).toHaveLength(1500);
    expect(compose(before, hunks, () => true)).toBe(after);
  });
});

describe('how hunks are told', () => {
  it('names line spans 1-based', () => {
    expect(lineSpan(3, 1)).toBe('line 4');
    expect(lineSpan(3, 3)).toBe('lines 4-6');
    expect(lineSpan(3, 0)).toBe('after line 3');
    expect(lineSpan(0, 0)).toBe('at the start');
  });

  it('prints a unified diff, marks a missing final newline, and cuts at the limit', () => {
    const hunks = diffLines('a\nb\nc', 'a\nB\nc');
    expect(unifiedDiff(hunks, 1000)).toBe('@@ -2,1 +2,1 @@\n-b\n+B\n');
    expect(unifiedDiff(diffLines('x', 'y'), 1000)).toBe('@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n');
    // 18 characters of header and 3 of each line: 28 holds three whole lines, not a fourth.
    const long = unifiedDiff(diffLines('', 'z\n'.repeat(100)), 28);
    expect(long).toBe(`@@ -1,0 +1,100 @@\n+z\n+z\n+z\n[diff cut: ${18 + 300} characters in all]\n`);
  });
});

describe('what the model and the card are told', () => {
  const before = '# Notes\nalpha\nbeta\ngamma\ndelta\n';
  const after = '# Notes\nALPHA\nbeta\nGAMMA\ndelta\nepsilon\n';

  it('says nothing more when the proposal was written as it was', () => {
    const kept = keptOf(before, after, after);
    expect(kept).toEqual({ kind: 'all' });
    expect(keptText(kept)).toBe('');
    expect(keptVerdict(kept)).toBeUndefined();
  });

  it('names the hunks applied and rejected, with the rejected ones as a diff', () => {
    const hunks = diffLines(before, after);
    expect(hunks).toHaveLength(3);
    const kept = keptOf(before, after, compose(before, hunks, (i) => i !== 1));
    expect(kept).toMatchObject({ kind: 'some', applied: [0, 2], rejected: [1] });
    expect(keptVerdict(kept)).toBe('2 of 3 hunks accepted: written.');
    expect(keptText(kept)).toBe(
      ' The user accepted 2 of the 3 hunks you proposed and rejected the others; only the accepted ones were written.' +
        ' Hunks are numbered in file order, with line numbers of the file before the change.' +
        ' Applied: hunk 1 (line 2), hunk 3 (after line 5). Rejected, so these lines are as they were before: hunk 2 (line 4).' +
        ' The rejected hunks, not written:\n@@ -4,1 +4,1 @@\n-gamma\n+GAMMA\n',
    );
  });

  it('tells an edited proposal by the diff from the proposal to what was written', () => {
    const final = '# Notes\nALPHA\nbeta\nGamma, by hand\ndelta\nepsilon\n';
    const kept = keptOf(before, after, final);
    expect(kept.kind).toBe('edited');
    expect(keptVerdict(kept)).toBe('Accepted with your edits: written.');
    expect(keptText(kept)).toBe(
      ' The user edited your proposal before accepting it, so the file is not what you proposed.' +
        ' The change from your proposal to what was written:\n@@ -4,1 +4,1 @@\n-GAMMA\n+Gamma, by hand\n',
    );
  });
});
