import { describe, expect, it } from 'vitest';
import { applyingFiles } from '../src/inspector/activeScopes';
import { agentSessionsIn, buildInspectorState, MAX_AGENT_SESSIONS, relativeDirectory, ruleSetsNote, scopeDirectory, toldFiles, visibleInstructions } from '../src/inspector/model';
import type { DshEvent, Message, ScopesResult, SessionHeader } from '../src/protocol';
import { scopeItems } from '../src/inspector/scopesPick';
import { appliesText, notReadText, statusText } from '../src/statusBar';

const instr = (id: string, text: string, baseline: boolean, path: string): Message => ({
  id,
  role: 'user',
  content: [{ type: 'text', text }],
  source: { kind: 'agent-instructions', form: 'instructions', ...(baseline ? { baseline: true } : {}), changes: [{ action: 'set', scope: 's', path }] },
});
/** An instruction message with one change whose scope is its path. */
const given = (path: string, baseline = false, action = 'set'): Message => ({
  id: `${action}-${path}`,
  role: 'user',
  content: [{ type: 'text', text: path }],
  source: { kind: 'agent-instructions', form: 'instructions', ...(baseline ? { baseline: true } : {}), changes: [{ action, scope: path, path }] },
});
const ev = (seq: number, message: Message): DshEvent => ({ seq, type: 'user/message', time: 0, data: message as unknown as Record<string, unknown>, surfaceOp: 'append' });

const scopes: ScopesResult = {
  projectRoot: '/ws',
  directory: '/ws/pkg/src',
  files: [
    { path: '/ws/AGENTS.md', displayPath: 'AGENTS.md', scope: '.\u0000AGENTS.md', state: 'included', bytes: 10 },
    { path: '/ws/pkg/AGENTS.md', displayPath: 'pkg/AGENTS.md', scope: 'pkg', state: 'truncated', bytes: 90000, reason: 'budget', includedBytes: 2000 },
    { path: '/ws/pkg/CLAUDE.md', displayPath: 'pkg/CLAUDE.md', scope: 'pkg', state: 'duplicate', bytes: 5 },
    { path: '/ws/node_modules/AGENTS.md', displayPath: 'node_modules/AGENTS.md', scope: 'node_modules', state: 'ignored', bytes: null },
  ],
  sessions: [
    { sessionId: 's1', active: [{ action: 'set', scope: '.\u0000AGENTS.md', path: 'AGENTS.md' }] },
    { sessionId: 'other', active: [{ action: 'set', scope: 'pkg\u0000AGENTS.md', path: 'pkg/AGENTS.md' }] },
  ],
};

