import { describe, expect, it } from 'vitest';
import {
  askCompactPaths,
  expandAnswer,
  expandCompactPaths,
  expandScopeFile,
  scopeDisplayPath,
} from '../src/compactPaths';
import { CONTEXT_PREVIEW, SCOPES, SESSION_OPEN } from '../src/methods';
import type { ScopeFile, ScopesResult, WholeScopeFile } from '../src/protocol';

const ROOT = '/ws/proj';

function compact(scope: string, extra: Partial<ScopeFile> = {}): ScopeFile {
  return { scope, state: 'included', bytes: 12, digest: 'd1', includedBytes: 12, ...extra };
}

describe('scopeDisplayPath', () => {
  it('joins the directory and the name, the root "." giving the name alone', () => {
    expect(scopeDisplayPath('.\0AGENTS.md')).toBe('AGENTS.md');
    expect(scopeDisplayPath('a/b\0CLAUDE.md')).toBe('a/b/CLAUDE.md');
  });

  it('splits at the first NUL only, so a name may hold a slash', () => {
    expect(scopeDisplayPath('.\0.claude/CLAUDE.md')).toBe('.claude/CLAUDE.md');
    expect(scopeDisplayPath('pkg\0.claude/CLAUDE.md')).toBe('pkg/.claude/CLAUDE.md');
  });
});

describe('expandScopeFile', () => {
  it('puts back both paths of a file at the project root', () => {
    expect(expandScopeFile(compact('.\0AGENTS.md'), ROOT)).toEqual({
      path: '/ws/proj/AGENTS.md',
      displayPath: 'AGENTS.md',
      ...compact('.\0AGENTS.md'),
    });
  });

  it('puts back both paths of a nested file', () => {
    const file = expandScopeFile(compact('a/b\0CLAUDE.md', { state: 'truncated', reason: 'budget' }), ROOT);
    expect(file.path).toBe('/ws/proj/a/b/CLAUDE.md');
    expect(file.displayPath).toBe('a/b/CLAUDE.md');
    expect(file.state).toBe('truncated');
    expect(file.reason).toBe('budget');
  });

  it('keeps a name with a slash whole (.claude/CLAUDE.md)', () => {
    const file = expandScopeFile(compact('.\0.claude/CLAUDE.md'), ROOT);
    expect([file.path, file.displayPath]).toEqual(['/ws/proj/.claude/CLAUDE.md', '.claude/CLAUDE.md']);
  });

  it('leaves a user-global file, sent with both paths, as it came', () => {
    const global: WholeScopeFile = {
      path: '/home/u/.dsh/AGENTS.md',
      displayPath: '~/.dsh/AGENTS.md',
      scope: '~\0AGENTS.md',
      state: 'included',
      bytes: 5,
    };
    expect(expandScopeFile(global, ROOT)).toBe(global);
  });

  it('works out only the display path when the path is sent (a project root of "/")', () => {
    // "/" + "/" + "AGENTS.md" is not the path, so the server sends it.
    const file = expandScopeFile(compact('.\0AGENTS.md', { path: '/AGENTS.md' }), '/');
    expect([file.path, file.displayPath]).toEqual(['/AGENTS.md', 'AGENTS.md']);
  });

  it('builds the path from a display path that is sent', () => {
    const file = expandScopeFile(compact('a\0AGENTS.md', { displayPath: 'a/AGENTS.md' }), ROOT);
    expect(file.path).toBe('/ws/proj/a/AGENTS.md');
  });

  it('keeps every other field, imports and rule included', () => {
    const imports = [
      {
        path: '/ws/proj/docs/x.md',
        displayPath: 'docs/x.md',
        importer: '/ws/proj/AGENTS.md',
        state: 'imported' as const,
        depth: 1,
      },
    ];
    const rule = { ruleSet: 'claude' as const, mode: 'globs' as const, globs: ['*.ts'] };
    const file = expandScopeFile(compact('.\0AGENTS.md', { imports, rule, target: '/elsewhere/AGENTS.md' }), ROOT);
    expect(file.imports).toBe(imports);
    expect(file.rule).toBe(rule);
    expect(file.target).toBe('/elsewhere/AGENTS.md');
  });
});

describe('expandCompactPaths', () => {
  const whole: ScopesResult = {
    projectRoot: ROOT,
    directory: '/ws/proj/a/b',
    files: [
      { path: '/ws/proj/AGENTS.md', displayPath: 'AGENTS.md', scope: '.\0AGENTS.md', state: 'included', bytes: 3 },
      {
        path: '/ws/proj/a/b/CLAUDE.md',
        displayPath: 'a/b/CLAUDE.md',
        scope: 'a/b\0CLAUDE.md',
        state: 'omitted',
        bytes: 9,
      },
    ],
    sessions: [{ sessionId: 's1', active: [] }],
  };

  it('turns a compact answer into the whole one', () => {
    const wire = {
      ...whole,
      files: whole.files.map(({ path: _path, displayPath: _display, ...rest }) => rest),
    };
    expect(expandCompactPaths(wire)).toEqual(whole);
  });

  it('leaves an answer whose files are whole untouched', () => {
    const expanded = expandCompactPaths(whole);
    expect(expanded).toEqual(whole);
    expanded.files.forEach((f, i) => expect(f).toBe(whole.files[i]));
    expect(expanded.sessions).toBe(whole.sessions);
  });
});

describe('the request helpers SidecarClient.request uses', () => {
  it('ask dsh/scopes and dsh/context/preview for compact paths, and nothing else', () => {
    expect(askCompactPaths(SCOPES, { uri: 'file:///ws/a.ts' })).toEqual({ uri: 'file:///ws/a.ts', compactPaths: true });
    expect(askCompactPaths(CONTEXT_PREVIEW, { cwd: '/ws' })).toEqual({ cwd: '/ws', compactPaths: true });
    const open = { cwd: '/ws' };
    expect(askCompactPaths(SESSION_OPEN, open)).toBe(open);
  });

  it('expand the answers of those two methods only', () => {
    const wire = { projectRoot: ROOT, directory: ROOT, files: [compact('.\0AGENTS.md')], sessions: [] };
    expect(expandAnswer(SCOPES, wire).files[0]?.path).toBe('/ws/proj/AGENTS.md');
    const preview = { text: '', projectRoot: ROOT, files: [compact('x\0AGENTS.md')], omitted: [], truncated: [] };
    expect(expandAnswer(CONTEXT_PREVIEW, preview).files[0]?.displayPath).toBe('x/AGENTS.md');
    const opened = { session: { id: 's', createdAt: 1, cwd: '/ws' }, resumed: false, files: [compact('.\0A')] };
    expect(expandAnswer(SESSION_OPEN, opened)).toBe(opened);
  });
});
