/**
 * Conversions between the sidecar's durable messages and what the chat loop, the models and the
 * panel need. Pure functions: no vscode, no I/O.
 */
import type {
  Change,
  ContentBlock,
  DshEvent,
  Message,
  TextBlock,
  ToolCallBlock,
} from '../protocol';
import type { ToolCall } from '../toolTypes';
import type { ChatItem } from '../shared/chatMessages';

export const SURFACE_MESSAGE_EVENTS = new Set(['user/message', 'assistant/message', 'tool/result']);

/**
 * The model-visible history of a session: the messages its surface events carry, in order.
 * `user/message` data is the message itself; the other two wrap it as `{turn, step, message}`.
 */
export function surfaceToMessages(events: readonly DshEvent[]): Message[] {
  const out: Message[] = [];
  for (const event of events) {
    if (!SURFACE_MESSAGE_EVENTS.has(event.type)) continue;
    const raw = event.type === 'user/message' ? event.data : event.data['message'];
    if (isMessage(raw)) out.push(raw);
  }
  return out;
}

export function isMessage(value: unknown): value is Message {
  if (value === null || typeof value !== 'object') return false;
  const m = value as Partial<Message>;
  return (
    typeof m.id === 'string' &&
    (m.role === 'user' || m.role === 'assistant') &&
    Array.isArray(m.content) &&
    m.source !== null &&
    typeof m.source === 'object' &&
    typeof m.source.kind === 'string'
  );
}

export function messageText(message: Message): string {
  return message.content
    .filter((b): b is TextBlock => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('\n');
}

export function toolCallsOf(message: Message): ToolCallBlock[] {
  return message.content.filter((b): b is ToolCallBlock => b.type === 'tool-call');
}

export function isToolResult(message: Message): boolean {
  return message.source.kind === 'tool' && typeof message.source['callId'] === 'string';
}

/** A direct prompt of the person at the keyboard (as opposed to sourced context). */
export function isUserPrompt(message: Message): boolean {
  return message.role === 'user' && message.source.kind === 'user';
}

/** The time-context note (docs/sources.md, time-context): when the prompt was sent, and where. */
export function isTimeNote(message: Message): boolean {
  return message.role === 'user' && message.source.kind === 'plugin' && message.source['plugin'] === 'time-context';
}

/**
 * The conversation in the order the model reads it. The sidecar records a step's time note at the
 * end of its batch, after the prompt; small models answer the last message they read, so a note
 * last in the request got the answer instead of the prompt. Each note that follows a prompt,
 * with only sourced context between them (the prompt's own batch), goes right before that
 * prompt. Notes of later steps (after tool results) stay where they are, and the session's log is
 * not reordered: this is the request's order only.
 */
export function timeNotesBeforePrompts(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const message of messages) {
    if (isTimeNote(message)) {
      let at = out.length;
      while (at > 0 && isSourcedContext(out[at - 1]!)) at -= 1;
      if (at > 0 && isUserPrompt(out[at - 1]!)) {
        out.splice(at - 1, 0, message);
        continue;
      }
    }
    out.push(message);
  }
  return out;
}

/** A user-role message that neither the person typed nor a tool answered (instructions, notes). */
function isSourcedContext(message: Message): boolean {
  return message.role === 'user' && !isUserPrompt(message) && !isToolResult(message);
}

/**
 * Make a history safe to send: every tool call must be answered by a tool result before the
 * next non-tool message, and every tool result must answer a call (chat APIs reject both
 * kinds of orphan). Orphans happen after a crash mid-step, or when compaction shadowed one half
 * of a pair. Unanswered calls are dropped from their message (a message left with nothing is
 * dropped); unmatched results are dropped.
 */
export function normalizeForModel(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (isToolResult(message)) continue; // kept only through their call, below
    const calls = toolCallsOf(message);
    if (message.role !== 'assistant' || calls.length === 0) {
      out.push(message);
      continue;
    }
    // Results answering this message's calls directly follow it (possibly mixed with
    // sourced context that the sidecar inserted at the step boundary).
    const results = new Map<string, Message>();
    let j = i + 1;
    for (; j < messages.length && isToolResult(messages[j]!); j++) {
      const result = messages[j]!;
      const callId = result.source['callId'] as string;
      if (!results.has(callId)) results.set(callId, result);
    }
    const answered = calls.filter((c) => results.has(c.id));
    const content: ContentBlock[] = message.content.filter(
      (b) => b.type !== 'tool-call' || results.has(b.id),
    );
    if (content.some((b) => b.type === 'tool-call' || (b.type === 'text' && b.text !== ''))) {
      out.push({ ...message, content });
    }
    for (const call of answered) out.push(results.get(call.id)!);
    i = j - 1;
  }
  return out;
}

export function newMessageId(): string {
  return globalThis.crypto.randomUUID();
}

