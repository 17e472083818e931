/**
 * Where a code block from the chat goes in a file (pure: no vscode, no I/O).
 *
 * 1. **The enclosing symbol**: the block defines something (`def greet`, `class Parser`,
 *    `function load`, ...) that the file defines too: that definition is replaced, preferring one
 *    at the block's own indentation (a module-level function replaces the module-level one, never
 *    a method of the same name inside a class).
 * 2. **The closest region**: otherwise the run of file lines that shares the most lines with the
 *    block (at least half of the block's non-blank lines) is replaced.
 * 3. Otherwise the block is appended at the end, at the indentation it has: never inside a class.
 */

export type Placement = { how: 'symbol'; name: string } | { how: 'region' } | { how: 'append' };

export interface Placed {
  text: string;
  placement: Placement;
  /** The first line (0-based) the block now occupies. */
  line: number;
}

const DEFINITION =
  /^(\s*)(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(def|class|function|fn|func|interface|type|struct|enum|trait|impl|module)\s+([A-Za-z_$][\w$]*)/;

interface Definition {
  indent: number;
  keyword: string;
  name: string;
  line: number;
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function definitionAt(lines: readonly string[], i: number): Definition | undefined {
  const m = DEFINITION.exec(lines[i]!);
  return m === null ? undefined : { indent: m[1]!.length, keyword: m[2]!, name: m[3]!, line: i };
}

/** The lines a definition spans: up to the next non-blank line at its indentation or less
 * (a lone closing brace or `end` at its indentation still belongs to it). */
function extent(lines: readonly string[], def: Definition): number {
  let end = def.line + 1;
  for (let i = def.line + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    if (indentOf(line) <= def.indent) {
      if (/^\s*(\}[\s;,)]*|end)\s*$/.test(line)) end = i + 1;
      break;
    }
    end = i + 1;
  }
  return end;
}

function reindent(block: readonly string[], from: number, to: number): string[] {
  if (from === to) return [...block];
  return block.map((line) => {
    if (line.trim() === '') return '';
    const strip = Math.min(from, indentOf(line));
    return ' '.repeat(to) + line.slice(strip);
  });
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function join(lines: readonly string[], hadFinalNewline: boolean): string {
  return lines.join('\n') + (hadFinalNewline || lines.length > 0 ? '\n' : '');
}

export function placeBlock(fileText: string, blockText: string): Placed {
  const file = splitLines(fileText);
  const block = splitLines(blockText);
  const finalNewline = fileText === '' || fileText.endsWith('\n');

  // 1. The symbol the block defines (its first definition).
  const own = block.map((_, i) => definitionAt(block, i)).find((d) => d !== undefined);
  if (own !== undefined) {
    const candidates = file
      .map((_, i) => definitionAt(file, i))
      .filter((d): d is Definition => d !== undefined && d.name === own.name && d.keyword === own.keyword);
    const best = candidates.find((d) => d.indent === own.indent) ?? (candidates.length === 1 ? candidates[0] : undefined);
    if (best !== undefined) {
      // The block from its definition on (anything before it, e.g. an import, is left out only
      // when it is blank; otherwise it goes in above the definition).
      const end = extent(file, best);
      const start = best.line;
      const placedLines = reindent(block, own.indent, best.indent);
      const lines = [...file.slice(0, start), ...placedLines.slice(0, own.line), ...placedLines.slice(own.line), ...file.slice(end)];
      return { text: join(lines, finalNewline), placement: { how: 'symbol', name: own.name }, line: start };
    }
  }

  // 2. The closest region: most shared (trimmed, non-blank) lines.
  const wanted = new Set(block.map((l) => l.trim()).filter((l) => l !== ''));
  if (wanted.size > 0) {
    const hits = file.map((l, i) => (l.trim() !== '' && wanted.has(l.trim()) ? i : -1)).filter((i) => i >= 0);
    let bestRun: [number, number] | undefined;
    let bestCount = 0;
    // Runs of hits no further apart than the block is long.
    for (let a = 0; a < hits.length; a++) {
      let b = a;
      while (b + 1 < hits.length && hits[b + 1]! - hits[a]! < block.length + 2) b++;
      const count = new Set(hits.slice(a, b + 1).map((i) => file[i]!.trim())).size;
      if (count > bestCount) {
        bestCount = count;
        bestRun = [hits[a]!, hits[b]!];
      }
    }
    if (bestRun !== undefined && bestCount * 2 >= wanted.size) {
      // Aligned on the first shared line: the region is as long as the block.
      const offset = Math.max(0, block.findIndex((l) => l.trim() === file[bestRun[0]]!.trim()));
      const start = Math.max(0, bestRun[0] - offset);
      const last = Math.min(file.length - 1, Math.max(bestRun[1], start + block.length - 1));
      const firstBlock = block.find((l) => l.trim() !== '') ?? '';
      const placedLines = reindent(block, indentOf(firstBlock), indentOf(file[start]!));
      const lines = [...file.slice(0, start), ...placedLines, ...file.slice(last + 1)];
      return { text: join(lines, finalNewline), placement: { how: 'region' }, line: start };
    }
  }

  // 3. The end of the file, separated by a blank line.
  const lines = [...file];
  if (lines.length > 0 && lines[lines.length - 1]!.trim() !== '') lines.push('');
  const line = lines.length;
  lines.push(...block);
  return { text: join(lines, true), placement: { how: 'append' }, line };
}