describe("inspector: agents' sessions", () => {
  it('says that rule sets enabled in VS Code do not reach the hooks', () => {
    expect(ruleSetsNote([])).toBeUndefined();
    expect(ruleSetsNote(['cursor', 'copilot'])).toBe(
      "Rule sets enabled in VS Code (cursor, copilot) do not apply to these sessions: the agents' hooks read their settings from their own command line (dsh-sidecar hook --settings FILE), not from VS Code, and as installed they use none.",
    );
  });

  it('reads the files a session was given from its log: the latest baseline on, removals left out', () => {
    expect(toldFiles([ev(1, given('old.md', true)), ev(2, given('AGENTS.md', true)), ev(3, given('pkg/AGENTS.md')), ev(4, given('pkg/AGENTS.md', false, 'remove'))])).toEqual(['AGENTS.md']);
    expect(toldFiles([ev(2, given('AGENTS.md', true)), ev(3, given('pkg/AGENTS.md'))])).toEqual(['AGENTS.md', 'pkg/AGENTS.md']);
    expect(relativeDirectory('/ws', '/ws')).toBe('.');
    expect(relativeDirectory('/ws/a/b', '/ws/')).toBe('a/b');
    expect(relativeDirectory('/elsewhere', '/ws')).toBe('/elsewhere');
  });

  const header = (id: string, cwd: string, agent?: string): SessionHeader => ({ id, createdAt: 1, cwd, ...(agent ? { agent } : {}) });

  it('keeps the sessions agents drive in the open folders, newest first', () => {
    const listed = [
      header('codex:a', '/ws/pkg', 'codex'),
      header('panel', '/ws'),
      header('claude:b', '/ws', 'claude'),
      header('gemini:c', '/wsx', 'gemini'),
      header('claude:d', '/other', 'claude'),
    ];
    expect(agentSessionsIn(listed, ['/ws']).map((s) => s.id)).toEqual(['codex:a', 'claude:b']);
    expect(agentSessionsIn(listed, ['/ws/', '/other']).map((s) => s.id)).toEqual(['codex:a', 'claude:b', 'claude:d']);
    const many = Array.from({ length: 30 }, (_, i) => header(`codex:${i}`, '/ws', 'codex'));
    expect(agentSessionsIn(many, ['/ws'])).toHaveLength(MAX_AGENT_SESSIONS);
  });

  it('shows each with what its next hook event delivers', () => {
    const pending = instr('m', 'nested rules', false, 'pkg/AGENTS.md');
    const now = 3_600_000;
    const surface = [ev(1, given('AGENTS.md', true)), ev(2, given('pkg/AGENTS.md'))];
    const state = buildInspectorState({
      now,
      agents: [{ header: header('codex:a', '/ws/pkg', 'codex'), pending: [pending], surface, lastEventAt: now - 120_000, folder: '/ws', waiting: 3 }],
      ruleSets: [],
    });
    const [shown] = state.agents!;
    expect(shown).toMatchObject({
      id: 'codex:a',
      agent: 'Codex CLI',
      directory: 'pkg',
      started: 'started 1 h ago',
      lastEvent: 'last event 2 min ago',
      told: ['AGENTS.md', 'pkg/AGENTS.md'],
      waiting: 3,
      pending: [expect.objectContaining({ text: 'nested rules' })],
    });
    // Its label (heading and hover) says who, when and where; never the raw id.
    expect(shown!.label).toMatch(/^Codex CLI · .+ · pkg$/);
    expect(shown!.label).not.toContain('codex:a');
    expect(state.agentsNote).toBeUndefined();
    expect(buildInspectorState({ now: 0, agents: [] }).agents).toBeUndefined();
  });
});

describe('inspector model', () => {
  it('shows instructions from the latest baseline on', () => {
    const old = instr('b0', 'old baseline', true, 'AGENTS.md');
    const base = instr('b1', 'baseline', true, 'AGENTS.md');
    const nested = instr('n', 'nested', false, 'pkg/AGENTS.md');
    const prompt: Message = { id: 'p', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } };
    expect(visibleInstructions([ev(0, old), ev(1, prompt), ev(2, base), ev(3, nested)]).map((m) => m.id)).toEqual(['b1', 'n']);
  });

  it('builds the session and chain sections, marking what this session has active', () => {
    const pending = instr('q', 'Additional instructions from: pkg/AGENTS.md ✓', false, 'pkg/AGENTS.md');
    const state = buildInspectorState({
      now: 5,
      session: { id: 's1', folder: 'ws', surface: [ev(0, instr('b', 'base', true, 'AGENTS.md'))], pending: [pending] },
      chain: { file: 'pkg/src/x.txt', result: scopes },
    });
    expect(state.session).toMatchObject({
      id: 's1',
      pendingCount: 1,
      visible: [{ title: 'Baseline: AGENTS.md', text: 'base', bytes: 4 }],
      pending: [{ title: 'Workspace instructions: set pkg/AGENTS.md' }],
    });
    // UTF-8 bytes, not UTF-16 units.
    expect(state.session!.pending[0]!.bytes).toBe(new TextEncoder().encode(pending.content[0]!.type === 'text' ? pending.content[0]!.text : '').length);
    expect(state.chain!.files.map((f) => [f.displayPath, f.state, f.active])).toEqual([
      ['AGENTS.md', 'included', 'set'],
      ['pkg/AGENTS.md', 'truncated', undefined],
      ['pkg/CLAUDE.md', 'duplicate', undefined],
      ['node_modules/AGENTS.md', 'ignored', undefined],
    ]);
    expect(state.chain!.files[1]!).toMatchObject({ reason: 'budget', bytes: 90000, includedBytes: 2000 });
    expect(state.chain!.files[3]!.bytes).toBeNull();
    expect(state.chain!.files.map((f) => f.scope)).toEqual(['.', 'pkg', 'pkg', 'node_modules']);
  });

  it('shows the directory of a scope key', () => {
    expect(scopeDirectory('pkg/app\u0000CLAUDE.local.md')).toBe('pkg/app');
    expect(scopeDirectory('user-global\u0000AGENTS.md')).toBe('user-global');
    expect(scopeDirectory('.')).toBe('.');
  });

  it('carries notes when there is no session or no file', () => {
    const state = buildInspectorState({ now: 1, sessionNote: 'no session', chainNote: 'open a file' });
    expect(state).toEqual({ session: undefined, chain: undefined, sessionNote: 'no session', chainNote: 'open a file', updatedAt: 1 });
  });
});

