// Fake model providers on 127.0.0.1 for the model gateway e2e and bench (issue 18): one server that
// speaks OpenAI Chat Completions (+ embeddings, models), Anthropic Messages and Gemini
// generateContent/streamGenerateContent wire formats — request paths, auth headers, bodies,
// SSE events and usage fields as the providers document them. Every request is recorded so tests
// can check what reached the provider (the connection's key, never the caller's).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- provider JSON, read loosely
type Json = any;

export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Json;
}

/** Usage each fake reports (distinct per provider, so a test sees whose numbers it got). */
export const USAGE = {
  openai: { prompt: 11, completion: 7 },
  anthropic: { prompt: 13, completion: 5 },
  gemini: { prompt: 17, completion: 3 },
} as const;

export interface FakeProviders {
  url: string;
  port: number;
  seen: SeenRequest[];
  /** Streams the caller's side closed before they ended (the message "slow" streams for 10 s). */
  abandoned(): number;
  /**
   * Streams whose message says "hold" sent their head and wait here for their first event;
   * `release` sends it to each (then [DONE]).
   */
  release(): number;
  /** TCP connections accepted so far (keep-alive reuse shows as few). */
  connections(): number;
  /** The next `n` requests answer `status` with this Retry-After (then normal). */
  failNext(n: number, status: number, retryAfter?: string): void;
  close(): Promise<void>;
}

const WORDS = ['Hello', ' from', ' the', ' fake', ' provider'];

function wantsTool(body: Json): string | undefined {
  const tools = body.tools as Json[] | undefined;
  if (!tools || tools.length === 0) return undefined;
  const first = tools[0];
  return first.function?.name ?? first.name ?? first.functionDeclarations?.[0]?.name;
}

