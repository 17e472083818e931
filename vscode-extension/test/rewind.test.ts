import { describe, expect, it } from 'vitest';
import { discardSummary, expandDiscards, lastTurnOf, modelHistory, NOTHING_WRITTEN_NOTE, transcriptItems, writtenFiles, writtenNote } from '../src/chat/rewind';
import type { DshEvent, Message } from '../src/protocol';

const event = (seq: number, type: string, data: Record<string, unknown>): DshEvent => ({ type, seq, time: 0, data });
const user = (text: string, kind = 'user'): Message => ({ id: `u${text}`, role: 'user', content: [{ type: 'text', text }], source: { kind } });
const answer = (text: string): Record<string, unknown> => ({
  turn: 1,
  step: 1,
  message: { id: `a${text}`, role: 'assistant', content: [{ type: 'text', text }], source: { kind: 'assistant' } },
});

describe('lastTurnOf', () => {
  it('spans the last prompt to the end of the surface, skipping context after it', () => {
    const events = [
      event(1, 'user/message', user('first') as unknown as Record<string, unknown>),
      event(2, 'assistant/message', answer('one')),
      event(3, 'user/message', user('second') as unknown as Record<string, unknown>),
      event(4, 'user/message', user('<system-reminder>rules', 'agent-instructions') as unknown as Record<string, unknown>),
      event(5, 'assistant/message', answer('two')),
    ];
    expect(lastTurnOf(events)).toEqual({ start: 2, end: 4, prompt: 'second' });
  });

  it('is undefined without a prompt', () => {
    expect(lastTurnOf([event(1, 'assistant/message', answer('x'))])).toBeUndefined();
    expect(lastTurnOf([])).toBeUndefined();
  });
});

// --- the discarded attempt: what the model reads and what the transcript keeps ------------------

const asData = (m: Message): Record<string, unknown> => m as unknown as Record<string, unknown>;
const call = (id: string, name: string, file: string): Record<string, unknown> => ({
  turn: 1,
  step: 1,
  message: { id: `a-${id}`, role: 'assistant', content: [{ type: 'tool-call', id, name, arguments: { file_path: file } }], source: { kind: 'model' } },
});
const result = (id: string, text: string): Record<string, unknown> => ({
  turn: 1,
  step: 1,
  message: { id: `r-${id}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'tool', callId: id } },
});
const checkpoint = (seq: number, text: string, sources: number[], id = 'discard-x'): DshEvent => ({
  ...event(seq, 'user/message', asData({ id: `c${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'plugin', plugin: 'compact', compactionId: id } })),
  sourceEventSeqs: sources,
});

describe('a discarded attempt', () => {
  // An attempt that edited src/app.py (accepted), was refused a write of new.txt, and was held once.
  const attempt = [
    event(3, 'user/message', asData(user('change it'))),
    event(4, 'assistant/message', call('c1', 'edit', 'src/app.py')),
    event(5, 'tool/result', result('c1', 'Edited src/app.py')),
    event(6, 'assistant/message', call('c2', 'write', 'new.txt')),
    event(7, 'tool/result', result('c2', 'Error: the user rejected the write of new.txt; the file was not changed.')),
    event(8, 'assistant/message', call('c3', 'write', 'lib/n.txt')),
    event(9, 'tool/result', result('c3', 'Not applied yet: workspace instructions for lib apply')),
    event(10, 'assistant/message', answer('done')),
  ];

  it('names only the files it changed on disk', () => {
    expect(writtenFiles(attempt)).toEqual(['src/app.py']);
    expect(discardSummary(attempt)).toBe(writtenNote(['src/app.py']));
    expect(discardSummary(attempt.filter((e) => e.seq !== 5))).toBe(NOTHING_WRITTEN_NOTE);
  });

  it('takes the checkpoint right before the retried prompt into the range, so notes never stack', () => {
    const surface = [
      event(1, 'user/message', asData(user('first'))),
      event(2, 'assistant/message', answer('one')),
      checkpoint(11, writtenNote(['src/app.py']), [3, 4, 5, 6, 7, 8, 9, 10]),
      event(12, 'user/message', asData(user('change it'))),
      event(13, 'assistant/message', answer('again')),
    ];
    expect(lastTurnOf(surface)).toEqual({ start: 2, end: 4, prompt: 'change it' });
    // The new checkpoint names the earlier attempt's file though this attempt wrote nothing.
    const bySeq = new Map([...attempt, ...surface].map((e) => [e.seq, e]));
    expect(discardSummary(expandDiscards(surface.slice(2), bySeq))).toBe(writtenNote(['src/app.py']));
  });

  it('is not in the model request when it wrote nothing; one note when it did', () => {
    const silent = [event(1, 'user/message', asData(user('first'))), checkpoint(11, NOTHING_WRITTEN_NOTE, [3]), event(12, 'user/message', asData(user('again')))];
    expect(modelHistory(silent).map((m) => m.content)).toEqual([[{ type: 'text', text: 'first' }], [{ type: 'text', text: 'again' }]]);
    const written = [checkpoint(11, writtenNote(['a.py']), [3]), event(12, 'user/message', asData(user('again')))];
    expect(modelHistory(written).map((m) => (m.content[0] as { text: string }).text)).toEqual([writtenNote(['a.py']), 'again']);
    // A real compaction is never dropped, whatever its text.
    const real = [checkpoint(11, NOTHING_WRITTEN_NOTE, [3], 'compact-1')];
    expect(modelHistory(real)).toHaveLength(1);
  });

  it('shows the decided write/edit cards of every discarded attempt, marked, and no summary box', () => {
    const first = checkpoint(11, writtenNote(['src/app.py']), [3, 4, 5, 6, 7, 8, 9, 10]);
    const second = checkpoint(14, writtenNote(['src/app.py']), [11, 12, 13]);
    const log = [...attempt, first, event(12, 'user/message', asData(user('change it'))), event(13, 'assistant/message', answer('again')), second];
    const bySeq = new Map(log.map((e) => [e.seq, e]));
    const surface = [event(1, 'user/message', asData(user('first'))), second, event(15, 'user/message', asData(user('change it')))];
    const items = transcriptItems(surface, bySeq, new Map());
    expect(items.map((i) => [i.kind, i.title, i.status ?? null, i.discarded ?? false])).toEqual([
      ['user', '', null, false],
      ['tool-call', 'edit src/app.py', null, true],
      ['tool-result', 'Result of edit src/app.py', 'done', true],
      ['tool-call', 'write new.txt', null, true],
      ['tool-result', 'Result of write new.txt', 'rejected', true],
      ['user', '', null, false],
    ]);
    expect(items.some((i) => i.kind === 'context')).toBe(false);
  });
});
