import { describe, expect, it } from 'vitest';
import { discardPending, errorCode } from '../src/chat/discard';
import type { Sidecar } from '../src/client';
import type { Message } from '../src/protocol';

const pending: Message = {
  id: 'm2',
  role: 'user',
  content: [{ type: 'text', text: 'later batch' }],
  source: { kind: 'agent-instructions', form: 'instructions', changes: [] },
};

function rpcError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code: -32602, data: { code } });
}

/** Records calls; answers discard with `discardAnswer` (or throws it). */
function fake(discardAnswer: Message[] | Error): Sidecar & { calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  return {
    calls,
    async request(method: string, params: unknown) {
      calls.push([method, params]);
      if (method === 'dsh/context/discard') {
        if (discardAnswer instanceof Error) throw discardAnswer;
        return { messages: discardAnswer };
      }
      if (method === 'dsh/context/pending') return { messages: [pending] };
      throw new Error(`unexpected ${method}`);
    },
    async notify() {},
  } as Sidecar & { calls: [string, unknown][] };
}

describe('discardPending', () => {
  it('drops a whole message, or only the changes named by scope', async () => {
    const whole = fake([]);
    expect(await discardPending(whole, 's1', 'm1')).toEqual({ messages: [] });
    expect(whole.calls).toEqual([['dsh/context/discard', { sessionId: 's1', messageId: 'm1' }]]);

    const some = fake([pending]);
    expect(await discardPending(some, 's1', 'm1', ['pkg\u0000AGENTS.md'])).toEqual({ messages: [pending] });
    expect(some.calls).toEqual([['dsh/context/discard', { sessionId: 's1', messageId: 'm1', scopes: ['pkg\u0000AGENTS.md'] }]]);
  });

  it('shows what is pending now when the message was claimed or replaced meanwhile', async () => {
    const sidecar = fake(rpcError("message 'm1' is not pending", 'unknown-message'));
    expect(await discardPending(sidecar, 's1', 'm1')).toEqual({
      messages: [pending],
      note: 'That context was already sent or replaced; nothing was dropped.',
    });
  });

  it('says so when the store is busy, and passes other errors on', async () => {
    await expect(discardPending(fake(rpcError('busy', 'store-busy')), 's1', 'm1')).rejects.toThrow(
      'The session store is busy (another sidecar is writing); nothing was dropped. Try again.',
    );
    await expect(discardPending(fake(rpcError("session 's1' is not open", 'unknown-session')), 's1', 'm1')).rejects.toThrow(
      "session 's1' is not open",
    );
  });

  it('reads data.code of JSON-RPC errors only', () => {
    expect(errorCode(rpcError('x', 'store-busy'))).toBe('store-busy');
    expect(errorCode(new Error('plain'))).toBeUndefined();
    expect(errorCode(undefined)).toBeUndefined();
  });
});
