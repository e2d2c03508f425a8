// End-to-end (issue 18 "What it must show"): the built platform serves
// `{run_url}/{ws}/models/{model}` in front of fake providers on 127.0.0.1 that speak the OpenAI,
// Anthropic and Gemini wire formats (fake-providers.ts). The official `openai` client, pointed at
// the model's URL, gets non-streamed and streamed completions and tool calls through every
// adapter; the provider sees the connection's key, never the caller's; a 429 is retried then
// surfaced; a maxToken policy blocks once its budget is used; usage in the billing metrics API
// equals what the provider reported, streams included; callers without access get 401/404.
import { request } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';
import { startFakeProviders, USAGE, type FakeProviders } from './fake-providers.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- loose reads
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ADAPTERS = [
  {
    model: 'e2e-openai',
    type: 'openai',
    path: '/v1',
    secret: { OPENAI_API_KEY: 'sk-upstream-openai' },
    usage: USAGE.openai,
  },
  {
    model: 'e2e-mistral',
    type: 'mistral',
    path: '/v1',
    secret: { MISTRAL_API_KEY: 'sk-upstream-mistral' },
    usage: USAGE.openai,
  },
  {
    model: 'e2e-anthropic',
    type: 'anthropic',
    path: '',
    secret: { ANTHROPIC_API_KEY: 'sk-upstream-anthropic' },
    usage: USAGE.anthropic,
  },
  {
    // The OpenAI-compatible adapter for self-hosted servers (vLLM, Ollama…): base URL from the connection.
    model: 'e2e-selfhosted',
    type: 'public_model',
    path: '/v1',
    secret: { API_KEY: 'selfhosted-key' },
    usage: USAGE.openai,
  },
  {
    model: 'e2e-azure',
    type: 'azure-openai-service',
    path: '',
    secret: { AZURE_OPENAI_API_KEY: 'azure-upstream-key' },
    usage: USAGE.openai,
  },
  {
    model: 'e2e-gemini',
    type: 'gemini',
    path: '',
    secret: { GEMINI_API_KEY: 'upstream-gemini-key' },
    usage: USAGE.gemini,
  },
] as const;

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