function sse(res: ServerResponse, events: Array<[string | undefined, unknown]>, done = false): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [event, data] of events) {
    res.write(
      `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    );
  }
  if (done) res.write('data: [DONE]\n\n');
  res.end();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function openai(req: SeenRequest, res: ServerResponse): void {
  const b = req.body;
  const u = USAGE.openai;
  const usage = {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
  };
  if (req.path.endsWith('/embeddings'))
    return json(res, 200, {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }],
      model: b.model,
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
  const tool = wantsTool(b);
  // A server that reports no usage at all (older self-hosted servers): model name "nousage…".
  const silent = String(b.model).startsWith('nousage');
  const base = { id: 'chatcmpl-fake', created: 1700000000, model: b.model, system_fingerprint: 'fp_fake' };
  if (!b.stream) {
    const message = tool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_fake1', type: 'function', function: { name: tool, arguments: '{"city":"Paris"}' } },
          ],
          refusal: null,
        }
      : { role: 'assistant', content: WORDS.join(''), refusal: null };
    return json(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, logprobs: null, finish_reason: tool ? 'tool_calls' : 'stop' }],
      ...(silent ? {} : { usage }),
    });
  }
  const withUsage = b.stream_options?.include_usage === true && !silent;
  if (JSON.stringify(b.messages).includes('slow')) return slowStream(res);
  if (JSON.stringify(b.messages).includes('hold')) return heldStream(res);
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(withUsage ? { usage: null } : {}),
  });
  const events: Array<[undefined, unknown]> = [
    [undefined, chunk({ role: 'assistant', content: '', refusal: null })],
  ];
  if (tool) {
    events.push([
      undefined,
      chunk({
        tool_calls: [
          { index: 0, id: 'call_fake1', type: 'function', function: { name: tool, arguments: '' } },
        ],
      }),
    ]);
    for (const part of ['{"city"', ':"Paris"}'])
      events.push([undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] })]);
    events.push([undefined, chunk({}, 'tool_calls')]);
  } else {
    for (const w of WORDS) events.push([undefined, chunk({ content: w })]);
    events.push([undefined, chunk({}, 'stop')]);
  }
  if (withUsage) events.push([undefined, { ...base, object: 'chat.completion.chunk', choices: [], usage }]);
  sse(res, events, true);
}

let held: Array<() => void> = [];
/** The head at once, the events only when the test releases them (a provider still thinking). */
function heldStream(res: ServerResponse): void {
  const u = USAGE.openai;
  const usage = {
    prompt_tokens: u.prompt,
    completion_tokens: u.completion,
    total_tokens: u.prompt + u.completion,
  };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.flushHeaders();
  held.push(() =>
    res.end(
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n` +
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`,
    ),
  );
}

let abandoned = 0;
/** One chunk, then silence: a test closes its side and checks the provider saw the close. */
function slowStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(
    `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n`,
  );
  const timer = setTimeout(() => res.end('data: [DONE]\n\n'), 10_000);
  res.once('close', () => {
    if (!res.writableFinished) abandoned++;
    clearTimeout(timer);
  });
}

function anthropic(req: SeenRequest, res: ServerResponse): void {
  const b = req.body;
  const u = USAGE.anthropic;
  const tool = wantsTool(b);
  const msg = { id: 'msg_fake', type: 'message', role: 'assistant', model: b.model, stop_sequence: null };
  if (!b.stream) {
    const content = tool
      ? [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_fake1', name: tool, input: { city: 'Paris' } },
        ]
      : [{ type: 'text', text: WORDS.join('') }];
    return json(res, 200, {
      ...msg,
      content,
      stop_reason: tool ? 'tool_use' : 'end_turn',
      usage: { input_tokens: u.prompt, output_tokens: u.completion },
    });
  }
  const events: Array<[string, unknown]> = [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          ...msg,
          content: [],
          stop_reason: null,
          usage: { input_tokens: u.prompt, output_tokens: 1 },
        },
      },
    ],
    [
      'content_block_start',
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ],
    ['ping', { type: 'ping' }],
  ];
  for (const w of tool ? ['Let me check.'] : WORDS)
    events.push([
      'content_block_delta',
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } },
    ]);
  events.push(['content_block_stop', { type: 'content_block_stop', index: 0 }]);
  if (tool) {
    events.push([
      'content_block_start',
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_fake1', name: tool, input: {} },
      },
    ]);
    for (const part of ['{"city"', ': "Paris"}'])
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: part } },
      ]);
    events.push(['content_block_stop', { type: 'content_block_stop', index: 1 }]);
  }
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.completion },
    },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  sse(res, events);
}

function gemini(req: SeenRequest, res: ServerResponse): void {
  const b = req.body;
  // models.batchEmbedContents: one embedding per request, no usage (Gemini reports none).
  if (req.path.endsWith(':batchEmbedContents')) {
    const requests = (b as { requests?: unknown[] }).requests ?? [];
    return json(res, 200, { embeddings: requests.map((_, i) => ({ values: [i, 0.5, 0.25, 0.125] })) });
  }
  const u = USAGE.gemini;
  const tool = wantsTool(b);
  const usageMetadata = {
    promptTokenCount: u.prompt,
    candidatesTokenCount: u.completion,
    totalTokenCount: u.prompt + u.completion,
  };
  const model = /models\/([^:]+):/.exec(req.path)?.[1];
  const parts = tool
    ? [{ functionCall: { name: tool, args: { city: 'Paris' } } }]
    : [{ text: WORDS.join('') }];
  if (!req.path.includes(':streamGenerateContent'))
    return json(res, 200, {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata,
      modelVersion: model,
      responseId: 'fakeresp',
    });
  const events: Array<[undefined, unknown]> = [];
  if (tool)
    events.push([
      undefined,
      {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata,
        modelVersion: model,
      },
    ]);
  else
    WORDS.forEach((w, i) => {
      const last = i === WORDS.length - 1;
      events.push([
        undefined,
        {
          candidates: [
            {
              content: { role: 'model', parts: [{ text: w }] },
              ...(last ? { finishReason: 'STOP' } : {}),
              index: 0,
            },
          ],
          usageMetadata: last ? usageMetadata : { promptTokenCount: u.prompt, totalTokenCount: u.prompt },
          modelVersion: model,
        },
      ]);
    });
  sse(res, events);
}

function providerError(path: string, status: number): unknown {
  if (path.startsWith('/v1/messages'))
    return { type: 'error', error: { type: 'rate_limit_error', message: 'fake rate limit' } };
  if (path.startsWith('/v1beta/'))
    return { error: { code: status, message: 'fake rate limit', status: 'RESOURCE_EXHAUSTED' } };
  return {
    error: { message: 'fake rate limit', type: 'requests', param: null, code: 'rate_limit_exceeded' },
  };
}

/** `record: false` keeps no request log (benchmarks send hundreds of thousands). */
export async function startFakeProviders(options: { record?: boolean } = {}): Promise<FakeProviders> {
  const seen: SeenRequest[] = [];
  let failures: { n: number; status: number; retryAfter?: string | undefined } = { n: 0, status: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const r: SeenRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body,
      };
      if (options.record !== false) seen.push(r);
      if (failures.n > 0) {
        failures.n--;
        res.setHeader('content-type', 'application/json');
        if (failures.retryAfter !== undefined) res.setHeader('retry-after', failures.retryAfter);
        res.statusCode = failures.status;
        return res.end(JSON.stringify(providerError(r.path, failures.status)));
      }
      if (r.path.startsWith('/v1/messages')) return anthropic(r, res);
      if (r.path.startsWith('/v1beta/models/')) return gemini(r, res);
      if (r.method === 'GET' && r.path.endsWith('/models'))
        return json(res, 200, { object: 'list', data: [] });
      return openai(r, res);
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    connections: () => connections,
    abandoned: () => abandoned,
    release: () => {
      const n = held.length;
      for (const send of held) send();
      held = [];
      return n;
    },
    failNext: (n, status, retryAfter) => (failures = { n, status, retryAfter }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
