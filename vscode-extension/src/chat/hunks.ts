/**
 * Line hunks of a proposed change, so the user can keep some of them and not others.
 *
 * No vscode import: pure text work, unit-tested on its own (test/hunks.test.ts). Lines keep their
 * terminators ("\n" or "\r\n"), so joining them gives the exact text back and composing a subset
 * of hunks never changes a line ending or the presence of a final newline.
 */

/** One run of changed lines: `beforeLines` (from line `beforeStart`) become `afterLines`. */
export interface Hunk {
  /** 0-based index, in the text before, of the first line replaced (or where lines are inserted). */
  beforeStart: number;
  beforeLines: string[];
  /** 0-based index, in the text after, of the first line of `afterLines`. */
  afterStart: number;
  afterLines: string[];
}

/** The text's lines, each with its terminator; the last one may have none. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * Past this many differences the Myers search stops and the middle (what is left once the common
 * first and last lines are set aside) is one hunk: its trace grows with the square of the count,
 * and a rewrite that different is not one a user picks apart line by line.
 */
const MAX_EDIT_DISTANCE = 1000;

/** The hunks that turn `before` into `after`, in order, none overlapping or touching. */
export function diffLines(before: string, after: string): Hunk[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  if (midA.length === 0 && midB.length === 0) return [];
  const common = commonPairs(midA, midB);
  const hunks: Hunk[] = [];
  let x = 0;
  let y = 0;
  for (const [cx, cy] of [...(common ?? []), [midA.length, midB.length] as const]) {
    if (cx > x || cy > y) {
      hunks.push({ beforeStart: head + x, beforeLines: midA.slice(x, cx), afterStart: head + y, afterLines: midB.slice(y, cy) });
    }
    x = cx + 1;
    y = cy + 1;
  }
  return hunks;
}

/**
 * The lines `a` and `b` have in common along a shortest edit script (Myers, 1986), as index
 * pairs in ascending order; undefined when more than MAX_EDIT_DISTANCE edits are needed.
 */
function commonPairs(a: readonly string[], b: readonly string[]): Array<readonly [number, number]> | undefined {
  const n = a.length;
  const m = b.length;
  // v[k] is the furthest x reached on diagonal k = x - y; each step's v is kept, over the
  // diagonals that step could reach, to walk the path back.
  const trace: Int32Array[] = [];
  let v = new Int32Array(3).fill(0);
  const at = (row: Int32Array, d: number, k: number): number => row[k + d + 1]!;
  for (let d = 0; d <= Math.min(n + m, MAX_EDIT_DISTANCE); d++) {
    const next = new Int32Array(2 * d + 3);
    for (let k = -d; k <= d; k += 2) {
      const prevD = Math.max(d - 1, 0);
      const down = k === -d || (k !== d && at(v, prevD, k - 1) < at(v, prevD, k + 1));
      let x = d === 0 ? 0 : down ? at(v, prevD, k + 1) : at(v, prevD, k - 1) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[k + d + 1] = x;
      if (x >= n && y >= m) {
        trace.push(next);
        return backtrack(trace, a.length, b.length);
      }
    }
    trace.push(next);
    v = next;
  }
  return undefined;
}

function backtrack(trace: readonly Int32Array[], n: number, m: number): Array<readonly [number, number]> {
  const pairs: Array<readonly [number, number]> = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const k = x - y;
    if (d === 0) {
      while (x > 0 && y > 0) pairs.push([--x, --y]);
      break;
    }
    const prev = trace[d - 1]!;
    const at = (kk: number): number => prev[kk + (d - 1) + 1]!;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    // The snake of step d, then the one edit that led into it.
    const startX = down ? prevX : prevX + 1;
    while (x > startX) pairs.push([--x, --y]);
    x = prevX;
    y = prevY;
  }
  return pairs.reverse();
}

/**
 * `before` with the hunks `keep` says yes to applied and the others left out. The hunks must be
 * those of diffLines(before, after): keeping all gives `after`, keeping none gives `before`.
 */
export function compose(before: string, hunks: readonly Hunk[], keep: (index: number) => boolean): string {
  const lines = splitLines(before);
  const out: string[] = [];
  let at = 0;
  hunks.forEach((h, i) => {
    out.push(...lines.slice(at, h.beforeStart), ...(keep(i) ? h.afterLines : h.beforeLines));
    at = h.beforeStart + h.beforeLines.length;
  });
  out.push(...lines.slice(at));
  return out.join('');
}

/** Two hunks are the same change at the same place. */
export function sameHunk(p: Hunk, q: Hunk): boolean {
  return p.beforeStart === q.beforeStart && equalLines(p.beforeLines, q.beforeLines) && equalLines(p.afterLines, q.afterLines);
}

