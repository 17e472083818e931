/**
 * The pending context (dsh/context/pending) as the panel and the inspector list it
 * (shapes in shared/pendingItems.ts). Pure: no vscode.
 */
import type { Change, Message } from '../protocol';
import type { PendingItemView } from '../shared/pendingItems';
import { describeContext } from './convert';

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
