import { describe, expect, it } from 'vitest';
import { ChatSessions, sessionStateKey } from '../src/chat/sessions';
import type { Sidecar } from '../src/client';
import type { DshEvent } from '../src/protocol';
import { Uri } from './__mocks__/vscode';

class Memento {
  values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string, fallback?: T): T | undefined {
    return (this.values.has(key) ? this.values.get(key) : fallback) as T | undefined;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

class FakeSidecar implements Sidecar {
  calls: { method: string; params: Record<string, unknown> }[] = [];
  known = new Map<string, DshEvent[]>();
  minted = 0;
  async request<R>(method: string, raw: unknown): Promise<R> {
    const params = raw as Record<string, unknown>;
    this.calls.push({ method, params });
    if (method === 'dsh/session/open') {
      const id = params['sessionId'] as string | undefined;
      if (id !== undefined && this.known.has(id)) {
        return { session: { id, createdAt: 1, cwd: params['cwd'] }, resumed: true } as R;
      }
      const fresh = id ?? `new-${++this.minted}`;
      this.known.set(fresh, []);
      return { session: { id: fresh, createdAt: 2, cwd: params['cwd'] }, resumed: false } as R;
    }
    if (method === 'dsh/session/events') {
      const all = this.known.get(params['sessionId'] as string) ?? [];
      const after = (params['afterSeq'] as number | undefined) ?? -1;
      return { events: all.filter((e) => e.seq > after).slice(0, params['limit'] as number) } as R;
    }
    if (method === 'dsh/session/close') return null as R;
    if (method === 'dsh/session/append') return { seqs: [0] } as R;
    if (method === 'dsh/session/list') {
      return {
        sessions: [
          { id: 'new-1', createdAt: 5, cwd: '/ws', title: 'Latest' },
          { id: 'sub', createdAt: 4, cwd: '/ws/sub' },
          { id: 'kept', createdAt: 3, cwd: '/ws' },
        ],
      } as R;
    }
    throw new Error(`unexpected ${method}`);
  }
  async notify(): Promise<void> {}
}

const folder = { uri: Uri.file('/ws'), name: 'ws', index: 0 };

describe('ChatSessions', () => {
  it('opens a new session for a folder once, even when asked twice at the same time, and remembers its id', async () => {
    const sidecar = new FakeSidecar();
    const state = new Memento();
    const sessions = new ChatSessions(sidecar, state as never);
    const [a, b] = await Promise.all([sessions.ensure(folder as never), sessions.ensure(folder as never)]);
    expect(a).toBe(b);
    expect(a.nextTurn).toBe(1);
    expect(sidecar.calls.filter((c) => c.method === 'dsh/session/open')).toHaveLength(1);
    expect(sidecar.calls[0]!.params).toEqual({ cwd: '/ws' }); // titled by its first prompt later
    expect(state.get(sessionStateKey(folder as never))).toBe('new-1');
  });

  it('resumes the remembered session and continues after its highest turn, paging through the log', async () => {
    const sidecar = new FakeSidecar();
    const events: DshEvent[] = [];
    for (let seq = 0; seq < 2500; seq++) events.push({ seq, type: 'step/start', time: 0, data: { turn: seq === 1700 ? 7 : 2, step: 1 } });
    sidecar.known.set('old', events);
    const state = new Memento();
    await state.update(sessionStateKey(folder as never), 'old');
    const session = await new ChatSessions(sidecar, state as never).ensure(folder as never);
    expect(session.resumed).toBe(true);
    expect(session.header.id).toBe('old');
    expect(session.nextTurn).toBe(8);
    expect(sidecar.calls.filter((c) => c.method === 'dsh/session/events').map((c) => c.params['afterSeq'])).toEqual([undefined, 999, 1999]);
  });

  it('reopens every live session after a sidecar restart, and replace() starts a fresh one', async () => {
    const sidecar = new FakeSidecar();
    const state = new Memento();
    const sessions = new ChatSessions(sidecar, state as never);
    const first = await sessions.ensure(folder as never);
    await sessions.reopenAll();
    const again = sessions.get(folder as never)!;
    expect(again.header.id).toBe(first.header.id);
    expect(again.resumed).toBe(true);
    const fresh = await sessions.replace(folder as never);
    expect(fresh.header.id).not.toBe(first.header.id);
    expect(state.get(sessionStateKey(folder as never))).toBe(fresh.header.id);
  });

  it('resumes only remembered sessions at startup, never creating one', async () => {
    const sidecar = new FakeSidecar();
    sidecar.known.set('kept', []);
    const state = new Memento();
    const other = { uri: Uri.file('/other'), name: 'other', index: 1 };
    await state.update(sessionStateKey(folder as never), 'kept');
    const sessions = new ChatSessions(sidecar, state as never);
    await sessions.resumeRemembered([folder, other] as never);
    expect(sessions.get(folder as never)?.header.id).toBe('kept');
    expect(sessions.get(other as never)).toBeUndefined();
    expect(sidecar.calls.filter((c) => c.method === 'dsh/session/open')).toHaveLength(1);
  });

  it('switches to an earlier session and closes the one it leaves; replace() closes too', async () => {
    const sidecar = new FakeSidecar();
    sidecar.known.set('kept', []);
    const sessions = new ChatSessions(sidecar, new Memento() as never);
    const changes: string[] = [];
    sessions.onDidChange((s) => changes.push(s.header.id));
    const first = await sessions.ensure(folder as never);
    const earlier = await sessions.switchTo(folder as never, 'kept');
    expect(earlier).toMatchObject({ resumed: true, header: { id: 'kept' } });
    expect(sessions.get(folder as never)).toBe(earlier);
    const lifecycle = () =>
      sidecar.calls.filter((c) => c.method === 'dsh/session/open' || c.method === 'dsh/session/close').map((c) => [c.method, c.params['sessionId']]);
    expect(lifecycle()).toEqual([
      ['dsh/session/open', undefined],
      ['dsh/session/open', 'kept'],
      ['dsh/session/close', first.header.id], // after the new one is open, never before
    ]);
    expect(await sessions.switchTo(folder as never, 'kept')).toBe(earlier); // already there: nothing sent
    await sessions.replace(folder as never);
    expect(sidecar.calls.at(-1)).toEqual({ method: 'dsh/session/close', params: { sessionId: 'kept' } });
    expect(changes).toEqual([first.header.id, 'kept', 'new-2']);
  });

  it('titles a session with a session/title event', async () => {
    const sidecar = new FakeSidecar();
    const sessions = new ChatSessions(sidecar, new Memento() as never);
    const session = await sessions.ensure(folder as never);
    await sessions.setTitle(session, 'Fix the parser');
    expect(sidecar.calls.at(-1)).toEqual({
      method: 'dsh/session/append',
      params: { sessionId: session.header.id, events: [{ type: 'session/title', data: { title: 'Fix the parser' } }] },
    });
    expect(session.header.title).toBe('Fix the parser');
  });

  it('lists only the folder\'s own sessions, marking the open one', async () => {
    const sidecar = new FakeSidecar();
    const sessions = new ChatSessions(sidecar, new Memento() as never);
    await sessions.ensure(folder as never);
    const items = await sessions.list(folder as never, 10);
    expect(sidecar.calls.at(-1)!.params).toEqual({ limit: 200, query: '/ws' });
    expect(items.map((i) => [i.id, i.title, i.current])).toEqual([
      ['new-1', 'Latest', true],
      ['kept', 'Untitled session', false],
    ]);
  });
});
