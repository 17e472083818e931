/**
 * Server-sent events (the WHATWG event-stream format), parsed incrementally: the network hands
 * over arbitrary chunks, so a line, and even a CRLF pair, may be split between two of them.
 */

export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;
  private sawData = false;

  /** Feed one decoded chunk; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== '\n' && ch !== '\r') continue;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (ch === '\r' && i === this.buffer.length - 1) break;
      this.line(this.buffer.slice(start, i), events);
      if (ch === '\r' && this.buffer[i + 1] === '\n') i++;
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /** End of stream: a final line without a newline still counts; an undispatched event does not. */
  finish(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer !== '') {
      const rest = this.buffer.endsWith('\r') ? this.buffer.slice(0, -1) : this.buffer;
      this.buffer = '';
      this.line(rest, events);
    }
    // The spec drops an event that was not terminated by a blank line, but several
    // OpenAI-compatible servers end the stream right after the last `data:` line.
    this.dispatch(events);
    return events;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      this.dispatch(out);
      return;
    }
    if (line.startsWith(':')) return; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.sawData = true;
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break; // `retry` and unknown fields do not matter to a one-shot request
    }
  }

  private dispatch(out: SseEvent[]): void {
    if (this.sawData) {
      const event: SseEvent = { event: this.eventType || 'message', data: this.data.join('\n') };
      if (this.lastId !== undefined) event.id = this.lastId;
      out.push(event);
    }
    this.data = [];
    this.eventType = '';
    this.sawData = false;
  }
}