function equalLines(p: readonly string[], q: readonly string[]): boolean {
  return p.length === q.length && p.every((line, i) => line === q[i]);
}

/** "lines 4-6", "line 4", or "after line 3" (an insertion), 1-based, for people and the model. */
export function lineSpan(start: number, count: number): string {
  if (count === 0) return start === 0 ? 'at the start' : `after line ${start}`;
  return count === 1 ? `line ${start + 1}` : `lines ${start + 1}-${start + count}`;
}

/**
 * The hunks as unified-diff text (`@@ -a,b +c,d @@` and -/+ lines), cut after the last whole line
 * within `limit` characters, with a note saying so. A line without a terminator (the file's last) gets one here, and the
 * note "\ No newline at end of file", as diff prints it.
 */
export function unifiedDiff(hunks: readonly Hunk[], limit: number): string {
  const parts: string[] = [];
  for (const h of hunks) {
    parts.push(`@@ -${h.beforeStart + 1},${h.beforeLines.length} +${h.afterStart + 1},${h.afterLines.length} @@\n`);
    for (const [sign, lines] of [['-', h.beforeLines], ['+', h.afterLines]] as const) {
      for (const line of lines) parts.push(line.endsWith('\n') ? `${sign}${line}` : `${sign}${line}\n\\ No newline at end of file\n`);
    }
  }
  const text = parts.join('');
  if (text.length <= limit) return text;
  // Cut after a whole line, so the last line shown is not a fragment that reads as a change.
  const end = text.lastIndexOf('\n', limit - 1) + 1;
  return `${text.slice(0, end)}[diff cut: ${text.length} characters in all]\n`;
}

/** Diff text told to the model is cut here, so a large rewrite cannot flood its context. */
export const MAX_REPORTED_DIFF = 4000;

/**
 * What an accepted proposal wrote, next to what the model proposed: all of it, some of its
 * hunks (`applied` and `rejected` are 0-based indices into `hunks`), or text the user edited.
 */
export type Kept =
  | { kind: 'all' }
  | { kind: 'some'; hunks: Hunk[]; applied: number[]; rejected: number[] }
  | { kind: 'edited'; fromProposal: Hunk[] };

/** Work out which of the proposal's hunks `final` holds (`before` is '' for a new file). */
export function keptOf(before: string, after: string, final: string): Kept {
  if (final === after) return { kind: 'all' };
  const hunks = diffLines(before, after);
  const present = diffLines(before, final);
  const applied = hunks.flatMap((h, i) => (present.some((p) => sameHunk(p, h)) ? [i] : []));
  const chosen = new Set(applied);
  if (compose(before, hunks, (i) => chosen.has(i)) === final) {
    return { kind: 'some', hunks, applied, rejected: hunks.flatMap((_, i) => (chosen.has(i) ? [] : [i])) };
  }
  return { kind: 'edited', fromProposal: diffLines(after, final) };
}

/**
 * The sentences added to the tool result of an accepted proposal, so the model knows what is on
 * disk; '' when all of it was written as proposed.
 */
export function keptText(kept: Kept): string {
  if (kept.kind === 'all') return '';
  if (kept.kind === 'edited') {
    return (
      ' The user edited your proposal before accepting it, so the file is not what you proposed.' +
      ' The change from your proposal to what was written:\n' +
      unifiedDiff(kept.fromProposal, MAX_REPORTED_DIFF)
    );
  }
  const name = (i: number): string => {
    const h = kept.hunks[i]!;
    return `hunk ${i + 1} (${lineSpan(h.beforeStart, h.beforeLines.length)})`;
  };
  const list = (indices: number[]): string => (indices.length === 0 ? 'none' : indices.map(name).join(', '));
  return (
    ` The user accepted ${kept.applied.length} of the ${kept.hunks.length} hunks you proposed and rejected the others;` +
    ` only the accepted ones were written. Hunks are numbered in file order, with line numbers of the file before the change.` +
    ` Applied: ${list(kept.applied)}. Rejected, so these lines are as they were before: ${list(kept.rejected)}.` +
    ' The rejected hunks, not written:\n' +
    unifiedDiff(
      kept.rejected.map((i) => kept.hunks[i]!),
      MAX_REPORTED_DIFF,
    )
  );
}

/** The card's verdict for an accepted proposal that was not written as proposed. */
export function keptVerdict(kept: Kept): string | undefined {
  if (kept.kind === 'some') return `${kept.applied.length} of ${kept.hunks.length} hunks accepted: written.`;
  if (kept.kind === 'edited') return 'Accepted with your edits: written.';
  return undefined;
}
