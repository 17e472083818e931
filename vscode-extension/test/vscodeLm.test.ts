import { describe, expect, it } from 'vitest';
import { assistantMessage, toolResultMessage } from '../src/chat/convert';
import type { Message } from '../src/protocol';
import { TOOL_DEFINITIONS } from '../src/tools';
import { lmRuntime, selectLmModel, toLmMessages, VscodeLmChatModel, type LmRuntime } from '../src/model/vscodeLm';

class TextPart {
  constructor(readonly value: string) {}
}
class ToolCallPart {
  constructor(readonly callId: string, readonly name: string, readonly input: object) {}
}
class ToolResultPart {
  constructor(readonly callId: string, readonly content: unknown[]) {}
}
const ChatMessage = {
  User: (content: string | unknown[]) => ({ role: 'user', content }),
  Assistant: (content: string | unknown[]) => ({ role: 'assistant', content }),
};

function fakeApi(models: unknown[], withTools = true): Record<string, unknown> {
  return {
    lm: { selectChatModels: async () => models },
    LanguageModelChatMessage: ChatMessage,
    LanguageModelTextPart: TextPart,
    ...(withTools ? { LanguageModelToolCallPart: ToolCallPart, LanguageModelToolResultPart: ToolResultPart } : {}),
  };
}

const prompt: Message = { id: 'p', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } };
const call = assistantMessage('Looking', [{ id: 'c1', name: 'read', arguments: { file_path: 'x' } }], { provider: 'p', model: 'm' });
const result = toolResultMessage('c1', 'X');

describe('lmRuntime', () => {
  it('is undefined in editors without vscode.lm (VS Code < 1.90, code-server without models API)', () => {
    expect(lmRuntime({})).toBeUndefined();
    expect(lmRuntime({ lm: {} })).toBeUndefined();
  });

  it('runs without tool parts before 1.95', () => {
    const runtime = lmRuntime(fakeApi([], false))!;
    expect(runtime.ToolCallPart).toBeUndefined();
    expect(toLmMessages(runtime, [prompt, call, result])).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [new TextPart('Looking'), new TextPart('[called read {"file_path":"x"}]')] },
      { role: 'user', content: 'Result of tool call c1:\nX' },
    ]);
  });
});

describe('toLmMessages', () => {
  it('uses tool call and result parts, and puts the system prompt first as a user message', () => {
    const runtime = lmRuntime(fakeApi([]))!;
    expect(toLmMessages(runtime, [prompt, call, result], 'sys')).toEqual([
      { role: 'user', content: 'sys' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [new TextPart('Looking'), new ToolCallPart('c1', 'read', { file_path: 'x' })] },
      { role: 'user', content: [new ToolResultPart('c1', [new TextPart('X')])] },
    ]);
  });
});

describe('VscodeLmChatModel', () => {
  const chat = (parts: unknown[], seen: unknown[] = []) => ({
    id: 'copilot-gpt',
    name: 'GPT',
    vendor: 'copilot',
    family: 'gpt-4o',
    async sendRequest(messages: unknown[], options: unknown) {
      seen.push({ messages, options });
      return {
        stream: (async function* () {
          yield* parts;
        })(),
      };
    },
  });

  it('picks a model by family, id or name, or the first', async () => {
    const a = chat([]);
    const b = { ...chat([]), id: 'other', family: 'claude', name: 'Claude' };
    const runtime = lmRuntime(fakeApi([a, b]))!;
    expect(await selectLmModel(runtime, '')).toBe(a);
    expect(await selectLmModel(runtime, 'claude')).toBe(b);
    expect(await selectLmModel(runtime, 'other')).toBe(b);
    expect(await selectLmModel(runtime, 'Claude')).toBe(b);
    expect(await selectLmModel(runtime, 'nope')).toBeUndefined();
  });

  it('streams text parts and collects tool calls, offering our tools', async () => {
    const seen: { options: { tools?: { name: string }[] } }[] = [];
    const runtime = lmRuntime(fakeApi([])) as LmRuntime;
    const model = new VscodeLmChatModel(runtime, chat([new TextPart('a'), new TextPart('b'), new ToolCallPart('t1', 'read', { file_path: 'y' })], seen));
    const pieces: string[] = [];
    const out = await model.complete({
      messages: [prompt],
      tools: TOOL_DEFINITIONS,
      signal: new AbortController().signal,
      onText: (t) => pieces.push(t),
    });
    expect(model.model).toBe('copilot/gpt-4o');
    expect(pieces).toEqual(['a', 'b']);
    expect(out).toEqual({ text: 'ab', toolCalls: [{ id: 't1', name: 'read', arguments: { file_path: 'y' } }] });
    expect(seen[0]!.options.tools!.map((t) => t.name)).toEqual(['read', 'write', 'edit']);
  });
});
