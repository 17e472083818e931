/**
 * The pending context (dsh/context/pending) as the panel and the inspector list it, each message
 * droppable as a whole and, for workspace instructions, change by change (dsh/context/discard).
 * Pure: no vscode.
 */
import type { Change, Message } from '../protocol';
import { describeContext } from './convert';

export interface PendingChangeView {
  /** The scope key sent as `scopes: [scope]` to drop just this change. */
  scope: string;
  /** "set pkg/AGENTS.md". */
  label: string;
}

export interface PendingItemView {
  messageId: string;
  title: string;
  text: string;
  bytes: number;
  /** Changes that can be dropped one by one (only when there are several). */
  changes: PendingChangeView[];
}

const encoder = new TextEncoder();

export function pendingViews(messages: readonly Message[]): PendingItemView[] {
  return messages.map((message) => {
    // Separately framed blocks (a baseline and an update) stay apart.
    const text = message.content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('\n\n');
    const changes = message.source.kind === 'agent-instructions' && Array.isArray(message.source['changes'])
      ? (message.source['changes'] as Change[])
      : [];
    return {
      messageId: message.id,
      title: describeContext(message),
      text,
      bytes: encoder.encode(text).length,
      changes: changes.length > 1 ? changes.map((c) => ({ scope: c.scope, label: `${c.action} ${c.path}` })) : [],
    };
  });
}
