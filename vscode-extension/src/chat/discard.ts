/**
 * Dropping pending context before the next step claims it (`dsh/context/discard`): a whole
 * pending message, or some changes of a workspace-instructions message. Shared by the chat panel
 * and the inspector. A dropped change stays dropped for the session until its file changes.
 */
import type { Sidecar } from '../client';
import { CONTEXT_DISCARD, CONTEXT_PENDING } from '../methods';
import type { Message } from '../protocol';

export interface DiscardOutcome {
  /** The pending messages after the drop. */
  messages: Message[];
  /** Said to the user when the drop did not happen as asked. */
  note?: string;
}

/** The `data.code` of a JSON-RPC error (the sidecar's stable error codes), if any. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { data?: { code?: unknown } } | undefined)?.data?.code;
  return typeof code === 'string' ? code : undefined;
}

export async function discardPending(
  sidecar: Sidecar,
  sessionId: string,
  messageId: string,
  scopes?: string[],
): Promise<DiscardOutcome> {
  try {
    const params = scopes !== undefined && scopes.length > 0 ? { sessionId, messageId, scopes } : { sessionId, messageId };
    return { messages: (await sidecar.request(CONTEXT_DISCARD, params)).messages };
  } catch (err) {
    switch (errorCode(err)) {
      case 'unknown-message':
        // Claimed by a step, or replaced by a newer batch, in the meantime: show what is pending now.
        return {
          messages: (await sidecar.request(CONTEXT_PENDING, { sessionId })).messages,
          note: 'That context was already sent or replaced; nothing was dropped.',
        };
      case 'store-busy':
        throw new Error('The session store is busy (another sidecar is writing); nothing was dropped. Try again.');
      default:
        throw err;
    }
  }
}
