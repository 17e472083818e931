import { describe, expect, it } from 'vitest';
import { SseParser } from '../src/model/sse';

function parseInChunks(text: string, sizes: number[]): { data: string; event: string }[] {
  const parser = new SseParser();
  const out = [];
  let pos = 0;
  let i = 0;
  while (pos < text.length) {
    const size = sizes[i++ % sizes.length]!;
    out.push(...parser.push(text.slice(pos, pos + size)));
    pos += size;
  }
  out.push(...parser.finish());
  return out.map((e) => ({ data: e.data, event: e.event }));
}

const STREAM =
  ': keep-alive\r\n' +
  'data: {"a":1}\r\n\r\n' +
  'event: custom\n' +
  'data: line one\n' +
  'data:line two\n\n' +
  'data: [DONE]\n\n';

const EXPECTED = [
  { data: '{"a":1}', event: 'message' },
  { data: 'line one\nline two', event: 'custom' },
  { data: '[DONE]', event: 'message' },
];

describe('SseParser', () => {
  it('parses a whole stream', () => {
    expect(parseInChunks(STREAM, [STREAM.length])).toEqual(EXPECTED);
  });

  it('gives the same events however the network splits the bytes', () => {
    for (let size = 1; size <= 7; size++) {
      expect(parseInChunks(STREAM, [size])).toEqual(EXPECTED);
    }
    // Every single split point, including between the CR and LF of a CRLF.
    for (let cut = 1; cut < STREAM.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(STREAM.slice(0, cut)), ...parser.push(STREAM.slice(cut)), ...parser.finish()];
      expect(events.map((e) => ({ data: e.data, event: e.event }))).toEqual(EXPECTED);
    }
  });

  it('accepts bare CR line ends', () => {
    expect(parseInChunks('data: a\r\rdata: b\r\r', [3])).toEqual([
      { data: 'a', event: 'message' },
      { data: 'b', event: 'message' },
    ]);
  });

  it('delivers a last event that the server did not terminate with a blank line', () => {
    expect(parseInChunks('data: {"x":2}', [4])).toEqual([{ data: '{"x":2}', event: 'message' }]);
  });

  it('ignores comments, unknown fields and blocks without data; keeps an empty data line', () => {
    expect(parseInChunks(':c\nretry: 10\nfoo: bar\n\nid: 7\ndata\n\n', [5])).toEqual([{ data: '', event: 'message' }]);
  });

  it('remembers the last event id', () => {
    const parser = new SseParser();
    const [first] = parser.push('id: 42\ndata: x\n\n');
    expect(first?.id).toBe('42');
  });
});
