/**
 * SidecarClient.request is the one place dsh/scopes and dsh/context/preview are sent: it asks
 * for compact paths and hands its callers whole ScopeFiles (src/compactPaths.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import * as vscode from 'vscode';
import { SidecarClient } from '../src/client';
import { CONTEXT_PREVIEW, SCOPES, SESSION_LIST } from '../src/methods';

// The real language client needs the real `vscode` module; request() only needs sendRequest.
// (vi.mock is hoisted above the imports.)
vi.mock('vscode-languageclient/node', () => ({ LanguageClient: class {} }));

/** A SidecarClient whose running language client answers `answer` and records what it was sent. */
function clientAnswering(answer: unknown): { sidecar: SidecarClient; sent: unknown[][] } {
  const sidecar = new SidecarClient(
    { appendLine: () => undefined } as unknown as vscode.OutputChannel,
    vscode.Uri.file('/ext'),
    { current: undefined } as never,
  );
  const sent: unknown[][] = [];
  const running = {
    isRunning: () => true,
    sendRequest: async (...args: unknown[]) => {
      sent.push(args);
      return answer;
    },
  };
  (sidecar as unknown as { client: unknown }).client = running;
  return { sidecar, sent };
}

describe('SidecarClient.request and compact paths', () => {
  it('asks dsh/scopes for compact paths and returns whole files', async () => {
    const { sidecar, sent } = clientAnswering({
      projectRoot: '/ws',
      directory: '/ws/a',
      files: [{ scope: 'a\u0000AGENTS.md', state: 'included', bytes: 4 }],
      sessions: [],
    });
    const result = await sidecar.request(SCOPES, { uri: 'file:///ws/a/x.ts' });
    expect(sent).toEqual([[SCOPES, { uri: 'file:///ws/a/x.ts', compactPaths: true }]]);
    expect(result.files[0]).toEqual({
      path: '/ws/a/AGENTS.md',
      displayPath: 'a/AGENTS.md',
      scope: 'a\u0000AGENTS.md',
      state: 'included',
      bytes: 4,
    });
  });

  it('does the same for dsh/context/preview, passing the cancellation token on', async () => {
    const { sidecar, sent } = clientAnswering({
      text: '',
      projectRoot: '/ws',
      files: [{ scope: '.\u0000CLAUDE.md', state: 'omitted', bytes: 2 }],
      omitted: ['/ws/CLAUDE.md'],
      truncated: [],
      baselineIdentity: 'b',
    });
    const token = new vscode.CancellationTokenSource().token;
    const result = await sidecar.request(CONTEXT_PREVIEW, { cwd: '/ws' }, token);
    expect(sent).toEqual([[CONTEXT_PREVIEW, { cwd: '/ws', compactPaths: true }, token]]);
    expect(result.files[0]?.path).toBe('/ws/CLAUDE.md');
    expect(result.omitted).toEqual(['/ws/CLAUDE.md']);
  });

  it('sends and returns every other request as it is', async () => {
    const answer = { sessions: [], waitingTouches: {} };
    const { sidecar, sent } = clientAnswering(answer);
    const params = { limit: 5 };
    expect(await sidecar.request(SESSION_LIST, params)).toBe(answer);
    expect(sent[0]?.[1]).toBe(params);
  });
});
