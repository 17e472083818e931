import { describe, expect, it } from 'vitest';
import { isAllowedHref, renderMarkdown, stableBoundary } from '../src/webview/markdown';

describe('renderMarkdown', () => {
  it('renders a fenced block as highlighted code with Copy, Apply and Insert into New File, not as backticks', () => {
    const html = renderMarkdown('Here:\n\n```ts\nconst x: number = 1;\n```\n');
    expect(html).toContain('<div class="code-block" data-lang="ts">');
    expect(html).toContain('<span class="code-lang">ts</span>');
    expect(html).toContain('data-action="copy"');
    expect(html).toContain('data-action="apply"');
    expect(html).toContain('data-action="new-file"');
    expect(html).not.toContain('data-action="insert"');
    expect(html).toContain('<code class="language-ts">');
    expect(html).toContain('<span class="hljs-keyword">const</span>');
    expect(html).not.toContain('```');
  });

  it('names the file a block gives, for Apply', () => {
    const html = renderMarkdown('```python src/app.py\ndef f(): pass\n```\n');
    expect(html).toContain('data-file="src/app.py"');
    expect(html).toContain('aria-label="Apply to src/app.py (shows the change first)"');
  });

  it('highlights by the fence\'s language tag (aliases too), and shows untagged code plain and escaped', () => {
    expect(renderMarkdown('```Python\ndef f(): pass\n```\n')).toContain('<code class="language-python"><span class="hljs-keyword">def</span>');
    expect(renderMarkdown('```sh\necho hi\n```\n')).toContain('<code class="language-sh">');
    const plain = renderMarkdown('```\n<b>a & b</b>\n```\n');
    expect(plain).toContain('<pre class="hljs"><code>&#60;b&#62;a &#38; b&#60;/b&#62;\n</code></pre>');
    const unknown = renderMarkdown('```klingon\nqaStaH nuq\n```\n');
    expect(unknown).toContain('<span class="code-lang">klingon</span>');
    expect(unknown).toContain('<pre class="hljs"><code>qaStaH nuq\n</code></pre>');
  });

  it('never passes raw HTML through', () => {
    const html = renderMarkdown('<img src=x onerror=alert(1)> <script>alert(2)</script>');
    expect(html).not.toMatch(/<img|<script/);
    expect(html).toContain('&lt;script&gt;');
  });

  it('keeps http(s) and workspace links, and turns every other scheme into text', () => {
    const html = renderMarkdown(
      '[a](https://example.com/x) [b](src/main.ts#L3) [c](javascript:alert(1)) [d](command:workbench.action.quit) [e](data:text/html,hi)',
    );
    // No href at all: the webview host would follow it; the panel opens data-href itself.
    expect(html).toContain('<a data-href="https://example.com/x" title="https://example.com/x" role="link" tabindex="0">a</a>');
    expect(html).toContain('<a data-href="src/main.ts#L3"');
    expect(html).not.toMatch(/ href=/);
    expect(html).not.toMatch(/data-href="(javascript|command|data):/);
    expect(html).toContain('[c](javascript:alert(1))');
  });

  it('shows images as text, not as requests', () => {
    expect(renderMarkdown('![x](https://tracker.example/p.png)')).not.toContain('<img');
  });
});

describe('isAllowedHref', () => {
  it.each([
    ['https://example.com', true],
    ['HTTP://EXAMPLE.COM', true],
    ['file:///ws/a.ts', true],
    ['src/a.ts', true],
    ['./a.ts#L2', true],
    ['//evil.example/x', false],
    ['javascript:alert(1)', false],
    ['vscode://ms-python.python', false],
    ['mailto:a@b', false],
    ['', false],
    ['https://a\u0000b', false],
  ])('%s -> %s', (href, allowed) => {
    expect(isAllowedHref(href)).toBe(allowed);
  });
});

describe('stableBoundary', () => {
  it('cuts after the last blank line', () => {
    const text = 'First paragraph.\n\nSecond, still wri';
    expect(text.slice(0, stableBoundary(text))).toBe('First paragraph.\n\n');
  });

  it('never cuts inside an open fence, and cuts right after it closes', () => {
    const open = 'Intro.\n\n```py\nx = 1\n\ny = 2\n';
    expect(stableBoundary(open)).toBe('Intro.\n\n'.length);
    const closed = `${open}\`\`\`\nAfter`;
    expect(closed.slice(0, stableBoundary(closed))).toBe(`${open}\`\`\`\n`);
  });

  it('needs the same fence character, at least as long, to close', () => {
    const text = '````\n```\ninner\n```\n\nstill code\n';
    expect(stableBoundary(text)).toBe(0);
    expect(stableBoundary(`${text}\`\`\`\`\n`)).toBe(text.length + 5);
    const tilde = '~~~\n```\n\n';
    expect(stableBoundary(tilde)).toBe(0);
  });

  it('is 0 until a block is finished; an inline ``` run is not a fence', () => {
    expect(stableBoundary('no newline yet')).toBe(0);
    expect(stableBoundary('one line\n')).toBe(0);
    const inline = '```js const a = `x` ```\n\nnext';
    expect(stableBoundary(inline)).toBe(inline.indexOf('next'));
  });

  it('rendering the cut parts separately gives the same blocks as one render', () => {
    const text = '# Title\n\nSome *text*.\n\n```ts\nlet a = 1;\n```\n\n- one\n- two\n';
    const cut = stableBoundary(text);
    expect(renderMarkdown(text.slice(0, cut)) + renderMarkdown(text.slice(cut))).toBe(renderMarkdown(text));
  });
});
