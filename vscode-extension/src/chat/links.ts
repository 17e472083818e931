/**
 * Where a link in the chat leads. The webview only shows http(s), `file:` and scheme-less links;
 * the extension decides again here: http(s) opens in the browser, a file opens in the editor only
 * when it resolves (symlinks included) inside the workspace folder. Anything else is refused.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveInside, ToolError } from '../tools';

export type LinkTarget =
  | { kind: 'external'; url: string }
  | { kind: 'file'; path: string; line?: number }
  | { kind: 'refused'; reason: string };

export async function resolveLink(href: string, folder: string): Promise<LinkTarget> {
  const trimmed = href.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    try {
      return { kind: 'external', url: new URL(trimmed).toString() };
    } catch {
      return { kind: 'refused', reason: `not a valid URL: ${trimmed}` };
    }
  }
  if (scheme !== undefined && scheme !== 'file') return { kind: 'refused', reason: `${scheme}: links are not opened` };
  if (trimmed.startsWith('//')) return { kind: 'refused', reason: 'not a workspace path' };
  // "src/a.ts#L12" or "src/a.ts:12" → line 12.
  let target = trimmed;
  let line: number | undefined;
  const hash = target.indexOf('#');
  if (hash >= 0) {
    const m = /^L?(\d+)/i.exec(target.slice(hash + 1));
    if (m !== null) line = Number(m[1]);
    target = target.slice(0, hash);
  }
  let file: string;
  try {
    file = scheme === 'file' ? fileURLToPath(target) : decodeURIComponent(target);
  } catch {
    return { kind: 'refused', reason: `not a file path: ${trimmed}` };
  }
  const lineSuffix = /^(.*?):(\d+)$/.exec(file);
  if (line === undefined && lineSuffix !== null) {
    file = lineSuffix[1]!;
    line = Number(lineSuffix[2]);
  }
  try {
    const resolved = await resolveInside(folder, path.isAbsolute(file) ? file : path.join(folder, file));
    return line !== undefined && line > 0 ? { kind: 'file', path: resolved, line } : { kind: 'file', path: resolved };
  } catch (err) {
    return { kind: 'refused', reason: err instanceof ToolError ? err.message : String(err) };
  }
}
