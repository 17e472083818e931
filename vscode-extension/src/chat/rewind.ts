/**
 * Retry the last answer, or edit the last prompt and send it again, without the old attempt
 * staying in the model's view (pure: no vscode, no I/O).
 *
 * The last turn (its prompt and everything after it on the surface) is taken out with the
 * sidecar's own discard of surface ranges, `dsh/session/compact`: the range is replaced by one
 * checkpoint message, the raw log keeps everything, and the instruction state is recomputed from
 * what stays visible (so instructions that came in the discarded turn are delivered again). The
 * prompt then goes out as a new turn: it is in the model's view once, never twice.
 *
 * The checkpoint is told apart from a real compaction by its `compactionId` (`discard-…`, minted
 * here). Its text is what the model needs to know about the discarded attempt, and that is only
 * what it left on disk: when it wrote files, one factual line naming them; when it wrote none,
 * a line that stays in the log but is never sent (`modelHistory`). A checkpoint right before the
 * retried prompt is taken into the new range, so notes never stack: the new one names the files
 * of both attempts.
 */
import type { DshEvent, Message } from '../protocol';
import type { ChatItem } from '../shared/chatMessages';
import { isMessage, isToolResult, isUserPrompt, messageText, SURFACE_MESSAGE_EVENTS, surfaceToMessages, toChatItems, toolCallsOf } from './convert';

export const DISCARD_ID_PREFIX = 'discard-';

/** The checkpoint of an attempt that changed no file: logged, never sent, never shown. */
export const NOTHING_WRITTEN_NOTE = 'The user discarded an attempt at the next request; it changed no files.';

/** What the model reads when a discarded attempt changed files: what is on disk now. */
export function writtenNote(files: readonly string[]): string {
  return `Files changed on disk before this point, by an attempt the user discarded (the changes are still there): ${files.join(', ')}.`;
}

export interface LastTurn {
  /** Surface positions of the range to discard: the last prompt (or the discard checkpoints
   * right before it) to the last event. */
  start: number;
  end: number;
  prompt: string;
}

export function isDiscardCheckpoint(message: Message): boolean {
  const source = message.source;
  return (
    message.role === 'user' &&
    source.kind === 'plugin' &&
    source['plugin'] === 'compact' &&
    typeof source['compactionId'] === 'string' &&
    source['compactionId'].startsWith(DISCARD_ID_PREFIX)
  );
}

function messageOf(event: DshEvent): Message | undefined {
  if (!SURFACE_MESSAGE_EVENTS.has(event.type)) return undefined;
  const raw = event.type === 'user/message' ? event.data : event.data['message'];
  return isMessage(raw) ? raw : undefined;
}

function isDiscardEvent(event: DshEvent): boolean {
  const message = messageOf(event);
  return message !== undefined && isDiscardCheckpoint(message);
}

export function lastTurnOf(events: readonly DshEvent[]): LastTurn | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const message = messageOf(events[i]!);
    if (events[i]!.type !== 'user/message' || message === undefined || !isUserPrompt(message)) continue;
    // An earlier Retry/Edit left its checkpoint right before this prompt: the new one replaces it.
    let start = i;
    while (start > 0 && isDiscardEvent(events[start - 1]!)) start -= 1;
    return { start, end: events.length - 1, prompt: messageText(message) };
  }
  return undefined;
}

/**
 * The raw events a discard checkpoint stands for, in log order, with the earlier checkpoints it
 * took in replaced by what they stood for (`sourceEventSeqs` names the replaced surface nodes).
 * `bySeq` is the session's log.
 */
export function discardedEvents(checkpoint: DshEvent, bySeq: ReadonlyMap<number, DshEvent>): DshEvent[] {
  const out: DshEvent[] = [];
  for (const seq of checkpoint.sourceEventSeqs ?? []) {
    const event = bySeq.get(seq);
    if (event === undefined) continue;
    if (isDiscardEvent(event)) out.push(...discardedEvents(event, bySeq));
    else out.push(event);
  }
  return out;
}

