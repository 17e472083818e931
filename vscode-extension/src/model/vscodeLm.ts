/**
 * Chat models the editor itself offers (`vscode.lm`, e.g. Copilot), used when no
 * OpenAI-compatible endpoint is configured.
 *
 * The extension supports VS Code 1.82, whose API has no `vscode.lm` (final in 1.90, tool calling
 * in 1.95), so the API is described structurally here and looked up at run time.
 */
import * as vscode from 'vscode';
import type { Message } from '../protocol';
import { messageText, normalizeForModel, toolCallsOf } from '../chat/convert';
import type { ToolCall } from '../tools';
import { type ChatModel, ModelError, type ModelRequest, type ModelResponse } from './types';

interface LmChatMessageStatic {
  User(content: string | unknown[]): unknown;
  Assistant(content: string | unknown[]): unknown;
}

interface LmChat {
  readonly id: string;
  readonly name: string;
  readonly vendor: string;
  readonly family: string;
  sendRequest(
    messages: unknown[],
    options: { justification?: string; tools?: { name: string; description: string; inputSchema: object }[] },
    token: vscode.CancellationToken,
  ): Thenable<{ stream: AsyncIterable<unknown> }>;
}

export interface LmRuntime {
  lm: { selectChatModels(selector?: Record<string, string>): Thenable<LmChat[]> };
  ChatMessage: LmChatMessageStatic;
  TextPart: new (value: string) => { value: string };
  /** Absent before VS Code 1.95: the model then runs without tools. */
  ToolCallPart?: new (callId: string, name: string, input: object) => { callId: string; name: string; input: object };
  ToolResultPart?: new (callId: string, content: unknown[]) => { callId: string; content: unknown[] };
}

/** The `vscode.lm` API of the running editor, or undefined when it has none. */
export function lmRuntime(api: unknown = vscode): LmRuntime | undefined {
  const v = api as Record<string, unknown>;
  const lm = v['lm'] as LmRuntime['lm'] | undefined;
  if (lm === undefined || typeof lm.selectChatModels !== 'function') return undefined;
  if (v['LanguageModelChatMessage'] === undefined || v['LanguageModelTextPart'] === undefined) return undefined;
  const runtime: LmRuntime = {
    lm,
    ChatMessage: v['LanguageModelChatMessage'] as LmChatMessageStatic,
    TextPart: v['LanguageModelTextPart'] as LmRuntime['TextPart'],
  };
  if (v['LanguageModelToolCallPart'] !== undefined && v['LanguageModelToolResultPart'] !== undefined) {
    runtime.ToolCallPart = v['LanguageModelToolCallPart'] as NonNullable<LmRuntime['ToolCallPart']>;
    runtime.ToolResultPart = v['LanguageModelToolResultPart'] as NonNullable<LmRuntime['ToolResultPart']>;
  }
  return runtime;
}

/** Pick a model: by `family` or `id` when a name is configured, else the first one offered. */
export async function selectLmModel(runtime: LmRuntime, name: string): Promise<LmChat | undefined> {
  const all = await runtime.lm.selectChatModels();
  if (name === '') return all[0];
  return all.find((m) => m.family === name || m.id === name || m.name === name);
}

/**
 * dsh messages → LanguageModelChatMessage. There is no system role: the system prompt goes
 * first as a user message, which is what the API's own samples do.
 */
export function toLmMessages(runtime: LmRuntime, messages: readonly Message[], system?: string): unknown[] {
  const { ChatMessage, TextPart, ToolCallPart, ToolResultPart } = runtime;
  const out: unknown[] = [];
  if (system !== undefined && system !== '') out.push(ChatMessage.User(system));
  for (const message of normalizeForModel(messages)) {
    const text = messageText(message);
    if (message.source.kind === 'tool') {
      const callId = String(message.source['callId']);
      out.push(
        ToolResultPart !== undefined
          ? ChatMessage.User([new ToolResultPart(callId, [new TextPart(text)])])
          : ChatMessage.User(`Result of tool call ${callId}:\n${text}`),
      );
    } else if (message.role === 'assistant') {
      const parts: unknown[] = [];
      if (text !== '') parts.push(new TextPart(text));
      for (const call of toolCallsOf(message)) {
        parts.push(
          ToolCallPart !== undefined
            ? new ToolCallPart(call.id, call.name, call.arguments)
            : new TextPart(`[called ${call.name} ${JSON.stringify(call.arguments)}]`),
        );
      }
      out.push(ChatMessage.Assistant(parts));
    } else {
      out.push(ChatMessage.User(text));
    }
  }
  return out;
}

export class VscodeLmChatModel implements ChatModel {
  readonly provider = 'vscode-lm';
  readonly model: string;

  constructor(
    private readonly runtime: LmRuntime,
    private readonly chat: LmChat,
  ) {
    this.model = `${chat.vendor}/${chat.family}`;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const source = new vscode.CancellationTokenSource();
    const onAbort = (): void => source.cancel();
    request.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const withTools = this.runtime.ToolCallPart !== undefined;
      const response = await this.chat.sendRequest(
        toLmMessages(this.runtime, request.messages, request.system),
        {
          justification: 'The DSH agent chat sends your prompt and workspace context to this model.',
          ...(withTools
            ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })) }
            : {}),
        },
        source.token,
      );
      let text = '';
      const toolCalls: ToolCall[] = [];
      for await (const part of response.stream) {
        if (part instanceof this.runtime.TextPart) {
          text += part.value;
          request.onText(part.value);
        } else if (this.runtime.ToolCallPart !== undefined && part instanceof this.runtime.ToolCallPart) {
          toolCalls.push({ id: part.callId, name: part.name, arguments: { ...(part.input as Record<string, unknown>) } });
        }
      }
      return { text, toolCalls };
    } catch (err) {
      if (request.signal.aborted) throw err;
      throw new ModelError(`editor language model failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      request.signal.removeEventListener('abort', onAbort);
      source.dispose();
    }
  }
}
