import { describe, expect, it } from 'vitest';
import { namedFile } from '../src/webview/namedFile';

describe('namedFile', () => {
  it('reads the file from the fence info or a first-line comment', () => {
    expect(namedFile('python src/app.py', 'x')).toBe('src/app.py');
    expect(namedFile('ts title="src/a.ts"', 'x')).toBe('src/a.ts');
    expect(namedFile('python', '# src/app.py\ndef f(): pass')).toBe('src/app.py');
    expect(namedFile('ts', '// file: lib/x.ts\nconst a = 1;')).toBe('lib/x.ts');
    expect(namedFile('python', 'def f(): pass')).toBeUndefined();
    expect(namedFile('', '# just a comment here')).toBeUndefined();
  });
});
