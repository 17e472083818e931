/**
 * Model text → HTML for the chat webview: markdown-it with raw HTML off, links limited to http(s)
 * and workspace files, images off, and fenced code highlighted by highlight.js inside a block with
 * Copy, Apply and Insert into New File buttons (handled by delegation in chat.ts: the CSP allows no inline handlers).
 *
 * No DOM here, so the unit tests render with it in Node.
 */
import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';
import { escapeHtml } from '../shared/text';
import { namedFile } from './namedFile';

/** Past this size a block is shown unhighlighted: highlighting would stall the stream. */
const MAX_HIGHLIGHT_CHARS = 100_000;

/**
 * Links the panel will follow: http(s) URLs, `file:` URIs and paths without a scheme (both
 * resolved, and checked to be inside the workspace folder, by the extension). Everything else
 * (`javascript:`, `data:`, `command:`, `vscode:` ...) is rendered as plain text.
 */
export function isAllowedHref(href: string): boolean {
  const trimmed = href.trim();
  if (trimmed === '' || /[\u0000-\u001f]/.test(trimmed)) return false;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed);
  if (scheme === null) return !trimmed.startsWith('//'); // a path (a protocol-relative URL is not)
  return ['http', 'https', 'file'].includes(scheme[1]!.toLowerCase());
}

/**
 * Highlighted HTML of `code`, and the language it was highlighted as ('' for none). An untagged
 * or unknown language is shown plain, as GitHub does: guessing from a few lines is wrong too often
 * (a short Python function scores as CSS) and costs a pass per grammar on every streamed frame.
 */
export function highlight(code: string, lang: string): { html: string; language: string } {
  const known = lang !== '' && hljs.getLanguage(lang) !== undefined;
  if (known && code.length <= MAX_HIGHLIGHT_CHARS) {
    return { html: hljs.highlight(code, { language: lang, ignoreIllegals: true }).value, language: lang };
  }
  return { html: escapeHtml(code), language: '' };
}

export function createMarkdown(): MarkdownIt.MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });
  md.disable('image'); // remote images would be blocked by the CSP anyway; say it as a link instead
  md.validateLink = isAllowedHref;
  md.renderer.rules.fence = (tokens, idx) => {
    const token = tokens[idx]!;
    const lang = token.info.trim().split(/\s+/)[0] ?? '';
    const { html, language } = highlight(token.content, lang.toLowerCase());
    const label = lang !== '' ? lang : language;
    const file = namedFile(token.info, token.content);
    const target = file !== undefined ? ` data-file="${escapeHtml(file)}"` : '';
    const applyLabel = file !== undefined ? `Apply to ${file} (shows the change first)` : 'Apply to a file (shows the change first)';
    return (
      `<div class="code-block" data-lang="${escapeHtml(lang)}"${target}>` +
      `<div class="code-header"><span class="code-lang">${escapeHtml(label)}</span>` +
      `<button type="button" class="code-action" data-action="copy" aria-label="Copy code">Copy</button>` +
      `<button type="button" class="code-action" data-action="apply" aria-label="${escapeHtml(applyLabel)}">Apply</button>` +
      `<button type="button" class="code-action" data-action="new-file" aria-label="Insert code into a new file">Insert into New File</button>` +
      `</div><pre class="hljs"><code${language !== '' ? ` class="language-${escapeHtml(language)}"` : ''}>${html}</code></pre></div>\n`
    );
  };
  // Links carry their target in data-href and no href: the webview host would otherwise open
  // them itself. chat.ts sends the target to the extension, which checks it again and opens it.
  md.renderer.rules.link_open = (tokens, idx) => {
    const href = String(tokens[idx]!.attrGet('href') ?? '');
    return `<a data-href="${escapeHtml(href)}" title="${escapeHtml(href)}" role="link" tabindex="0">`;
  };
  return md;
}

let shared: MarkdownIt.MarkdownIt | undefined;

export function renderMarkdown(text: string): string {
  shared ??= createMarkdown();
  return shared.render(text);
}

/**
 * Where the text that has streamed in so far can be cut into "finished" blocks and a tail still
 * being written: just after the last blank line (or closing fence line) that lies outside a
 * fenced code block. The panel renders the finished part once and re-renders only the tail as
 * more text arrives. 0 when nothing is finished yet.
 */
export function stableBoundary(text: string): number {
  let boundary = 0;
  let fence: { char: string; length: number } | undefined;
  let lineStart = 0;
  while (lineStart < text.length) {
    const newline = text.indexOf('\n', lineStart);
    if (newline < 0) break; // the last line is still being written
    const line = text.slice(lineStart, newline);
    const next = newline + 1;
    const marker = /^ {0,3}(\x60{3,}|~{3,})(.*)$/.exec(line); // \x60: a backtick
    if (fence === undefined) {
      if (marker !== null && !(marker[1]![0] === '`' && marker[2]!.includes('`'))) {
        fence = { char: marker[1]![0]!, length: marker[1]!.length };
      } else if (line.trim() === '') {
        boundary = next;
      }
    } else if (marker !== null && marker[1]![0] === fence.char && marker[1]!.length >= fence.length && marker[2]!.trim() === '') {
      fence = undefined;
      boundary = next;
    }
    lineStart = next;
  }
  return boundary;
}
