/**
 * An OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...), streamed
 * over server-sent events, with function tools.
 */
import type { Message } from '../protocol';
import { messageText, normalizeForModel, toolCallsOf } from '../chat/convert';
import { parseToolArguments, type ToolCall, type ToolDefinition } from '../tools';
import { SseParser } from './sse';
import { type ChatModel, ModelError, type ModelRequest, type ModelResponse } from './types';

// --- wire shapes (only what we send and read) ---------------------------------------------------

export type OpenAiMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | { type: 'text'; text: string }[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * dsh messages → chat-completions messages. A user message with several text blocks (e.g. a
 * baseline and a reconciliation, each framed on its own) keeps them as separate parts.
 */
export function toOpenAiMessages(messages: readonly Message[], system?: string): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  if (system !== undefined && system !== '') out.push({ role: 'system', content: system });
  for (const message of normalizeForModel(messages)) {
    if (message.source.kind === 'tool') {
      out.push({
        role: 'tool',
        tool_call_id: String(message.source['callId']),
        content: messageText(message),
      });
    } else if (message.role === 'assistant') {
      const calls = toolCallsOf(message);
      const text = messageText(message);
      out.push({
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              })),
            }
          : {}),
      });
    } else {
      const texts = message.content.filter((b) => b.type === 'text').map((b) => b.text);
      out.push({
        role: 'user',
        content: texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text })),
      });
    }
  }
  return out;
}

export function toOpenAiTools(tools: readonly ToolDefinition[]): OpenAiTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/**
 * Folds streamed `chat.completion.chunk` objects into one answer. Tool calls arrive in pieces
 * keyed by `index`: the id and name once, the argument JSON as string fragments.
 */
export class CompletionAccumulator {
  text = '';
  finishReason: string | undefined;
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();

  /** Returns the text delta this chunk added (for streaming to the panel). */
  add(chunk: unknown): string {
    const choice = firstChoice(chunk);
    if (choice === undefined) return '';
    if (typeof choice['finish_reason'] === 'string') this.finishReason = choice['finish_reason'];
    // A non-streamed completion carries `message` instead of `delta`.
    const delta = asObject(choice['delta']) ?? asObject(choice['message']);
    if (delta === undefined) return '';
    let added = '';
    if (typeof delta['content'] === 'string') {
      added = delta['content'];
      this.text += added;
    }
    const toolCalls = delta['tool_calls'];
    if (Array.isArray(toolCalls)) {
      toolCalls.forEach((raw, position) => {
        const call = asObject(raw);
        if (call === undefined) return;
        const index = typeof call['index'] === 'number' ? call['index'] : position;
        const entry = this.calls.get(index) ?? { id: '', name: '', args: '' };
        if (typeof call['id'] === 'string' && call['id'] !== '') entry.id = call['id'];
        const fn = asObject(call['function']);
        if (fn !== undefined) {
          if (typeof fn['name'] === 'string') entry.name += fn['name'];
          if (typeof fn['arguments'] === 'string') entry.args += fn['arguments'];
          else if (asObject(fn['arguments']) !== undefined) entry.args += JSON.stringify(fn['arguments']);
        }
        this.calls.set(index, entry);
      });
    }
    return added;
  }

  toolCalls(): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({
        // Some servers omit ids; the loop needs one to pair the result with its call.
        id: c.id !== '' ? c.id : `call_${index}_${Date.now().toString(36)}`,
        name: c.name,
        ...parseToolArguments(c.args),
      }));
  }

  response(): ModelResponse {
    const out: ModelResponse = { text: this.text, toolCalls: this.toolCalls() };
    if (this.finishReason !== undefined) out.finishReason = this.finishReason;
    return out;
  }
}

