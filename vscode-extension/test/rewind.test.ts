import { describe, expect, it } from 'vitest';
import { lastTurnOf } from '../src/chat/rewind';
import type { DshEvent, Message } from '../src/protocol';

const event = (seq: number, type: string, data: Record<string, unknown>): DshEvent => ({ type, seq, time: 0, data });
const user = (text: string, kind = 'user'): Message => ({ id: `u${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind } });
const answer = (text: string): Record<string, unknown> => ({
  turn: 1,
  step: 1,
  message: { id: `a${text}`, role: 'assistant', content: [{ type: 'text', text }], source: { kind: 'assistant' } },
});

describe('lastTurnOf', () => {
  it('spans the last prompt to the end of the surface, skipping context after it', () => {
    const events = [
      event(1, 'user/message', user('first') as unknown as Record<string, unknown>),
      event(2, 'assistant/message', answer('one')),
      event(3, 'user/message', user('second') as unknown as Record<string, unknown>),
      event(4, 'user/message', user('<system-reminder>rules', 'agent-instructions') as unknown as Record<string, unknown>),
      event(5, 'assistant/message', answer('two')),
    ];
    expect(lastTurnOf(events)).toEqual({ start: 2, end: 4, prompt: 'second' });
  });

  it('is undefined without a prompt', () => {
    expect(lastTurnOf([event(1, 'assistant/message', answer('x'))])).toBeUndefined();
    expect(lastTurnOf([])).toBeUndefined();
  });
});
