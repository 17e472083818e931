/** The summary that replaces a session's visible history (dsh/session/compact), written by the model. */
import type { ChatModel } from '../model/types';
import type { Message } from '../protocol';

export const COMPACT_REQUEST =
  'Summarize the conversation so far for your own later use: the goal, decisions made, files touched and their state, and open work. Write only the summary.';

/** Ask the model (without tools) to summarize `history`; refuses an empty summary. */
export async function summarizeHistory(
  model: ChatModel,
  history: readonly Message[],
  system: string,
  signal: AbortSignal,
): Promise<string> {
  const answer = await model.complete({
    messages: [
      ...history,
      { id: 'compact-request', role: 'user', content: [{ type: 'text', text: COMPACT_REQUEST }], source: { kind: 'user' } },
    ],
    system,
    tools: [],
    signal,
    onText: () => undefined,
  });
  const summary = answer.text.trim();
  if (summary === '') throw new Error('The model returned an empty summary; nothing was compacted.');
  return summary;
}
