import { describe, expect, it } from 'vitest';
import { placeBlock } from '../src/chat/placement';

const FILE = [
  'import os',
  '',
  'class Greeter:',
  '    def greet(self, name):',
  '        return "hi " + name',
  '',
  'def greet(name):',
  '    return "hello " + name',
  '',
  'def other():',
  '    return 1',
  '',
].join('\n');

describe('placeBlock', () => {
  it('replaces the module-level function, not the method of the same name in a class', () => {
    const block = 'def greet(name):\n    return f"hello {name}"\n';
    const placed = placeBlock(FILE, block);
    expect(placed.placement).toEqual({ how: 'symbol', name: 'greet' });
    expect(placed.line).toBe(6);
    expect(placed.text).toContain('class Greeter:\n    def greet(self, name):\n        return "hi " + name\n');
    expect(placed.text).toContain('def greet(name):\n    return f"hello {name}"\n\ndef other():');
    expect(placed.text).not.toContain('return "hello " + name');
  });

  it('replaces a method at its own indentation when the block is the method', () => {
    const block = '    def greet(self, name):\n        return "hey " + name\n';
    const placed = placeBlock(FILE, block);
    expect(placed.line).toBe(3);
    expect(placed.text).toContain('class Greeter:\n    def greet(self, name):\n        return "hey " + name\n\ndef greet(name):');
  });

  it('replaces the closest region when no symbol matches', () => {
    const text = 'a = 1\nb = 2\nc = 3\nd = 4\n';
    const placed = placeBlock(text, 'b = 2\nc = 30\n');
    expect(placed.placement).toEqual({ how: 'region' });
    expect(placed.text).toBe('a = 1\nb = 2\nc = 30\nd = 4\n');
  });

  it('appends at the end, at module level, when nothing matches', () => {
    const placed = placeBlock(FILE, 'def new_one():\n    pass\n');
    expect(placed.placement).toEqual({ how: 'append' });
    expect(placed.text.endsWith('    return 1\n\ndef new_one():\n    pass\n')).toBe(true);
  });

  it('handles brace languages, keeping the closing brace with its function', () => {
    const ts = 'function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n';
    const placed = placeBlock(ts, 'function a() {\n  return 10;\n}\n');
    expect(placed.text).toBe('function a() {\n  return 10;\n}\n\nfunction b() {\n  return 2;\n}\n');
  });
});
