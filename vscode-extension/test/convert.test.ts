import { describe, expect, it } from 'vitest';
import {
  assistantMessage,
  describeContext,
  normalizeForModel,
  surfaceToMessages,
  timeNotesBeforePrompts,
  toChatItems,
  toolResultMessage,
} from '../src/chat/convert';
import type { DshEvent, Message } from '../src/protocol';

const prompt: Message = { id: 'p', role: 'user', content: [{ type: 'text', text: 'read x' }], source: { kind: 'user', rpcId: 'r' } };
const instructions: Message = {
  id: 'i',
  role: 'user',
  content: [{ type: 'text', text: '<system-reminder>\nAdditional instructions from: pkg/AGENTS.md\n…\n</system-reminder>' }],
  source: {
    kind: 'agent-instructions',
    form: 'instructions',
    changes: [{ action: 'set', scope: 'pkg\u0000AGENTS.md', path: 'pkg/AGENTS.md', digest: 'd' }],
  },
};
const call = assistantMessage('Reading.', [{ id: 'c1', name: 'read', arguments: { file_path: 'x' } }], { provider: 'p', model: 'm' });
const result = toolResultMessage('c1', 'content of x');
const answer = assistantMessage('It says hi.', [], { provider: 'p', model: 'm' });

const event = (seq: number, type: string, data: Record<string, unknown>): DshEvent => ({ seq, type, time: 0, data, surfaceOp: 'append' });

describe('surfaceToMessages', () => {
  it('unwraps user/message data and the {turn, step, message} of the others, skipping other events', () => {
    const events = [
      event(0, 'turn/start', { turn: 1 }),
      event(1, 'user/message', prompt as unknown as Record<string, unknown>),
      event(2, 'assistant/message', { turn: 1, step: 1, message: call }),
      event(3, 'tool/result', { turn: 1, step: 1, message: result }),
      event(4, 'user/message', instructions as unknown as Record<string, unknown>),
      event(5, 'assistant/message', { turn: 1, step: 2, message: answer }),
      event(6, 'assistant/message', { turn: 1, step: 2, message: { broken: true } }),
    ];
    expect(surfaceToMessages(events).map((m) => m.id)).toEqual(['p', call.id, result.id, 'i', answer.id]);
  });
});

describe('normalizeForModel', () => {
  it('keeps complete call/result pairs and context in order', () => {
    const history = [prompt, call, result, instructions, answer];
    expect(normalizeForModel(history)).toEqual(history);
  });

  it('drops a call nobody answered, keeping the text of its message', () => {
    const out = normalizeForModel([prompt, call, answer]);
    expect(out.map((m) => m.id)).toEqual(['p', call.id, answer.id]);
    expect(out[1]!.content).toEqual([{ type: 'text', text: 'Reading.' }]);
  });

  it('drops a message that was nothing but unanswered calls', () => {
    const bare = assistantMessage('', [{ id: 'c9', name: 'read', arguments: {} }], { provider: 'p', model: 'm' });
    expect(normalizeForModel([prompt, bare]).map((m) => m.id)).toEqual(['p']);
  });

  it('drops a result whose call was compacted away', () => {
    const summary: Message = { id: 's', role: 'user', content: [{ type: 'text', text: 'summary' }], source: { kind: 'plugin', plugin: 'compact', compactionId: 'k' } };
    expect(normalizeForModel([summary, result, answer]).map((m) => m.id)).toEqual(['s', answer.id]);
  });

  it('orders results as the calls were made and ignores duplicates', () => {
    const two = assistantMessage('', [
      { id: 'a', name: 'read', arguments: {} },
      { id: 'b', name: 'read', arguments: {} },
    ], { provider: 'p', model: 'm' });
    const ra = toolResultMessage('a', 'A');
    const rb = toolResultMessage('b', 'B');
    const rb2 = toolResultMessage('b', 'B again');
    expect(normalizeForModel([two, rb, ra, rb2]).map((m) => m.id)).toEqual([two.id, ra.id, rb.id]);
  });
});

describe('timeNotesBeforePrompts', () => {
  const note = (id: string): Message => ({
    id,
    role: 'user',
    content: [{ type: 'text', text: `Time sampled while preparing turn 1, step 1: ${id}` }],
    source: { kind: 'plugin', plugin: 'time-context', form: 'snapshot', sections: [] },
  });
  const tmux: Message = { id: 't', role: 'user', content: [{ type: 'text', text: 'tmux location (turn 1):' }], source: { kind: 'plugin', plugin: 'tmux-context' } };
  const ids = (messages: Message[]): string[] => messages.map((m) => m.id);

  it('puts the note of a prompt\'s batch before the prompt, after what came before it', () => {
    const time = note('n1');
    expect(ids(timeNotesBeforePrompts([answer, tmux, prompt, instructions, time]))).toEqual([answer.id, 't', 'n1', 'p', 'i']);
  });

  it('moves the notes of earlier turns in the history the same way, and changes no message', () => {
    const first = note('n1');
    const second = note('n2');
    const later: Message = { ...prompt, id: 'p2' };
    const out = timeNotesBeforePrompts([prompt, first, answer, later, instructions, second]);
    expect(ids(out)).toEqual(['n1', 'p', answer.id, 'n2', 'p2', 'i']);
    expect(out.find((m) => m.id === 'n2')).toBe(second);
  });

  it('leaves a later step\'s note after the tool results it follows', () => {
    const time = note('n3');
    const history = [prompt, call, result, instructions, time];
    expect(ids(timeNotesBeforePrompts(history))).toEqual(ids(history));
  });

  it('puts a retry\'s note before the prompt still waiting for its answer', () => {
    expect(ids(timeNotesBeforePrompts([answer, prompt, note('n4')]))).toEqual([answer.id, 'n4', 'p']);
  });
});