export function assistantMessage(
  text: string,
  calls: readonly ToolCall[],
  source: { provider: string; model: string },
  extra: { stopped?: true } = {},
): Message {
  const content: ContentBlock[] = [];
  if (text !== '') content.push({ type: 'text', text });
  for (const call of calls) {
    content.push({ type: 'tool-call', id: call.id, name: call.name, arguments: call.arguments });
  }
  return {
    id: newMessageId(),
    role: 'assistant',
    content,
    source: { kind: 'model', provider: source.provider, model: source.model, ...extra },
  };
}

/** Tool results are user-role messages sourced from the tool call they answer. */
export function toolResultMessage(callId: string, text: string): Message {
  return {
    id: newMessageId(),
    role: 'user',
    content: [{ type: 'text', text }],
    source: { kind: 'tool', callId },
  };
}

// --- what the panel shows ---------------------------------------------------------------------

/**
 * Turn messages into the items the chat panel renders; one message may give several.
 * `callTitles` remembers each tool call's heading so its result, which may arrive in a later
 * call, can say what it answers; pass the same map for one conversation.
 */
export function toChatItems(
  messages: readonly Message[],
  callTitles: Map<string, string> = new Map(),
): ChatItem[] {
  const items: ChatItem[] = [];
  for (const message of messages) {
    if (isToolResult(message)) {
      const text = messageText(message);
      const call = callTitles.get(String(message.source['callId']));
      const isError = text.startsWith('Error: ');
      items.push({
        id: message.id,
        kind: 'tool-result',
        title: call !== undefined ? `Result of ${call}` : 'Tool result',
        text,
        isError,
        callId: String(message.source['callId']),
        status: text.startsWith('Not applied yet: workspace instructions')
          ? 'held'
          : !isError
            ? 'done'
            : text.startsWith('Error: the user rejected')
              ? 'rejected'
              : 'failed',
      });
    } else if (message.role === 'assistant') {
      const text = messageText(message);
      if (text !== '') {
        const item: ChatItem = { id: message.id, kind: 'assistant', title: '', text };
        if (message.source['stopped'] === true) item.stopped = true;
        items.push(item);
      }
      for (const call of toolCallsOf(message)) {
        const title = describeToolCall(call.name, call.arguments);
        callTitles.set(call.id, title);
        const file = call.arguments['file_path'];
        items.push({
          id: `${message.id}:${call.id}`,
          kind: 'tool-call',
          title,
          text: JSON.stringify(call.arguments, null, 2),
          callId: call.id,
          tool: call.name,
          ...(typeof file === 'string' ? { file } : {}),
        });
      }
    } else if (isUserPrompt(message)) {
      items.push({ id: message.id, kind: 'user', title: '', text: messageText(message) });
    } else {
      items.push({
        id: message.id,
        kind: 'context',
        title: describeContext(message),
        text: messageText(message),
      });
    }
  }
  return items;
}

export function describeToolCall(name: string, args: Record<string, unknown>): string {
  const file = args['file_path'];
  return typeof file === 'string' ? `${name} ${file}` : name;
}

/** A heading for sourced context, from its `source` (never by parsing prose). */
export function describeContext(message: Message): string {
  const source = message.source;
  switch (source.kind) {
    case 'agent-instructions': {
      const changes = Array.isArray(source['changes']) ? (source['changes'] as Change[]) : [];
      if (source['baseline'] === true) return baselineTitle(changes);
      const what = changes.map((c) => `${c.action} ${c.path}`).join(', ');
      return what === '' ? 'Workspace instructions' : `Workspace instructions: ${what}`;
    }
    case 'session-reference':
      return 'Referenced sessions';
    case 'plugin': {
      const plugin = String(source['plugin'] ?? 'plugin');
      if (plugin === 'compact') return 'Summary of earlier conversation';
      if (plugin === 'time-context') return 'Time';
      if (plugin === 'tmux-context') return 'tmux';
      return plugin;
    }
    default:
      return source.kind;
  }
}

/** How many of a baseline's files its title names; the rest are counted. */
const BASELINE_NAMED = 2;

/**
 * A baseline's heading: the files it gives, grouped ("Baseline: AGENTS.md, pkg/AGENTS.md (+3)").
 * A baseline is complete by definition, so its removals (of files an earlier one gave) are
 * bookkeeping, not news: they are left out of the title (the text holds the whole message).
 */
export function baselineTitle(changes: readonly Change[]): string {
  const files = changes.filter((c) => c.action !== 'remove').map((c) => c.path);
  if (files.length === 0) return 'Baseline: no instruction files';
  const named = files.slice(0, BASELINE_NAMED).join(', ');
  const more = files.length - BASELINE_NAMED;
  return more > 0 ? `Baseline: ${named} (+${more})` : `Baseline: ${named}`;
}