describe('status bar count', () => {
  it('counts files that reach the model (included or truncated)', () => {
    expect(applyingFiles(scopes)).toBe(2);
    expect(statusText(1)).toBe('1 instruction file');
    expect(statusText(2)).toBe('2 instruction files');
  });

  it('names the unread instruction files and what would read them', () => {
    expect(notReadText(scopes)).toBeUndefined();
    const unread: ScopesResult = {
      ...scopes,
      notRead: [
        {
          agent: 'Gemini CLI',
          effect: "GEMINI.md holds a directory's instructions",
          paths: ['GEMINI.md'],
          enable: 'add "GEMINI.md" to instructions.instructionFileCandidates',
          setting: 'instructions.instructionFileCandidates',
        },
      ],
    };
    expect(notReadText(unread)).toBe('Not read: GEMINI.md (Gemini CLI; add "GEMINI.md" to instructions.instructionFileCandidates).');
  });

  it('agrees in number: one file applies, several apply', () => {
    expect(appliesText(0)).toBe('No instruction file applies');
    expect(appliesText(1)).toBe('1 instruction file applies');
    expect(appliesText(2)).toBe('2 instruction files apply');
  });
});

describe('scopes quick pick', () => {
  it('says per file what it is, how big, what it governs and what the session has', () => {
    const result: ScopesResult = {
      projectRoot: '/ws',
      directory: '/ws/pkg',
      files: [
        { path: '/ws/AGENTS.md', displayPath: 'AGENTS.md', scope: '.\u0000AGENTS.md', state: 'included', bytes: 1 },
        {
          path: '/ws/pkg/AGENTS.md',
          displayPath: 'pkg/AGENTS.md',
          scope: 'pkg\u0000AGENTS.md',
          state: 'truncated',
          bytes: 4096,
          includedBytes: 2048,
          reason: 'cut to the byte budget',
        },
      ],
      sessions: [{ sessionId: 's1', active: [{ action: 'set', scope: '.\u0000AGENTS.md', path: 'AGENTS.md' }] }],
    };
    expect(scopeItems(result, 's1')).toEqual([
      { label: 'AGENTS.md', description: 'included · 1 byte', detail: 'governs the whole project · the agent has it (set)', path: '/ws/AGENTS.md' },
      {
        label: 'pkg/AGENTS.md',
        description: 'truncated to the budget · 2.0 KiB of 4.0 KiB',
        detail: 'governs pkg · cut to the byte budget',
        path: '/ws/pkg/AGENTS.md',
      },
    ]);
    expect(scopeItems(result, 'other')[0]!.detail).toBe('governs the whole project');
  });
});

describe('scopes quick pick, links and states', () => {
  it('names a link\'s target, and shows a state it does not know as named', () => {
    const file = (state: string, extra: object = {}) => ({
      path: '/ws/AGENTS.md',
      displayPath: 'AGENTS.md',
      scope: '.\u0000AGENTS.md',
      state,
      bytes: 10,
      ...extra,
    });
    const result = {
      projectRoot: '/ws',
      directory: '/ws',
      files: [file('outside-project', { target: '/etc/rules.md', reason: 'outside the project' }), file('quarantined')],
      sessions: [],
    } as unknown as ScopesResult;
    const [linked, unknown] = scopeItems(result, undefined);
    expect(linked!.description).toBe('links outside the project (not read) · 10 bytes');
    expect(linked!.detail).toBe('governs the whole project · links to /etc/rules.md · outside the project');
    expect(unknown!.description).toBe('quarantined · 10 bytes');
  });
});