/** `events` with each discard checkpoint among them replaced by the events it stands for. */
export function expandDiscards(events: readonly DshEvent[], bySeq: ReadonlyMap<number, DshEvent>): DshEvent[] {
  return events.flatMap((e) => (isDiscardEvent(e) ? discardedEvents(e, bySeq) : [e]));
}

const CHANGING_TOOLS = new Set(['write', 'edit']);

/** The `write`/`edit` calls among `events`, each with its result (undefined when unanswered). */
function changeCalls(events: readonly DshEvent[]): { file: string; result: Message | undefined }[] {
  const messages = events.map(messageOf).filter((m): m is Message => m !== undefined);
  const results = new Map<string, Message>();
  for (const m of messages) if (isToolResult(m)) results.set(String(m.source['callId']), m);
  const calls: { file: string; result: Message | undefined }[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const call of toolCallsOf(m)) {
      const file = call.arguments['file_path'];
      if (CHANGING_TOOLS.has(call.name) && typeof file === 'string') calls.push({ file, result: results.get(call.id) });
    }
  }
  return calls;
}

/**
 * The files the discarded events changed on disk: `write`/`edit` calls whose result says they
 * were applied (not an error, not held back for instructions), each file once, in order.
 */
export function writtenFiles(events: readonly DshEvent[]): string[] {
  const files: string[] = [];
  for (const { file, result } of changeCalls(events)) {
    if (result === undefined) continue;
    const text = messageText(result);
    if (text.startsWith('Error: ') || text.startsWith('Not applied yet: ')) continue;
    if (!files.includes(file)) files.push(file);
  }
  return files;
}

/** The checkpoint text for a discarded range: the note about the files, or the silent one. */
export function discardSummary(events: readonly DshEvent[]): string {
  const files = writtenFiles(events);
  return files.length === 0 ? NOTHING_WRITTEN_NOTE : writtenNote(files);
}

/**
 * The surface as the model gets it: a discard checkpoint whose attempt wrote nothing is left out
 * (the model never learns about an attempt that left no trace); everything else is kept.
 */
export function modelHistory(events: readonly DshEvent[]): Message[] {
  return surfaceToMessages(events).filter((m) => !(isDiscardCheckpoint(m) && messageText(m) === NOTHING_WRITTEN_NOTE));
}

/**
 * The transcript of a surface: each discard checkpoint is shown as the cards of the writes and
 * edits its attempt decided (accepted or rejected), marked as discarded, so the record of what
 * was written stays; nothing else of a discarded attempt is shown (no summary box).
 */
export function transcriptItems(events: readonly DshEvent[], bySeq: ReadonlyMap<number, DshEvent>, callTitles: Map<string, string>): ChatItem[] {
  const items: ChatItem[] = [];
  for (const event of events) {
    const message = messageOf(event);
    if (message === undefined) continue;
    if (!isDiscardCheckpoint(message)) {
      items.push(...toChatItems([message], callTitles));
      continue;
    }
    const shadowed = discardedEvents(event, bySeq);
    const decided = new Set<string>();
    for (const m of shadowed.map(messageOf)) {
      if (m !== undefined && isToolResult(m) && !messageText(m).startsWith('Not applied yet: ')) decided.add(String(m.source['callId']));
    }
    const kept: Message[] = [];
    for (const m of shadowed.map(messageOf)) {
      if (m === undefined) continue;
      if (m.role === 'assistant') {
        const calls = toolCallsOf(m).filter((c) => CHANGING_TOOLS.has(c.name) && decided.has(c.id));
        if (calls.length > 0) kept.push({ ...m, content: calls });
      } else if (isToolResult(m) && decided.has(String(m.source['callId']))) {
        kept.push(m);
      }
    }
    const wanted = new Set(kept.filter((m) => m.role === 'assistant').flatMap((m) => toolCallsOf(m).map((c) => c.id)));
    for (const item of toChatItems(
      kept.filter((m) => m.role === 'assistant' || wanted.has(String(m.source['callId']))),
      callTitles,
    )) {
      items.push({ ...item, discarded: true });
    }
  }
  return items;
}
