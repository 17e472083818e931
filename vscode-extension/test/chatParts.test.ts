import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveLink } from '../src/chat/links';
import { describeModel } from '../src/chat/modelInfo';
import { pendingViews } from '../src/chat/pendingView';
import { PromptQueue } from '../src/chat/queue';
import { sessionsOfFolder, UNTITLED } from '../src/chat/sessionList';
import type { Message } from '../src/protocol';
import type { ClientSettings } from '../src/settings';

describe('PromptQueue', () => {
  it('sends in order, removes by id, and gives everything back on a stop', () => {
    const q = new PromptQueue();
    const a = q.add('first');
    q.add('second');
    const c = q.add('third');
    expect(q.remove(c.id)).toBe(true);
    expect(q.remove(c.id)).toBe(false);
    expect(q.shift()).toEqual(a);
    expect(q.size).toBe(1);
    expect(q.drain()).toEqual(['second']);
    expect(q.size).toBe(0);
  });
});

describe('pendingViews', () => {
  const instructions = (changes: { action: string; scope: string; path: string }[]): Message => ({
    id: 'm1',
    role: 'user',
    content: [{ type: 'text', text: '<system-reminder>\nrules\n</system-reminder>' }],
    source: { kind: 'agent-instructions', form: 'instructions', changes },
  });

  it('offers single changes to drop only when a message has several', () => {
    const two = pendingViews([
      instructions([
        { action: 'set', scope: 'pkg\u0000AGENTS.md', path: 'pkg/AGENTS.md' },
        { action: 'remove', scope: 'old\u0000AGENTS.md', path: 'old/AGENTS.md' },
      ]),
    ]);
    expect(two).toEqual([
      {
        messageId: 'm1',
        title: 'Workspace instructions: set pkg/AGENTS.md, remove old/AGENTS.md',
        text: '<system-reminder>\nrules\n</system-reminder>',
        bytes: 42,
        changes: [
          { scope: 'pkg\u0000AGENTS.md', label: 'set pkg/AGENTS.md' },
          { scope: 'old\u0000AGENTS.md', label: 'remove old/AGENTS.md' },
        ],
      },
    ]);
    expect(pendingViews([instructions([{ action: 'set', scope: 's', path: 'p' }])])[0]!.changes).toEqual([]);
  });
});

describe('sessionsOfFolder', () => {
  it('keeps the folder\'s sessions, titles the untitled, marks the current one', () => {
    const now = Date.UTC(2025, 0, 2);
    const items = sessionsOfFolder(
      [
        { id: 'b', createdAt: now - 3_600_000, cwd: '/ws', title: 'Fix the parser' },
        { id: 'x', createdAt: now, cwd: '/other' },
        { id: 'a', createdAt: now - 2 * 86_400_000, cwd: '/ws', title: '  ' },
      ],
      (cwd) => cwd === '/ws',
      'a',
      now,
    );
    expect(items).toEqual([
      { id: 'b', title: 'Fix the parser', age: '1 h ago', createdAt: now - 3_600_000, current: false },
      { id: 'a', title: UNTITLED, age: '2 days ago', createdAt: now - 2 * 86_400_000, current: true },
    ]);
  });
});

describe('describeModel', () => {
  const settings = (o: Partial<ClientSettings>): ClientSettings => ({
    pythonPath: undefined,
    importStrategy: 'useBundled',
    provider: 'auto',
    baseUrl: '',
    modelName: '',
    maxSteps: 25,
    requestTimeoutMs: 1000,
    ...o,
  });
  const offered = [{ name: 'GPT-4o', family: 'gpt-4o', id: 'copilot-gpt-4o' }];

  it('names the endpoint model, or what is missing', () => {
    expect(describeModel(settings({ baseUrl: 'http://h/v1', modelName: 'm' }), undefined)).toEqual({ text: 'm at http://h/v1', configured: true });
    expect(describeModel(settings({ provider: 'openai' }), offered).text).toBe('No model is configured: dsh.model.baseUrl is empty.');
    expect(describeModel(settings({ baseUrl: 'http://h/v1' }), undefined).configured).toBe(false);
  });

  it('names the editor model the turn would pick', () => {
    expect(describeModel(settings({}), offered)).toEqual({ text: 'GPT-4o (offered by the editor)', configured: true });
    expect(describeModel(settings({ modelName: 'claude' }), offered).text).toBe('No model is configured: the editor offers no model named "claude".');
    expect(describeModel(settings({}), undefined).text).toBe('No model is configured (this editor offers none).');
    expect(describeModel(settings({}), []).configured).toBe(false);
  });
});

describe('resolveLink', () => {
  let base: string;
  let folder: string;
  beforeAll(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'dsh-links-')));
    folder = path.join(base, 'ws');
    await fs.mkdir(path.join(folder, 'src'), { recursive: true });
    await fs.writeFile(path.join(folder, 'src', 'a.ts'), 'x\n');
    await fs.mkdir(path.join(base, 'outside'));
    await fs.symlink(path.join(base, 'outside'), path.join(folder, 'out'));
  });
  afterAll(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  it('opens web links outside and workspace files inside, with a line', async () => {
    expect(await resolveLink('https://example.com/a b', folder)).toEqual({ kind: 'external', url: 'https://example.com/a%20b' });
    expect(await resolveLink('src/a.ts#L12', folder)).toEqual({ kind: 'file', path: path.join(folder, 'src', 'a.ts'), line: 12 });
    expect(await resolveLink('src/a.ts:3', folder)).toEqual({ kind: 'file', path: path.join(folder, 'src', 'a.ts'), line: 3 });
    expect(await resolveLink(`file://${folder}/src/a.ts`, folder)).toEqual({ kind: 'file', path: path.join(folder, 'src', 'a.ts') });
  });

  it('refuses other schemes and anything outside the folder, symlinks included', async () => {
    expect(await resolveLink('command:workbench.action.quit', folder)).toEqual({ kind: 'refused', reason: 'command: links are not opened' });
    expect((await resolveLink('../etc/passwd', folder)).kind).toBe('refused');
    expect((await resolveLink('file:///etc/passwd', folder)).kind).toBe('refused');
    expect(await resolveLink('out/secret.txt', folder)).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/symlink/) });
  });
});
