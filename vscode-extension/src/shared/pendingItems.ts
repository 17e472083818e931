/**
 * The pending context (dsh/context/pending) as the chat panel and the inspector list it: each
 * message droppable as a whole and, for workspace instructions, change by change
 * (dsh/context/discard). Built on the host by `pendingViews` (chat/pendingView.ts).
 */

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
