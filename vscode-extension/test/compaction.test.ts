import { describe, expect, it } from 'vitest';
import { COMPACT_REQUEST, summarizeHistory } from '../src/chat/compaction';
import type { ChatModel, ModelRequest } from '../src/model/types';
import type { Message } from '../src/protocol';

const history: Message[] = [{ id: 'p', role: 'user', content: [{ type: 'text', text: 'fix it' }], source: { kind: 'user' } }];

function model(text: string, seen: ModelRequest[]): ChatModel {
  return {
    provider: 'test',
    model: 'm',
    async complete(request) {
      seen.push(request);
      return { text, toolCalls: [] };
    },
  };
}

describe('summarizeHistory', () => {
  it('asks for a summary after the history, offering no tools', async () => {
    const seen: ModelRequest[] = [];
    expect(await summarizeHistory(model('  The goal was X.  ', seen), history, 'sys', new AbortController().signal)).toBe('The goal was X.');
    expect(seen[0]!.tools).toEqual([]);
    expect(seen[0]!.system).toBe('sys');
    expect(seen[0]!.messages.map((m) => m.id)).toEqual(['p', 'compact-request']);
    expect(seen[0]!.messages[1]!.content).toEqual([{ type: 'text', text: COMPACT_REQUEST }]);
  });

  it('refuses an empty summary, so nothing is compacted', async () => {
    await expect(summarizeHistory(model(' \n ', []), history, 'sys', new AbortController().signal)).rejects.toThrow(
      'The model returned an empty summary; nothing was compacted.',
    );
  });
});
