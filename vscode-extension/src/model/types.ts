/** What the agent loop needs from a chat model, whichever API serves it. */
import type { Message } from '../protocol';
import type { ToolCall, ToolDefinition } from '../tools';

export interface ModelRequest {
  /** The conversation in model order, as dsh messages (the providers convert). */
  messages: Message[];
  /** A system prompt sent ahead of the messages (never stored in the session log). */
  system?: string;
  tools: readonly ToolDefinition[];
  signal: AbortSignal;
  /** Called with each piece of answer text as it streams in. */
  onText(delta: string): void;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  finishReason?: string;
}

export interface ChatModel {
  /** Recorded in the assistant message's source: `{kind: "model", provider, model}`. */
  readonly provider: string;
  readonly model: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/**
 * A model request that failed in a way the user can act on. `message` is the provider's own words
 * (shown in the panel); `detail` is the raw answer, for the output channel only.
 */
export class ModelError extends Error {
  readonly status: number | undefined;
  readonly detail: string | undefined;

  constructor(message: string, extra: { status?: number; detail?: string } = {}) {
    super(message);
    this.status = extra.status;
    this.detail = extra.detail;
  }
}