function firstChoice(chunk: unknown): Record<string, unknown> | undefined {
  const choices = asObject(chunk)?.['choices'];
  return Array.isArray(choices) ? asObject(choices[0]) : undefined;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export interface OpenAiOptions {
  baseUrl: string;
  model: string;
  /** Looked up per request so a key set or cleared meanwhile takes effect. */
  apiKey: () => Promise<string | undefined>;
  /** Abandon the request after this long without any data from the server. */
  idleTimeoutMs: number;
  fetch?: typeof globalThis.fetch;
}

export class OpenAiChatModel implements ChatModel {
  readonly provider = 'openai-compatible';
  readonly model: string;

  constructor(private readonly options: OpenAiOptions) {
    this.model = options.model;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const body: Record<string, unknown> = {
      model: this.options.model,
      messages: toOpenAiMessages(request.messages, request.system),
      stream: true,
    };
    if (request.tools.length > 0) body['tools'] = toOpenAiTools(request.tools);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
    };
    const key = await this.options.apiKey();
    if (key !== undefined && key !== '') headers['authorization'] = `Bearer ${key}`;

    // One controller for both the caller's cancellation and our idle timeout.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(request.signal.reason);
    if (request.signal.aborted) onAbort();
    request.signal.addEventListener('abort', onAbort, { once: true });
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    const armIdle = (): void => {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.options.idleTimeoutMs);
    };

    try {
      armIdle();
      const doFetch = this.options.fetch ?? globalThis.fetch;
      const response = await doFetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: controller.signal,
      }).catch((err: unknown) => {
        if (controller.signal.aborted) throw err;
        throw new ModelError(`could not reach the model endpoint ${url}: ${networkReason(err)}`);
      });
      if (!response.ok) {
        const body = await response.text().catch(() => '');
        throw new ModelError(endpointErrorMessage(response.status, response.statusText, body), {
          status: response.status,
          detail: body.slice(0, 2000),
        });
      }
      const accumulator = new CompletionAccumulator();
      const isStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
      if (!isStream || response.body === null) {
        // The server ignored `stream: true` and sent one JSON completion.
        const text = await response.text();
        const delta = accumulator.add(parseJson(text));
        if (delta !== '') request.onText(delta);
        return accumulator.response();
      }
      await readEventStream(response.body, armIdle, (data) => {
        if (data === '[DONE]') return true;
        const chunk = parseJson(data);
        const error = asObject(asObject(chunk)?.['error']);
        if (error !== undefined) {
          throw new ModelError(`the model endpoint reported an error: ${String(error['message'] ?? 'unknown')}`, {
            detail: data.slice(0, 2000),
          });
        }
        const delta = accumulator.add(chunk);
        if (delta !== '') request.onText(delta);
        return false;
      });
      return accumulator.response();
    } catch (err) {
      if (timedOut) throw new ModelError(`no data from the model for ${this.options.idleTimeoutMs} ms`);
      throw err;
    } finally {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      request.signal.removeEventListener('abort', onAbort);
    }
  }
}

/** Reads an SSE body, calling `onData` per event until it returns true or the stream ends. */
async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onActivity: () => void,
  onData: (data: string) => boolean,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      onActivity();
      const events = done ? parser.push(decoder.decode()).concat(parser.finish()) : parser.push(decoder.decode(value, { stream: true }));
      for (const event of events) {
        if (onData(event.data)) return;
      }
      if (done) return;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelError(`model endpoint sent invalid JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * The provider's own words for a failed request, not its JSON: OpenAI and most compatible servers
 * send `{error: {message}}`, Ollama `{error: "..."}`, FastAPI-based servers (vLLM) `{detail}`.
 */
export function endpointErrorMessage(status: number, statusText: string, body: string): string {
  const head = `the model endpoint answered ${status}${statusText !== '' ? ` ${statusText}` : ''}`;
  const said = providerMessage(body);
  return said !== undefined ? `${head}: ${said}` : head;
}

function providerMessage(body: string): string | undefined {
  const trimmed = body.trim();
  if (trimmed === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    // Plain text (or an HTML error page): its first line, without markup.
    const line = trimmed.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
    return line === '' ? undefined : line.slice(0, 300);
  }
  const object = asObject(parsed);
  const error = object?.['error'];
  const candidates = [
    asObject(error)?.['message'],
    error,
    object?.['detail'],
    asObject(Array.isArray(object?.['detail']) ? (object['detail'] as unknown[])[0] : undefined)?.['msg'],
    object?.['message'],
  ];
  const text = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '');
  return text?.trim().slice(0, 500);
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.message !== undefined) return cause.message;
  if (cause?.code !== undefined) return cause.code;
  return err instanceof Error ? err.message : String(err);
}

/** The model ids an OpenAI-compatible endpoint lists at `GET /models` (empty when it lists none). */
export async function listEndpointModels(
  baseUrl: string,
  apiKey: string | undefined,
  options: { fetch?: typeof globalThis.fetch; timeoutMs?: number } = {},
): Promise<string[]> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (apiKey !== undefined && apiKey !== '') headers['authorization'] = `Bearer ${apiKey}`;
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  const response = await doFetch(url, { headers, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) }).catch(
    (err: unknown) => {
      throw new ModelError(`could not reach the model endpoint ${url}: ${networkReason(err)}`);
    },
  );
  const body = await response.text();
  if (!response.ok) throw new ModelError(endpointErrorMessage(response.status, response.statusText, body));
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const data = asObject(parsed)?.['data'] ?? asObject(parsed)?.['models'];
  if (!Array.isArray(data)) return [];
  const ids = data
    .map((m) => asObject(m)?.['id'] ?? asObject(m)?.['name'] ?? asObject(m)?.['model'])
    .filter((id): id is string => typeof id === 'string' && id !== '');
  return [...new Set(ids)].sort((a, b) => a.localeCompare(b));
}
