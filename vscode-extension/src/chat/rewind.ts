/**
 * Retry the last answer, or edit the last prompt and send it again, without the old attempt
 * staying in the model's view (pure: no vscode, no I/O).
 *
 * The last turn (its prompt and everything after it on the surface) is taken out with the
 * sidecar's own discard of surface ranges, `dsh/session/compact`: the range is replaced by one
 * short note, the raw log keeps everything, and the instruction state is recomputed from what
 * stays visible (so instructions that came in the discarded turn are delivered again). The
 * prompt then goes out as a new turn: it is in the model's view once, never twice.
 */
import type { DshEvent } from '../protocol';
import { isMessage, isUserPrompt, messageText } from './convert';

export const DISCARDED_NOTE = 'The user discarded the previous attempt at their next request; it follows again.';

export interface LastTurn {
  /** Surface positions of the last prompt and of the last event. */
  start: number;
  end: number;
  prompt: string;
}

export function lastTurnOf(events: readonly DshEvent[]): LastTurn | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type !== 'user/message' || !isMessage(event.data) || !isUserPrompt(event.data)) continue;
    return { start: i, end: events.length - 1, prompt: messageText(event.data) };
  }
  return undefined;
}
