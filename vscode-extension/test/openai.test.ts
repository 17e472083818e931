import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CompletionAccumulator,
  endpointErrorMessage,
  listEndpointModels,
  OpenAiChatModel,
  toOpenAiMessages,
} from '../src/model/openai';
import { ModelError } from '../src/model/types';
import type { Message } from '../src/protocol';
import { TOOL_DEFINITIONS } from '../src/tools';

const user = (text: string, extra: Partial<Message> = {}): Message => ({
  id: `u-${text}`,
  role: 'user',
  content: [{ type: 'text', text }],
  source: { kind: 'user' },
  ...extra,
});

describe('toOpenAiMessages', () => {
  it('maps prompts, context, tool calls and tool results, with the system prompt first', () => {
    const messages: Message[] = [
      user('hi'),
      {
        id: 'ctx',
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>\nbaseline\n</system-reminder>' },
          { type: 'text', text: '<system-reminder>\nupdate\n</system-reminder>' },
        ],
        source: { kind: 'agent-instructions', form: 'instructions', changes: [] },
      },
      {
        id: 'a1',
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'call_1', name: 'read', arguments: { file_path: 'x.txt' } }],
        source: { kind: 'model', provider: 'p', model: 'm' },
      },
      { id: 't1', role: 'user', content: [{ type: 'text', text: 'file text' }], source: { kind: 'tool', callId: 'call_1' } },
      { id: 'a2', role: 'assistant', content: [{ type: 'text', text: 'done' }], source: { kind: 'model' } },
    ];
    expect(toOpenAiMessages(messages, 'be brief')).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>\nbaseline\n</system-reminder>' },
          { type: 'text', text: '<system-reminder>\nupdate\n</system-reminder>' },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"file_path":"x.txt"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'file text' },
      { role: 'assistant', content: 'done' },
    ]);
  });
});

describe('CompletionAccumulator', () => {
  it('assembles text and fragmented tool calls by index', () => {
    const acc = new CompletionAccumulator();
    const deltas = [
      { choices: [{ delta: { role: 'assistant', content: 'Let me ' } }] },
      { choices: [{ delta: { content: 'look.' } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read', arguments: '' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"file_' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 1, id: 'call_b', function: { name: 'edit', arguments: '{}' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'path":"a.txt"}' } }] } }] },
      { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
      { choices: [] },
    ];
    const streamed = deltas.map((d) => acc.add(d)).join('');
    expect(streamed).toBe('Let me look.');
    expect(acc.response()).toEqual({
      text: 'Let me look.',
      finishReason: 'tool_calls',
      toolCalls: [
        { id: 'call_a', name: 'read', arguments: { file_path: 'a.txt' } },
        { id: 'call_b', name: 'edit', arguments: {} },
      ],
    });
  });

  it('reads a non-streamed completion and mints ids the server left out', () => {
    const acc = new CompletionAccumulator();
    acc.add({ choices: [{ message: { content: null, tool_calls: [{ function: { name: 'read', arguments: '{"file_path":"b"}' } }] } }] });
    const [call] = acc.toolCalls();
    expect(call?.id).toMatch(/^call_0_/);
    expect(call?.arguments).toEqual({ file_path: 'b' });
  });
});

// --- against a real HTTP server -------------------------------------------------------------------

