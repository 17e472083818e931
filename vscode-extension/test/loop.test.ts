import { describe, expect, it } from 'vitest';
import type { Sidecar } from '../src/client';
import { AgentLoop, type TurnOptions } from '../src/chat/loop';
import type { ChatModel, ModelRequest, ModelResponse } from '../src/model/types';
import type { Message } from '../src/protocol';
import { TOOL_DEFINITIONS, type ToolCall } from '../src/tools';

/** A sidecar that records every call and answers step/prepare from a script. */
class FakeSidecar implements Sidecar {
  calls: { method: string; params: Record<string, unknown> }[] = [];
  constructor(
    private readonly prepared: Record<number, Message[]>,
    private readonly fail: Partial<Record<string, Error>> = {},
  ) {}
  async request<R>(method: string, params: unknown): Promise<R> {
    this.calls.push({ method, params: params as Record<string, unknown> });
    const error = this.fail[method];
    if (error !== undefined) throw error;
    if (method === 'dsh/step/prepare') {
      const step = (params as { step: number }).step;
      return { messages: this.prepared[step] ?? [], seqs: [] } as R;
    }
    if (method === 'dsh/session/append') return { seqs: [this.calls.length] } as R;
    return null as R;
  }
  async notify(method: string, params: unknown): Promise<void> {
    this.calls.push({ method, params: params as Record<string, unknown> });
  }
  methods(): string[] {
    return this.calls.map((c) => c.method);
  }
}

class ScriptedModel implements ChatModel {
  readonly provider = 'test';
  readonly model = 'scripted';
  requests: Message[][] = [];
  constructor(private readonly replies: (ModelResponse | ((r: ModelRequest) => Promise<ModelResponse>))[]) {}
  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push([...request.messages]);
    const reply = this.replies[this.requests.length - 1];
    if (reply === undefined) throw new Error('no scripted reply left');
    if (typeof reply === 'function') return reply(request);
    if (reply.text !== '') request.onText(reply.text);
    return reply;
  }
}

const text = (id: string, body: string, source: Message['source'] = { kind: 'user' }): Message => ({
  id,
  role: 'user',
  content: [{ type: 'text', text: body }],
  source,
});
const promptMsg = text('p', 'read the file', { kind: 'user', rpcId: 'r1', clientTimeZone: 'Europe/Berlin' });
const nested = text('n', '<system-reminder>\nAdditional instructions from: pkg/AGENTS.md\n\nrules\n</system-reminder>', {
  kind: 'agent-instructions',
  form: 'instructions',
  changes: [{ action: 'set', scope: 'pkg\u0000AGENTS.md', path: 'pkg/AGENTS.md' }],
});
const readCall: ToolCall = { id: 'call_1', name: 'read', arguments: { file_path: 'pkg/src/x.txt' } };

function options(overrides: Partial<TurnOptions> & Pick<TurnOptions, 'model'>): TurnOptions {
  return {
    sessionId: 's1',
    turn: 3,
    prompt: 'read the file',
    clientTimeZone: 'Europe/Berlin',
    history: [],
    system: 'sys',
    tools: TOOL_DEFINITIONS,
    runTool: async () => ({ text: 'x content', isError: false, resolvedPath: '/ws/pkg/src/x.txt' }),
    maxSteps: 5,
    signal: new AbortController().signal,
    observer: { onMessage: () => undefined, onTextDelta: () => undefined },
    ...overrides,
  };
}

