/**
 * Compile-time tests of the typed request helper (checked by `tsc --noEmit -p .`, which
 * tests/editors/test_vscode_unit.py runs). Each `@ts-expect-error` line must fail to type-check:
 * if a change made the wrong shape acceptable, the directive itself becomes the error.
 * Nothing here runs; the functions are never called.
 */
import type { Sidecar } from '../src/client';
import { CONTEXT_PENDING, SCOPES, SESSION_OPEN, STEP_END, STEP_PREPARE, TOOL_RESULT } from '../src/methods';
import type { ScopesResult, SessionOpenResult } from '../src/protocol';

export async function rightShapesCompile(sidecar: Sidecar): Promise<void> {
  const opened: SessionOpenResult = await sidecar.request(SESSION_OPEN, { cwd: '/ws', title: 't' });
  const scopes: ScopesResult = await sidecar.request(SCOPES, { uri: 'file:///ws/a.ts' });
  // The wire may leave a file's paths out (compactPaths); a result always has them back.
  const paths: string[] = scopes.files.map((f) => f.path);
  const ended: null = await sidecar.request(STEP_END, { sessionId: 's', turn: 1, step: 1 });
  await sidecar.notify(TOOL_RESULT, { sessionId: 's', token: 't', name: 'read', arguments: {}, isError: false });
  void [opened, scopes, paths, ended];
}

export async function wrongParamsFail(sidecar: Sidecar): Promise<void> {
  // @ts-expect-error cwd is required
  await sidecar.request(SESSION_OPEN, { title: 't' });
  // @ts-expect-error sessionId is a string
  await sidecar.request(CONTEXT_PENDING, { sessionId: 7 });
  // @ts-expect-error step/prepare needs turn and step
  await sidecar.request(STEP_PREPARE, { sessionId: 's' });
  // @ts-expect-error prompt is an object, not a string
  await sidecar.request(STEP_PREPARE, { sessionId: 's', turn: 1, step: 1, prompt: 'hi' });
  // @ts-expect-error isError is required on dsh/tool/result
  await sidecar.notify(TOOL_RESULT, { sessionId: 's', token: 't', name: 'read', arguments: {} });
  // @ts-expect-error not a request method
  await sidecar.request('dsh/no/such', {});
}

export async function wrongResultsFail(sidecar: Sidecar): Promise<void> {
  // @ts-expect-error dsh/scopes answers a ScopesResult, not a session
  const wrong: SessionOpenResult = await sidecar.request(SCOPES, { uri: 'file:///ws/a.ts' });
  // @ts-expect-error dsh/context/pending has messages, not events
  const events: unknown[] = (await sidecar.request(CONTEXT_PENDING, { sessionId: 's' })).events;
  void [wrong, events];
}