interface Recorded {
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

let server: http.Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(handler: (req: Recorded, res: http.ServerResponse) => void): Promise<string> {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => handler({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> }, res));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v1/`;
}

function sse(res: http.ServerResponse, chunks: unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end('data: [DONE]\n\n');
}

const request = (onText: (t: string) => void = () => undefined) => ({
  messages: [user('hello')],
  system: 'sys',
  tools: TOOL_DEFINITIONS,
  signal: new AbortController().signal,
  onText,
});

describe('OpenAiChatModel', () => {
  it('streams text, sends model, tools and the key, and parses tool calls', async () => {
    const seen: Recorded[] = [];
    const baseUrl = await serve((req, res) => {
      seen.push(req);
      sse(res, [
        { choices: [{ delta: { content: 'Hel' } }] },
        { choices: [{ delta: { content: 'lo' } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read', arguments: '{"file_path":"x"}' } }] } }] },
      ]);
    });
    const model = new OpenAiChatModel({ baseUrl, model: 'm1', apiKey: async () => 'sk-test', idleTimeoutMs: 5000 });
    const pieces: string[] = [];
    const out = await model.complete(request((t) => pieces.push(t)));
    expect(pieces).toEqual(['Hel', 'lo']);
    expect(out.text).toBe('Hello');
    expect(out.toolCalls).toEqual([{ id: 'c1', name: 'read', arguments: { file_path: 'x' } }]);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['authorization']).toBe('Bearer sk-test');
    expect(seen[0]!.body['model']).toBe('m1');
    expect(seen[0]!.body['stream']).toBe(true);
    expect((seen[0]!.body['tools'] as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['read', 'write', 'edit']);
    expect(seen[0]!.body['messages']).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hello' },
    ]);
  });

  it('sends no Authorization header without a key', async () => {
    let auth: string | undefined = 'unset';
    const baseUrl = await serve((req, res) => {
      auth = req.headers['authorization'];
      sse(res, [{ choices: [{ delta: { content: 'ok' } }] }]);
    });
    const model = new OpenAiChatModel({ baseUrl, model: 'm', apiKey: async () => undefined, idleTimeoutMs: 5000 });
    await model.complete(request());
    expect(auth).toBeUndefined();
  });

  it('reports an HTTP error with its status and body, and never the key', async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"bad key"}}');
    });
    const model = new OpenAiChatModel({ baseUrl, model: 'm', apiKey: async () => 'sk-secret', idleTimeoutMs: 5000 });
    const err = await model.complete(request()).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ModelError);
    // The provider's words, not its JSON; the raw body is kept for the output channel.
    expect((err as ModelError).message).toBe('the model endpoint answered 401 Unauthorized: bad key');
    expect((err as ModelError).status).toBe(401);
    expect((err as ModelError).detail).toBe('{"error":{"message":"bad key"}}');
    expect(String(err)).not.toContain('sk-secret');
  });

  it('reports an error object inside the stream', async () => {
    const baseUrl = await serve((_req, res) => sse(res, [{ error: { message: 'overloaded' } }]));
    const model = new OpenAiChatModel({ baseUrl, model: 'm', apiKey: async () => undefined, idleTimeoutMs: 5000 });
    await expect(model.complete(request())).rejects.toThrow(/overloaded/);
  });

  it('gives up when the server goes silent', async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n'); // then nothing
    });
    const model = new OpenAiChatModel({ baseUrl, model: 'm', apiKey: async () => undefined, idleTimeoutMs: 300 });
    await expect(model.complete(request())).rejects.toThrow(/no data from the model for 300 ms/);
  });

  it('stops when the caller aborts', async () => {
    const baseUrl = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'x' } }] })}\n\n`);
    });
    const model = new OpenAiChatModel({ baseUrl, model: 'm', apiKey: async () => undefined, idleTimeoutMs: 5000 });
    const controller = new AbortController();
    const pending = model.complete({ ...request(() => controller.abort()), signal: controller.signal });
    await expect(pending).rejects.toThrow();
  });
});

describe('endpointErrorMessage', () => {
  it('quotes what each kind of server says, never its JSON', () => {
    expect(endpointErrorMessage(429, 'Too Many Requests', '{"error":{"message":"Rate limit reached","type":"requests"}}')).toBe(
      'the model endpoint answered 429 Too Many Requests: Rate limit reached',
    );
    expect(endpointErrorMessage(404, 'Not Found', '{"error":"model \'llama9\' not found"}')).toBe(
      "the model endpoint answered 404 Not Found: model 'llama9' not found",
    );
    expect(endpointErrorMessage(400, 'Bad Request', '{"detail":[{"loc":["body"],"msg":"field required"}]}')).toBe(
      'the model endpoint answered 400 Bad Request: field required',
    );
    expect(endpointErrorMessage(502, 'Bad Gateway', '<html><body><h1>502 Bad Gateway</h1></body></html>')).toBe(
      'the model endpoint answered 502 Bad Gateway: 502 Bad Gateway',
    );
    expect(endpointErrorMessage(500, '', '')).toBe('the model endpoint answered 500');
  });

  it('names the endpoint it could not reach', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer();
      probe.listen(0, '127.0.0.1', () => {
        const port = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const model = new OpenAiChatModel({ baseUrl: `http://127.0.0.1:${closed}/v1`, model: 'm', apiKey: async () => undefined, idleTimeoutMs: 5000 });
    await expect(model.complete(request())).rejects.toThrow(
      new RegExp(`^could not reach the model endpoint http://127\\.0\\.0\\.1:${closed}/v1/chat/completions: .*ECONNREFUSED`),
    );
  });
});

describe('listEndpointModels', () => {
  let listing: http.Server | undefined;
  afterEach(async () => {
    listing?.closeAllConnections();
    await new Promise<void>((resolve) => (listing ? listing.close(() => resolve()) : resolve()));
    listing = undefined;
  });
  async function listServer(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<string> {
    listing = http.createServer(handler);
    await new Promise<void>((resolve) => listing!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(listing!.address() as AddressInfo).port}/v1`;
  }

  it('lists the ids of GET /models, sorted, with the key', async () => {
    let seen: http.IncomingHttpHeaders | undefined;
    let url: string | undefined;
    const base = await listServer((req, res) => {
      seen = req.headers;
      url = req.url;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'zeta' }, { id: 'alpha' }, { id: 'alpha' }, { nope: 1 }] }));
    });
    expect(await listEndpointModels(`${base}/`, 'sk-1')).toEqual(['alpha', 'zeta']);
    expect(url).toBe('/v1/models');
    expect(seen?.['authorization']).toBe('Bearer sk-1');
  });

  it('turns a refusal into the provider message', async () => {
    const base = await listServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"Missing bearer token"}}');
    });
    await expect(listEndpointModels(base, undefined)).rejects.toThrow('the model endpoint answered 401 Unauthorized: Missing bearer token');
  });

  it('answers an empty list when the endpoint lists nothing it understands', async () => {
    const base = await listServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello');
    });
    expect(await listEndpointModels(base, undefined)).toEqual([]);
  });
});