describe('model gateway through the built platform', () => {
  let p: RunningPlatform;
  let fake: FakeProviders;
  let ws: string;
  const expected = new Map<string, { input: number; output: number; requests: number }>();
  const estimated = new Map<string, number>();
  const count = (model: string, u: { prompt: number; completion: number }) => {
    const e = expected.get(model) ?? { input: 0, output: 0, requests: 0 };
    expected.set(model, {
      input: e.input + u.prompt,
      output: e.output + u.completion,
      requests: e.requests + 1,
    });
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await p.api(path, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
  };
  const client = (model: string, apiKey = p.credentials.apiKey) =>
    new OpenAI({ apiKey, baseURL: `${p.credentials.runUrl}/${ws}/models/${model}`, maxRetries: 0 });

  beforeAll(async () => {
    fake = await startFakeProviders();
    p = await startPlatform({
      env: {
        // The fakes live on loopback: the operator opens exactly that address (issue 18).
        TARMAC_MODEL_UPSTREAM_ALLOW: '127.0.0.1/32',
        TARMAC_MODEL_RETRIES: '2',
        TARMAC_MODEL_MAX_RETRY_DELAY_SECONDS: '2',
      },
    });
    ws = p.credentials.workspace;
    for (const a of ADAPTERS) {
      const conn = await call('POST', `/v0/integrations/connections?workspace=${ws}`, {
        metadata: { name: `${a.model}-conn` },
        spec: {
          integration: a.type.replace(/_/g, '-'),
          config: { baseUrl: `${fake.url}${a.path}` },
          secret: a.secret,
        },
      });
      expect(conn.status, JSON.stringify(conn.body)).toBe(200);
      const model = await call('PUT', `/v0/models/${a.model}?workspace=${ws}`, {
        metadata: { name: a.model },
        spec: {
          runtime: { type: a.type, model: `${a.type}-upstream-model` },
          integrationConnections: [`${a.model}-conn`],
        },
      });
      expect(model.status, JSON.stringify(model.body)).toBe(200);
      expect(model.body.status).toBe('DEPLOYED'); // served at once: no "waiting for a runtime"
      expect(model.body.events.at(-1).message).toContain('model gateway');
    }
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    if (p) removeHome(p.home);
    await fake?.close();
  });

  describe.each(ADAPTERS)('$type adapter', (a) => {
    it('answers a non-streamed completion with the provider usage; upstream sees the connection key', async () => {
      const before = fake.seen.length;
      const r = await client(a.model).chat.completions.create({
        model: 'anything',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello' },
        ],
        max_tokens: 50,
      });
      count(a.model, a.usage);
      expect(r.choices[0]?.message.content).toBe('Hello from the fake provider');
      expect(r.choices[0]?.finish_reason).toBe('stop');
      expect(r.usage).toMatchObject({
        prompt_tokens: a.usage.prompt,
        completion_tokens: a.usage.completion,
        total_tokens: a.usage.prompt + a.usage.completion,
      });
      const up = fake.seen.slice(before);
      expect(up).toHaveLength(1);
      const h = up[0]!.headers;
      const key = Object.values(a.secret)[0];
      const sent = h.authorization ?? h['x-api-key'] ?? h['x-goog-api-key'] ?? h['api-key'];
      expect(sent === key || sent === `Bearer ${key}`).toBe(true);
      expect(JSON.stringify(h)).not.toContain(p.credentials.apiKey);
      if (a.type === 'anthropic') {
        expect(up[0]!.path).toBe('/v1/messages');
        expect(h['anthropic-version']).toBe('2023-06-01');
        expect(up[0]!.body).toMatchObject({
          model: 'anthropic-upstream-model',
          system: 'Be brief.',
          max_tokens: 50,
        });
      } else if (a.type === 'gemini') {
        expect(up[0]!.path).toBe('/v1beta/models/gemini-upstream-model:generateContent');
        expect(up[0]!.body).toMatchObject({
          systemInstruction: { parts: [{ text: 'Be brief.' }] },
          generationConfig: { maxOutputTokens: 50 },
        });
      } else if (a.type === 'azure-openai-service') {
        expect(up[0]!.path).toBe(
          '/openai/deployments/azure-openai-service-upstream-model/chat/completions?api-version=2024-10-21',
        );
      } else {
        expect(up[0]!.path).toBe('/v1/chat/completions');
        expect(up[0]!.body.model).toBe(`${a.type}-upstream-model`);
      }
    });

    it('streams SSE chunks ending in [DONE], with include_usage', async () => {
      const stream = await client(a.model).chat.completions.create({
        model: 'anything',
        messages: [{ role: 'user', content: 'Say hello' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      let finish: string | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      count(a.model, a.usage);
      expect(text).toBe('Hello from the fake provider');
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: a.usage.prompt, completion_tokens: a.usage.completion });
    });

    it('streams without include_usage: no usage chunk reaches the caller, usage is still counted', async () => {
      const stream = await client(a.model).chat.completions.create({
        model: 'anything',
        messages: [{ role: 'user', content: 'Say hello' }],
        stream: true,
      });
      const chunks = [];
      for await (const chunk of stream) chunks.push(chunk);
      count(a.model, a.usage);
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
        'Hello from the fake provider',
      );
    });

    it('calls tools, non-streamed and streamed, and sends the tool result back', async () => {
      const c = client(a.model);
      const r = await c.chat.completions.create({
        model: 'anything',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: TOOLS,
        tool_choice: 'auto',
      });
      count(a.model, a.usage);
      const call0 = r.choices[0]?.message.tool_calls?.[0];
      expect(r.choices[0]?.finish_reason).toBe('tool_calls');
      expect(call0?.type === 'function' && call0.function.name).toBe('get_weather');
      expect(call0?.type === 'function' && JSON.parse(call0.function.arguments)).toEqual({ city: 'Paris' });

      const stream = await c.chat.completions.create({
        model: 'anything',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: TOOLS,
        stream: true,
      });
      let name = '';
      let args = '';
      let id = '';
      for await (const chunk of stream) {
        for (const tc of chunk.choices[0]?.delta.tool_calls ?? []) {
          id ||= tc.id ?? '';
          name += tc.function?.name ?? '';
          args += tc.function?.arguments ?? '';
        }
      }
      count(a.model, a.usage);
      expect(name).toBe('get_weather');
      expect(JSON.parse(args)).toEqual({ city: 'Paris' });
      expect(id).not.toBe('');

      const before = fake.seen.length;
      await c.chat.completions.create({
        model: 'anything',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
          },
          { role: 'tool', tool_call_id: id, content: '{"sky":"clear"}' },
        ],
      });
      count(a.model, a.usage);
      const sent = JSON.stringify(fake.seen[before]!.body);
      expect(sent).toContain('clear');
      if (a.type === 'anthropic') expect(sent).toContain('"tool_result"');
      if (a.type === 'gemini') expect(sent).toContain('"functionResponse"');
    });
  });

  it('refuses a field the anthropic adapter cannot honour, naming it (never a silent drop)', async () => {
    const err = await client('e2e-anthropic')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], n: 3 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/\bn\b.*anthropic/);
  });

  it('lists the model and passes embeddings and the provider API through with the key swapped', async () => {
    const c = client('e2e-openai');
    const list = await c.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['e2e-openai']);
    const emb = await c.embeddings.create({ model: 'x', input: 'hello' });
    count('e2e-openai', { prompt: 5, completion: 0 });
    expect(emb.data[0]?.embedding).toHaveLength(3);
    const before = fake.seen.length;
    const res = await fetch(`${p.credentials.runUrl}/${ws}/models/e2e-anthropic/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${p.credentials.apiKey}`,
        'content-type': 'application/json',
        'x-api-key': 'caller-key',
      },
      body: JSON.stringify({
        model: 'claude-x',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    count('e2e-anthropic', USAGE.anthropic);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).type).toBe('message');
    const up = fake.seen[before]!;
    expect(up.path).toBe('/v1/messages');
    expect(up.headers['x-api-key']).toBe('sk-upstream-anthropic');
    expect(up.headers.authorization).toBeUndefined();
  });

  it('embeddings on gemini: translated to batchEmbedContents and back, usage estimated', async () => {
    const c = client('e2e-gemini');
    const before = fake.seen.length;
    const emb = await c.embeddings.create({ model: 'x', input: ['hello', 'world!!!'] });
    count('e2e-gemini', { prompt: 4, completion: 0 }); // 13 characters, about four a token
    expect(emb.data.map((d) => d.embedding)).toEqual([
      [0, 0.5, 0.25, 0.125],
      [1, 0.5, 0.25, 0.125],
    ]);
    expect(emb.usage.prompt_tokens).toBe(4);
    const up = fake.seen[before]!;
    expect(up.path).toBe('/v1beta/models/gemini-upstream-model:batchEmbedContents');
    expect(up.headers['x-goog-api-key']).toBe('upstream-gemini-key');
    expect(up.body).toEqual({
      requests: [
        { model: 'models/gemini-upstream-model', content: { parts: [{ text: 'hello' }] } },
        { model: 'models/gemini-upstream-model', content: { parts: [{ text: 'world!!!' }] } },
      ],
    });
    const floats = await c.embeddings.create({ model: 'x', input: 'hi', encoding_format: 'float' });
    count('e2e-gemini', { prompt: 1, completion: 0 });
    expect(floats.data[0]?.embedding).toEqual([0, 0.5, 0.25, 0.125]);
    // A field that would change the answer and that Gemini cannot honour: 400 naming it.
    const refused = await fetch(`${p.credentials.runUrl}/${ws}/models/e2e-gemini/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hi', truncate: 'END' }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe('truncate');
  });

  it('attack: a pass-through path with dot segments cannot step out of the base URL with the key', async () => {
    const before = fake.seen.length;
    for (const path of ['/v1/../../admin', '/%2e%2e/%2E%2E/admin', '/v1/..%2f..%2fadmin']) {
      // Raw request line: fetch() would resolve the dots before sending.
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: p.port,
            method: 'POST',
            path: `/${ws}/models/e2e-openai${path}`,
            headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
      expect(status, path).toBe(400);
    }
    expect(fake.seen.length).toBe(before);
  });

  it('retries an upstream 429 (Retry-After honoured), then surfaces a persistent one as 429', async () => {
    fake.failNext(2, 429, '0');
    const before = fake.seen.length;
    const ok = await client('e2e-openai').chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    count('e2e-openai', USAGE.openai);
    expect(ok.choices[0]?.message.content).toBe('Hello from the fake provider');
    expect(fake.seen.length - before).toBe(3);

    fake.failNext(3, 429, '1');
    const err = await client('e2e-anthropic')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as Error).message).toContain('fake rate limit');
    // A Retry-After beyond the bound is not waited for: surfaced at once.
    fake.failNext(1, 503, '120');
    const before2 = fake.seen.length;
    const err2 = await client('e2e-openai')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err2).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err2 as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(fake.seen.length - before2).toBe(1);
  }, 30_000);

  it('answers 401 without valid credentials and 404 for a workspace or model the caller cannot see', async () => {
    const bad = await client('e2e-openai', 'not-a-key')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.AuthenticationError);
    const none = await fetch(`${p.credentials.runUrl}/${ws}/models/e2e-openai/chat/completions`, {
      method: 'POST',
    });
    expect(none.status).toBe(401);
    const other = await fetch(`${p.credentials.runUrl}/someone-elses-ws/models/e2e-openai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.credentials.apiKey}` },
      body: '{}',
    });
    expect(other.status).toBe(404);
    const missing = await client('e2e-nope')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });
  it('a caller that goes away mid-stream cancels the upstream request', async () => {
    const before = fake.abandoned();
    const controller = new AbortController();
    const res = await fetch(`${p.credentials.runUrl}/${ws}/models/e2e-openai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'x', stream: true, messages: [{ role: 'user', content: 'slow' }] }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('Hel');
    controller.abort();
    for (let i = 0; i < 50 && fake.abandoned() === before; i++) await sleep(50);
    expect(fake.abandoned()).toBe(before + 1);
  });

  it('a disabled model is refused with a message saying so', async () => {
    await call('PUT', `/v0/models/e2e-off?workspace=${ws}`, {
      metadata: { name: 'e2e-off' },
      spec: {
        enabled: false,
        runtime: { type: 'openai', model: 'm' },
        integrationConnections: ['e2e-openai-conn'],
      },
    });
    const err = await client('e2e-off')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((err as Error).message).toContain('disabled');
  });

  it('a maxToken policy blocks with 429 naming the policy once its budget is used', async () => {
    const policy = await call('POST', `/v0/policies?workspace=${ws}`, {
      metadata: { name: 'e2e-budget' },
      spec: {
        type: 'maxToken',
        maxTokens: { granularity: 'day', step: 2, total: 30 },
        resourceTypes: ['model'],
      },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const m = await call('PUT', `/v0/models/e2e-budgeted?workspace=${ws}`, {
      metadata: { name: 'e2e-budgeted' },
      spec: {
        runtime: { type: 'openai', model: 'm' },
        integrationConnections: ['e2e-openai-conn'],
        policies: ['e2e-budget'],
      },
    });
    expect(m.status, JSON.stringify(m.body)).toBe(200);
    const c = client('e2e-budgeted');
    const ask = () =>
      c.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], stream: true });
    // 18 tokens per call (USAGE.openai): 18, then 36 (the first over the cap still passes), then 429.
    for (let i = 0; i < 2; i++) for await (const _ of await ask());
    count('e2e-budgeted', USAGE.openai);
    count('e2e-budgeted', USAGE.openai);
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as Error).message).toContain('e2e-budget');
  });

  it('a server that reports no usage is still counted, by estimate', async () => {
    const m = await call('PUT', `/v0/models/e2e-nousage?workspace=${ws}`, {
      metadata: { name: 'e2e-nousage' },
      spec: {
        runtime: { type: 'openai', model: 'nousage-model' },
        integrationConnections: ['e2e-openai-conn'],
      },
    });
    expect(m.status).toBe(200);
    const c = client('e2e-nousage');
    const r = await c.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(r.usage).toBeUndefined();
    const stream = await c.chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of stream);
    // Estimated at four characters a token: "Hello from the fake provider" is 28 characters → 7.
    estimated.set('e2e-nousage', 14);
  });

  it('records usage equal to what the providers reported, visible per model in the billing metrics API', async () => {
    await sleep(2_500); // the gateway writes usage in batches, every second
    const hour = 3_600_000;
    const params = new URLSearchParams({
      startTime: new Date(Math.floor(Date.now() / hour) * hour - hour).toISOString(),
      endTime: new Date(Math.floor(Date.now() / hour) * hour + hour).toISOString(),
      groupBy: 'resource_name,billing_dimension',
    });
    const res = await p.api(`/v0/accounts/${p.credentials.accountId}/metrics?${params.toString()}`);
    expect(res.status).toBe(200);
    const data = ((await res.json()) as Json).data as Json[];
    const usageOf = (model: string, dim: string) =>
      data.find((e) => e.resourceName === model && e.billingDimension === dim)?.summary.usage ?? 0;
    for (const [model, output] of estimated)
      expect(usageOf(model, 'model_output_tokens_count'), model).toBe(output);
    for (const [model, e] of expected) {
      expect(usageOf(model, 'model_input_tokens_count'), model).toBe(e.input);
      expect(usageOf(model, 'model_output_tokens_count'), model).toBe(e.output);
    }
    // Every call is a request, failed ones included (the 429s above): at least the counted ones.
    expect(usageOf('e2e-openai', 'model_requests_count')).toBeGreaterThanOrEqual(
      expected.get('e2e-openai')!.requests,
    );
  });

  it('records every call (status, latency, caller, tokens) queryable per model; other workspaces see none', async () => {
    // A caller of its own: a service account of the workspace with an API key.
    const sa = await call('POST', `/v0/service_accounts?workspace=${ws}`, { name: 'usage-caller' });
    expect(sa.status, JSON.stringify(sa.body)).toBe(200);
    const key = await call('POST', `/v0/service_accounts/${sa.body.client_id}/api_keys?workspace=${ws}`, {
      name: 'usage',
    });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    const model = await call('PUT', `/v0/models/e2e-usagelog?workspace=${ws}`, {
      metadata: { name: 'e2e-usagelog' },
      spec: { runtime: { type: 'openai', model: 'gpt-usage' }, integrationConnections: ['e2e-openai-conn'] },
    });
    expect(model.status, JSON.stringify(model.body)).toBe(200);

    const started = performance.now();
    const ok = await client('e2e-usagelog', key.body.apiKey).chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const wallMs = performance.now() - started;
    expect(ok.usage?.total_tokens).toBe(USAGE.openai.prompt + USAGE.openai.completion);
    fake.failNext(1, 503, '120'); // surfaced at once (beyond the retry bound)
    const failed = await client('e2e-usagelog', key.body.apiKey)
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(503);

    // Written in batches about a second after the calls: poll (bounded).
    let usage: Json = {};
    for (let i = 0; i < 40 && (usage.data?.length ?? 0) < 2; i++) {
      await sleep(250);
      usage = (await call('GET', `/v0/models/e2e-usagelog/usage?workspace=${ws}`)).body;
    }
    expect(usage.data).toHaveLength(2);
    const newest = usage.data[0] as Json;
    const oldest = usage.data[1] as Json;
    expect(newest).toMatchObject({
      status: 503,
      caller: key.body.sub,
      provider: 'openai',
      totalTokens: null,
    });
    expect(oldest).toMatchObject({
      status: 200,
      caller: key.body.sub,
      provider: 'openai',
      promptTokens: USAGE.openai.prompt,
      completionTokens: USAGE.openai.completion,
      totalTokens: USAGE.openai.prompt + USAGE.openai.completion,
    });
    // Milliseconds, the gateway's share of what the client waited (it stops its clock just after
    // the answer's last byte, so a busy machine may let the client see the end a little earlier).
    expect(oldest.latencyMs).toBeGreaterThan(0.05);
    expect(oldest.latencyMs).toBeLessThan(wallMs + 250);
    expect(Date.parse(oldest.at)).toBeLessThanOrEqual(Date.parse(newest.at));

    // Another workspace: its members (the admin is one) find no such model there; the service
    // account, a member of this workspace only, is refused that workspace outright.
    expect((await call('POST', '/v0/workspaces', { name: 'usage-other' })).status).toBe(200);
    const elsewhere = await call('GET', '/v0/models/e2e-usagelog/usage?workspace=usage-other');
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.data).toBeUndefined();
    const outsider = await fetch(`${p.url}/v0/models/e2e-usagelog/usage?workspace=usage-other`, {
      headers: { authorization: `Bearer ${key.body.apiKey}` },
    });
    expect([403, 404]).toContain(outsider.status);
    expect(((await outsider.json()) as Json).data).toBeUndefined();
  }, 30_000);

  it('a restart keeps the maxToken count: the usage of the period is read back from metering', async () => {
    const home = p.home;
    expect(await p.stop()).toBe(0); // graceful: the queued usage is written first
    p = await startPlatform({
      home,
      env: { TARMAC_MODEL_UPSTREAM_ALLOW: '127.0.0.1/32', TARMAC_MODEL_RETRIES: '0' },
    });
    const err = await client('e2e-budgeted')
      .chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as Error).message).toContain('e2e-budget');
    // Another model without the policy still answers.
    const ok = await client('e2e-openai').chat.completions.create({
      model: 'x',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(ok.choices[0]?.message.content).toBe('Hello from the fake provider');
  }, 120_000);
});