describe('AgentLoop', () => {
  it('runs model → tool → next step in protocol order until a plain answer', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg], 2: [nested] });
    const model = new ScriptedModel([
      { text: '', toolCalls: [readCall] },
      { text: 'It says hi.', toolCalls: [] },
    ]);
    const history = [text('old', 'earlier prompt')];
    const shown: string[] = [];
    const outcome = await new AgentLoop(sidecar).runTurn(
      options({ model, history, observer: { onMessage: (m) => shown.push(m.id), onTextDelta: () => undefined } }),
    );

    expect(outcome).toEqual({ reason: 'completed', steps: 2, promptRecorded: true });
    expect(sidecar.methods()).toEqual([
      'dsh/step/prepare',
      'dsh/session/append', // assistant message with the tool call
      'dsh/session/append', // tool result
      'dsh/tool/result',
      'dsh/step/end', // releases the touch: step 2 gets the nested AGENTS.md
      'dsh/step/prepare',
      'dsh/session/append', // final answer
      'dsh/step/end',
      'dsh/turn/end',
    ]);
    const [prepare1, append1, append2, toolResult, stepEnd1, prepare2, append3, stepEnd2, turnEnd] = sidecar.calls;
    expect(prepare1!.params).toEqual({
      sessionId: 's1',
      turn: 3,
      step: 1,
      prompt: { text: 'read the file', clientTimeZone: 'Europe/Berlin' },
    });
    expect(prepare2!.params).toEqual({ sessionId: 's1', turn: 3, step: 2 });
    const appended = (c: typeof append1) => (c!.params['events'] as { type: string; data: Record<string, unknown> }[])[0]!;
    expect(appended(append1)).toMatchObject({ type: 'assistant/message', data: { turn: 3, step: 1, message: { role: 'assistant' } } });
    expect(appended(append2)).toMatchObject({
      type: 'tool/result',
      data: { turn: 3, step: 1, message: { role: 'user', source: { kind: 'tool', callId: 'call_1' } } },
    });
    expect(appended(append3)).toMatchObject({ type: 'assistant/message', data: { turn: 3, step: 2 } });
    expect(toolResult!.params).toEqual({
      sessionId: 's1',
      token: 'call_1',
      name: 'read',
      arguments: { file_path: '/ws/pkg/src/x.txt' },
      isError: false,
    });
    expect(stepEnd1!.params).toEqual({ sessionId: 's1', turn: 3, step: 1 });
    expect(stepEnd2!.params).toEqual({ sessionId: 's1', turn: 3, step: 2 });
    expect(turnEnd!.params).toEqual({ sessionId: 's1', turn: 3, reason: 'completed' });

    // The second model request: history, prompt, the call, its result, THEN the new instructions.
    const second = model.requests[1]!;
    const roles = second.map((m) => (m.source.kind === 'tool' ? 'tool' : m.source.kind === 'model' ? 'assistant' : m.id));
    expect(roles).toEqual(['old', 'p', 'assistant', 'tool', 'n']);
    expect(shown).toContain('n');
  });

  it('reports tool errors with isError and keeps going', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const model = new ScriptedModel([
      { text: '', toolCalls: [{ id: 'c', name: 'read', arguments: { file_path: '../etc/passwd' } }] },
      { text: 'cannot', toolCalls: [] },
    ]);
    await new AgentLoop(sidecar).runTurn(
      options({ model, runTool: async () => ({ text: 'Error: outside', isError: true }) }),
    );
    const note = sidecar.calls.find((c) => c.method === 'dsh/tool/result')!;
    expect(note.params).toMatchObject({ isError: true, arguments: { file_path: '../etc/passwd' } });
  });

  it('stops at maxSteps and ends the turn with that reason', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const model = new ScriptedModel([
      { text: '', toolCalls: [readCall] },
      { text: '', toolCalls: [{ ...readCall, id: 'call_2' }] },
    ]);
    const outcome = await new AgentLoop(sidecar).runTurn(options({ model, maxSteps: 2 }));
    expect(outcome.reason).toBe('max-steps');
    expect(sidecar.methods().filter((m) => m === 'dsh/step/prepare')).toHaveLength(2);
    expect(sidecar.calls.at(-1)).toMatchObject({ method: 'dsh/turn/end', params: { reason: 'max-steps' } });
  });

  it('closes the open step and the turn when the model fails', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const model = new ScriptedModel([async () => Promise.reject(new Error('model down'))]);
    const outcome = await new AgentLoop(sidecar).runTurn(options({ model }));
    expect(outcome.reason).toBe('error');
    expect(String(outcome.error)).toMatch(/model down/);
    expect(sidecar.methods()).toEqual(['dsh/step/prepare', 'dsh/step/end', 'dsh/turn/end']);
    expect(sidecar.calls.at(-1)!.params).toEqual({ sessionId: 's1', turn: 3, reason: 'error' });
  });

  it('ends nothing when the first step/prepare is refused (nothing was written)', async () => {
    const sidecar = new FakeSidecar({}, { 'dsh/step/prepare': new Error('invalid-time-zone') });
    const outcome = await new AgentLoop(sidecar).runTurn(options({ model: new ScriptedModel([]) }));
    expect(outcome.reason).toBe('error');
    expect(outcome.promptRecorded).toBe(false); // the panel keeps the prompt in the box
    expect(sidecar.methods()).toEqual(['dsh/step/prepare']);
  });

  it('keeps a stopped answer: the partial text is appended, marked as stopped', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const controller = new AbortController();
    const model = new ScriptedModel([
      async (request) => {
        request.onText('The first half of ');
        request.onText('an answer');
        controller.abort();
        throw new Error('aborted');
      },
    ]);
    const shown: Message[] = [];
    const outcome = await new AgentLoop(sidecar).runTurn(
      options({ model, signal: controller.signal, observer: { onMessage: (m) => shown.push(m), onTextDelta: () => undefined } }),
    );
    expect(outcome).toMatchObject({ reason: 'aborted', promptRecorded: true });
    expect(sidecar.methods()).toEqual(['dsh/step/prepare', 'dsh/session/append', 'dsh/step/end', 'dsh/turn/end']);
    const event = (sidecar.calls[1]!.params['events'] as { type: string; data: { message: Message } }[])[0]!;
    expect(event.type).toBe('assistant/message');
    expect(event.data.message.content).toEqual([{ type: 'text', text: 'The first half of an answer' }]);
    expect(event.data.message.source).toEqual({ kind: 'model', provider: 'test', model: 'scripted', stopped: true });
    expect(shown.at(-1)).toBe(event.data.message);
    expect(sidecar.calls.at(-1)!.params).toEqual({ sessionId: 's1', turn: 3, reason: 'aborted' });
  });

  it('appends nothing when stopped before any text, and nothing for a failure mid-answer', async () => {
    for (const abort of [true, false]) {
      const sidecar = new FakeSidecar({ 1: [promptMsg] });
      const controller = new AbortController();
      const model = new ScriptedModel([
        async (request) => {
          if (!abort) request.onText('half');
          if (abort) controller.abort();
          throw new Error(abort ? 'aborted' : 'connection reset');
        },
      ]);
      const outcome = await new AgentLoop(sidecar).runTurn(options({ model, signal: controller.signal }));
      expect(outcome.reason).toBe(abort ? 'aborted' : 'error');
      expect(sidecar.methods()).toEqual(['dsh/step/prepare', 'dsh/step/end', 'dsh/turn/end']);
    }
  });

  it('retries without a prompt: step 1 is prepared with none', async () => {
    const sidecar = new FakeSidecar({ 1: [] });
    const model = new ScriptedModel([{ text: 'ok', toolCalls: [] }]);
    const history = [text('p0', 'the earlier prompt')];
    const o = options({ model, history });
    delete o.prompt;
    const outcome = await new AgentLoop(sidecar).runTurn(o);
    expect(outcome).toEqual({ reason: 'completed', steps: 1, promptRecorded: true });
    expect(sidecar.calls[0]!.params).toEqual({ sessionId: 's1', turn: 3, step: 1 });
    expect(model.requests[0]!.map((m) => m.id)).toEqual(['p0']);
  });

  it('hands the turn\'s signal to each tool call (an approval can be stopped)', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const controller = new AbortController();
    const seen: AbortSignal[] = [];
    const model = new ScriptedModel([{ text: '', toolCalls: [readCall] }, { text: 'done', toolCalls: [] }]);
    await new AgentLoop(sidecar).runTurn(
      options({
        model,
        signal: controller.signal,
        runTool: async (_call, signal) => {
          seen.push(signal);
          return { text: 'x', isError: false };
        },
      }),
    );
    expect(seen).toEqual([controller.signal]);
  });

  it('answers calls made before an abort without running them, and ends the turn as aborted', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const controller = new AbortController();
    let ran = 0;
    const model = new ScriptedModel([
      async () => {
        controller.abort();
        return { text: '', toolCalls: [readCall] };
      },
    ]);
    const outcome = await new AgentLoop(sidecar).runTurn(
      options({ model, signal: controller.signal, runTool: async () => ({ text: 'ran', isError: false, resolvedPath: (ran++, '/x') }) }),
    );
    expect(ran).toBe(0);
    expect(outcome.reason).toBe('aborted');
    expect(sidecar.calls.find((c) => c.method === 'dsh/tool/result')!.params).toMatchObject({ isError: true, aborted: true });
    expect(sidecar.calls.at(-1)).toMatchObject({ method: 'dsh/turn/end', params: { reason: 'aborted' } });
  });

  it('sends the time note before the prompt (the log keeps the sidecar\'s order)', async () => {
    const time = text('time', 'Time sampled while preparing turn 3, step 1: 2026-07-14T11:33:20+02:00[Europe/Berlin]', {
      kind: 'plugin',
      plugin: 'time-context',
      form: 'snapshot',
      sections: [],
    });
    const baseline = text('b', '<system-reminder>\nInstructions from: AGENTS.md\n</system-reminder>', { kind: 'agent-instructions', form: 'instructions', baseline: true });
    const sidecar = new FakeSidecar({ 1: [promptMsg, baseline, time] });
    const model = new ScriptedModel([{ text: 'Done.', toolCalls: [] }]);
    const shown: string[] = [];
    const history = [text('old', 'earlier prompt')];
    await new AgentLoop(sidecar).runTurn(
      options({ model, history, observer: { onMessage: (m) => shown.push(m.id), onTextDelta: () => undefined } }),
    );
    expect(model.requests[0]!.map((m) => m.id)).toEqual(['old', 'time', 'p', 'b']);
    expect(shown).toEqual(['p', 'b', 'time', expect.any(String)]);
  });

  it('omits clientTimeZone when the panel has none', async () => {
    const sidecar = new FakeSidecar({ 1: [promptMsg] });
    const o = options({ model: new ScriptedModel([{ text: 'ok', toolCalls: [] }]) });
    delete o.clientTimeZone;
    await new AgentLoop(sidecar).runTurn(o);
    expect(sidecar.calls[0]!.params['prompt']).toEqual({ text: 'read the file' });
  });
});
