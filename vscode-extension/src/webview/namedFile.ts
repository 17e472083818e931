/**
 * The file a fenced code block in the chat names, for its Apply button: in the fence's info after
 * the language (```python src/app.py`, or `title="src/app.py"`), or in a first-line comment
 * (`# src/app.py`, `// file: src/app.ts`). Pure: no DOM. Where the block goes in that file is
 * decided on the host (chat/placement.ts).
 */
export function namedFile(info: string, code: string): string | undefined {
  const words = info.trim().split(/\s+/).slice(1);
  for (const word of words) {
    const m = /^(?:title|file|path)=["']?([^"']+)["']?$/.exec(word);
    const candidate = m !== null ? m[1]! : word;
    if (/[./]/.test(candidate) && !candidate.includes('=')) return candidate;
  }
  const first = code.split('\n', 1)[0] ?? '';
  const comment = /^\s*(?:#|\/\/|--|;|\/\*)\s*(?:file(?:name)?:\s*)?([\w./-]+\.[\w]+)\s*(?:\*\/)?\s*$/i.exec(first);
  return comment !== null ? comment[1] : undefined;
}
