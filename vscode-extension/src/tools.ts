/**
 * The agent's file tools (`read`, `write`, `edit`), confined to one workspace folder.
 *
 * No vscode import: the tools work on disk (the sidecar reads disk too, never unsaved buffers),
 * which keeps them unit-testable against a temporary directory.
 */
import { constants as fsConstants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

import { type ToolCall, type ToolDefinition, type ToolOutcome, TOOL_NAMES, type ToolName } from './toolTypes';

export { type ToolCall, type ToolDefinition, type ToolOutcome, TOOL_NAMES, type ToolName };

/** Larger reads are cut so one file cannot flood the model's context. */
export const MAX_READ_CHARS = 200_000;

const FILE_PATH = {
  type: 'string',
  description: 'Path of the file, relative to the workspace folder (or absolute inside it).',
};

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  {
    name: 'read',
    description: 'Read a text file of the workspace folder and return its content.',
    parameters: {
      type: 'object',
      properties: { file_path: FILE_PATH },
      required: ['file_path'],
      additionalProperties: false,
    },
  },
  {
    name: 'write',
    description: 'Create or overwrite a text file of the workspace folder with the given content.',
    parameters: {
      type: 'object',
      properties: { file_path: FILE_PATH, content: { type: 'string' } },
      required: ['file_path', 'content'],
      additionalProperties: false,
    },
  },
  {
    name: 'edit',
    description:
      'Replace the one occurrence of old_string in a file of the workspace folder with new_string.',
    parameters: {
      type: 'object',
      properties: {
        file_path: FILE_PATH,
        old_string: { type: 'string', description: 'Exact text to replace; must occur once.' },
        new_string: { type: 'string' },
      },
      required: ['file_path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
  },
];

export class ToolError extends Error {}

/**
 * Resolve `filePath` against `root` and refuse anything that leaves it, including through a
 * symlink: the nearest existing ancestor is realpath'd and must still lie inside the real root.
 * A link that points at nothing (dangling) anywhere on the way is refused too: it has no real
 * path to check, and writing "a new file" there would create its target, wherever that is.
 */
export async function resolveInside(root: string, filePath: unknown): Promise<string> {
  if (typeof filePath !== 'string' || filePath.trim() === '') {
    throw new ToolError('file_path must be a non-empty string');
  }
  if (filePath.includes('\0')) throw new ToolError('file_path must not contain NUL');
  const absRoot = path.resolve(root);
  const target = path.resolve(absRoot, filePath);
  if (!isInside(absRoot, target)) {
    throw new ToolError(`${filePath} is outside the workspace folder`);
  }
  const realRoot = await fs.realpath(absRoot);
  const realTarget = await realpathOfNearestAncestor(target, filePath);
  if (!isInside(realRoot, realTarget)) {
    throw new ToolError(`${filePath} leads outside the workspace folder (symlink)`);
  }
  return target;
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

async function realpathOfNearestAncestor(target: string, shown: string): Promise<string> {
  const missing: string[] = [];
  let current = target;
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return path.join(real, ...missing.reverse());
    } catch (err) {
      const parent = path.dirname(current);
      if (parent === current || !isMissing(err)) throw err;
      // realpath failed with ENOENT: either nothing is there, or a link whose target is missing.
      if (await isLink(current)) {
        throw new ToolError(`${shown} goes through a symlink that points to nothing (${path.basename(current)}); nothing was written`);
      }
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

async function isLink(file: string): Promise<boolean> {
  try {
    return (await fs.lstat(file)).isSymbolicLink();
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * What a tool call will do. A `read` (and any call that fails before touching anything) is done
 * at once; a `write` or `edit` is a proposed change: its content before and after, applied only
 * by `apply()` (after the user approved it, unless edits are auto-approved).
 */
export type ToolPlan = { kind: 'done'; outcome: ToolOutcome } | ({ kind: 'change' } & ProposedChange);

export interface ProposedChange {
  name: 'write' | 'edit';
  /** Absolute path of the file. */
  path: string;
  /** The path relative to the workspace folder, with forward slashes. */
  display: string;
  /** The file's text now, or null when the file does not exist yet. */
  before: string | null;
  after: string;
  /**
   * Write `after` to disk. Refuses (as an error outcome) when the file changed since the
   * proposal, so an approval never overwrites work it did not show.
   */
  apply(): Promise<ToolOutcome>;
  /**
   * Write `text` instead of `after`: what the user left after keeping only some hunks or
   * editing the proposal. The same checks as apply() (confinement again, no link followed, the
   * file unchanged since the proposal).
   */
  applyText(text: string): Promise<ToolOutcome>;
}

/** Work out what a call would do, touching nothing on disk. */
export async function planTool(root: string, call: ToolCall): Promise<ToolPlan> {
  let resolvedPath: string | undefined;
  const failed = (err: unknown): ToolPlan => {
    const message = err instanceof ToolError ? err.message : describeFsError(err);
    return { kind: 'done', outcome: { text: `Error: ${message}`, isError: true, resolvedPath } };
  };
  try {
    if (call.argumentsError !== undefined) throw new ToolError(call.argumentsError);
    if (!(TOOL_NAMES as readonly string[]).includes(call.name)) {
      throw new ToolError(`unknown tool ${JSON.stringify(call.name)}`);
    }
    const args = call.arguments;
    const file = await resolveInside(root, args['file_path']);
    resolvedPath = file;
    if (call.name === 'read') return { kind: 'done', outcome: { text: await readForModel(file), isError: false, resolvedPath } };
    const before = await readIfExists(file);
    const after = call.name === 'write' ? writeContent(args) : editContent(args, before, display(root, file));
    const name = call.name as 'write' | 'edit';
    return {
      kind: 'change',
      name,
      path: file,
      display: display(root, file),
      before,
      after,
      apply: () => applyChange(root, file, name, before, after),
      applyText: (text) => applyChange(root, file, name, before, text),
    };
  } catch (err) {
    return failed(err);
  }
}

/** Run one tool call at once (no approval); every failure becomes an error outcome the model can read. */
export async function runTool(root: string, call: ToolCall): Promise<ToolOutcome> {
  const plan = await planTool(root, call);
  return plan.kind === 'done' ? plan.outcome : plan.apply();
}

async function readForModel(file: string): Promise<string> {
  const { text, size } = await readText(file, MAX_READ_BYTES);
  if (text.length > MAX_READ_CHARS) {
    const whole = size > MAX_READ_BYTES ? `${size} bytes` : `${text.length} characters`;
    return `${text.slice(0, MAX_READ_CHARS)}\n[truncated: the file has ${whole}]`;
  }
  return text;
}

/** Bytes read at most for the model: four per character of the longest read it gets, and then some. */
const MAX_READ_BYTES = 4 * MAX_READ_CHARS + 4096;

/** A file larger than this is not proposed for a write or an edit: its whole text is held twice. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;

/**
 * Read a regular file as UTF-8 text. A FIFO or device would block or never end (a repository
 * cannot commit one, but a tool can make one), so the file is opened without blocking and refused
 * unless it is regular. `cutAt` reads a huge file only as far as it will be shown; without it, a
 * file over MAX_EDIT_BYTES is refused, since a change must start from the whole text.
 */
export async function readTextFile(file: string, cutAt?: number): Promise<string> {
  return (await readText(file, cutAt)).text;
}

/** readTextFile's text, with the size of the whole file as the opened file reported it. */
async function readText(file: string, cutAt?: number): Promise<{ text: string; size: number }> {
  const handle = await fs.open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new ToolError('is a directory');
    if (!info.isFile()) throw new ToolError(`${path.basename(file)} is not a regular file`);
    if (cutAt === undefined && info.size > MAX_EDIT_BYTES) {
      throw new ToolError(`${path.basename(file)} is too large to change here (${info.size} bytes, at most ${MAX_EDIT_BYTES})`);
    }
    const size = Math.min(info.size, cutAt ?? info.size);
    const buffer = Buffer.alloc(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { text: buffer.subarray(0, filled).toString('utf8'), size: info.size };
  } finally {
    await handle.close();
  }
}

/** The file's text, or null when nothing is there. */
export async function readIfExists(file: string): Promise<string | null> {
  try {
    return await readTextFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function writeContent(args: Record<string, unknown>): string {
  const content = args['content'];
  if (typeof content !== 'string') throw new ToolError('content must be a string');
  return content;
}

function editContent(args: Record<string, unknown>, text: string | null, shown: string): string {
  const oldString = args['old_string'];
  const newString = args['new_string'];
  if (typeof oldString !== 'string' || oldString === '') {
    throw new ToolError('old_string must be a non-empty string');
  }
  if (typeof newString !== 'string') throw new ToolError('new_string must be a string');
  if (text === null) throw new ToolError(`no such file: ${shown}`);
  const first = text.indexOf(oldString);
  if (first < 0) throw new ToolError(`old_string was not found in ${shown}`);
  if (text.indexOf(oldString, first + 1) >= 0) {
    throw new ToolError(`old_string occurs more than once in ${shown}`);
  }
  // Splice rather than String.replace, whose `$&`-style patterns would rewrite new_string.
  return text.slice(0, first) + newString + text.slice(first + oldString.length);
}

async function applyChange(
  root: string,
  file: string,
  name: 'write' | 'edit',
  before: string | null,
  after: string,
): Promise<ToolOutcome> {
  const shown = display(root, file);
  try {
    // Confinement again: a symlink may have been planted while the change waited for approval.
    await resolveInside(root, file);
    if ((await readIfExists(file)) !== before) {
      throw new ToolError(`${shown} changed while the ${name} waited for approval; nothing was written`);
    }
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeNoFollow(file, before === null, after);
    const text = name === 'write' ? `Wrote ${Buffer.byteLength(after, 'utf8')} bytes to ${shown}` : `Edited ${shown}`;
    return { text, isError: false, resolvedPath: file };
  } catch (err) {
    const message = err instanceof ToolError ? err.message : describeFsError(err);
    return { text: `Error: ${message}`, isError: true, resolvedPath: file };
  }
}

/**
 * Write `text` to `file` without following a link in its last name, so a link planted after the
 * confinement check cannot redirect the write. A new file is created exclusively (a link, even a
 * dangling one, makes that fail); an existing file is written at its real path (already checked
 * to be inside the folder), which keeps a link inside the folder, such as CLAUDE.md -> AGENTS.md,
 * working and the link itself in place.
 */
async function writeNoFollow(file: string, isNew: boolean, text: string): Promise<void> {
  const { O_WRONLY, O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW } = fsConstants;
  const target = isNew ? file : await fs.realpath(file);
  const flags = isNew ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW : O_WRONLY | O_TRUNC | O_NOFOLLOW;
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(target, flags, 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EEXIST') {
      throw new ToolError(`${path.basename(file)} was replaced while the change waited for approval; nothing was written`);
    }
    throw err;
  }
  try {
    await handle.writeFile(text, 'utf8');
  } finally {
    await handle.close();
  }
}

function display(root: string, file: string): string {
  return path.relative(path.resolve(root), file).split(path.sep).join('/');
}

function describeFsError(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  switch (e?.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EISDIR':
      return 'is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    default:
      return e?.message ?? String(err);
  }
}

/**
 * Parse the model's JSON argument text. A malformed or non-object payload is kept as an error on
 * the call so the loop can still answer the model with a tool result.
 */
export function parseToolArguments(raw: string): Pick<ToolCall, 'arguments' | 'argumentsError'> {
  if (raw.trim() === '') return { arguments: {} };
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return { arguments: parsed as Record<string, unknown> };
    }
    return { arguments: {}, argumentsError: 'tool arguments must be a JSON object' };
  } catch {
    return { arguments: {}, argumentsError: 'tool arguments are not valid JSON' };
  }
}