describe('messages the loop creates', () => {
  it('records the model as the source and tool results as user messages sourced from the call', () => {
    expect(call).toMatchObject({ role: 'assistant', source: { kind: 'model', provider: 'p', model: 'm' } });
    expect(call.content[1]).toEqual({ type: 'tool-call', id: 'c1', name: 'read', arguments: { file_path: 'x' } });
    expect(result).toMatchObject({ role: 'user', source: { kind: 'tool', callId: 'c1' }, content: [{ type: 'text', text: 'content of x' }] });
    expect(call.id).not.toBe(answer.id);
  });
});

describe('toChatItems', () => {
  it('renders prompts, answers, tool calls and results, and context with a heading from its source', () => {
    const items = toChatItems([prompt, instructions, call, result, toolResultMessage('c2', 'Error: no such file'), answer]);
    expect(items.map((i) => [i.kind, i.title])).toEqual([
      ['user', ''],
      ['context', 'Workspace instructions: set pkg/AGENTS.md'],
      ['assistant', ''],
      ['tool-call', 'read x'],
      ['tool-result', 'Result of read x'],
      ['tool-result', 'Tool result'],
      ['assistant', ''],
    ]);
    expect(items[5]!.isError).toBe(true);
    expect(items[4]!.isError).toBe(false);
  });

  it('names the call a result answers across separate calls sharing one map', () => {
    const titles = new Map<string, string>();
    toChatItems([call], titles);
    expect(toChatItems([result], titles)[0]!.title).toBe('Result of read x');
  });

  it('describes each kind of sourced context', () => {
    const msg = (source: Message['source']): Message => ({ id: 'x', role: 'user', content: [], source });
    expect(describeContext(msg({ kind: 'agent-instructions', baseline: true, changes: [{ action: 'set', scope: '.\u0000AGENTS.md', path: 'AGENTS.md' }] }))).toBe(
      'Baseline: AGENTS.md',
    );
    expect(describeContext(msg({ kind: 'agent-instructions', baseline: true, changes: [] }))).toBe('Baseline: no instruction files');
    // A re-baseline after a discard: the removals of the old one are not listed, the files grouped.
    const change = (action: string, path: string) => ({ action, scope: path, path });
    const rebaseline = [change('remove', 'pkg/AGENTS.md'), change('set', 'AGENTS.md'), change('set', 'lib/AGENTS.md'), change('set', 'src/AGENTS.md'), change('set', 'pkg/AGENTS.md')];
    expect(describeContext(msg({ kind: 'agent-instructions', baseline: true, changes: rebaseline }))).toBe('Baseline: AGENTS.md, lib/AGENTS.md (+2)');
    expect(describeContext(msg({ kind: 'agent-instructions', changes: [change('set', 'pkg/AGENTS.md')] }))).toBe('Workspace instructions: set pkg/AGENTS.md');
    expect(describeContext(msg({ kind: 'session-reference', form: 'recall' }))).toBe('Referenced sessions');
    expect(describeContext(msg({ kind: 'plugin', plugin: 'time-context' }))).toBe('Time');
    expect(describeContext(msg({ kind: 'plugin', plugin: 'compact' }))).toBe('Summary of earlier conversation');
  });
});

describe('tool cards', () => {
  it('gives a call its tool, file and id, and a result its call and status', () => {
    const call: Message = {
      id: 'm1',
      role: 'assistant',
      content: [{ type: 'tool-call', id: 'c9', name: 'write', arguments: { file_path: 'src/a.py', content: 'x' } }],
      source: { kind: 'assistant' },
    };
    const [card] = toChatItems([call]);
    expect(card).toMatchObject({ kind: 'tool-call', callId: 'c9', tool: 'write', file: 'src/a.py' });
    const statusOf = (text: string) => toChatItems([toolResultMessage('c9', text)])[0]!;
    expect(statusOf('Wrote src/a.py')).toMatchObject({ callId: 'c9', status: 'done' });
    expect(statusOf('Error: no such file')).toMatchObject({ status: 'failed' });
    expect(statusOf('Error: the user rejected the write of src/a.py; the file was not changed.')).toMatchObject({
      status: 'rejected',
    });
  });
});
