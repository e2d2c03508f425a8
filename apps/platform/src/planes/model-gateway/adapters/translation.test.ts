import type { PolicySpec } from '@tarmac/contract';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../gateway-error.js';
import { SseParser } from '../sse.js';
import type { ChatCall, ResolvedModel, StreamTranslator } from './adapter.js';
import { estimateUsage, joinUrl, readUsage } from './adapter.js';
import { anthropicAdapter, anthropicRequest, anthropicResult } from './anthropic.js';
import { geminiAdapter, geminiRequest, geminiResult, GeminiStream } from './gemini.js';
import { geminiEmbeddingsRequest, geminiEmbeddingsResult } from './gemini-embeddings.js';
import { OpenAiStream, azureOpenAiAdapter } from './openai.js';

const model = (over: Partial<ResolvedModel> = {}): ResolvedModel => ({
  workspace: 'ws',
  name: 'm',
  uuid: 'u',
  accountId: 'a',
  enabled: true,
  provider: 'anthropic',
  upstreamModel: 'claude-x',
  endpointName: undefined,
  organization: undefined,
  apiKey: 'k',
  config: {},
  baseUrl: new URL('https://api.anthropic.com'),
  policies: [] as Array<{ name: string; spec: PolicySpec }>,
  adapter: anthropicAdapter,
  ...over,
});
const call = (over: Partial<ChatCall> = {}): ChatCall => ({
  model: model(),
  stream: false,
  includeUsage: false,
  id: 'chatcmpl-1',
  created: 1,
  ...over,
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- chunk JSON, read loosely
type Chunk = Record<string, any>;

function run(t: StreamTranslator, wire: string): Chunk[] {
  const out: string[] = [];
  const p = new SseParser((e, d) => out.push(...t.event(e, d)));
  // Split the wire at awkward places: events straddle network chunks.
  for (let i = 0; i < wire.length; i += 7) p.push(Buffer.from(wire.slice(i, i + 7)));
  p.end();
  out.push(...t.end());
  return out.map((s) => JSON.parse(s) as Record<string, unknown>);
}

const sse = (events: Array<[string | undefined, unknown]>) =>
  events.map(([e, d]) => `${e ? `event: ${e}\r\n` : ''}data: ${JSON.stringify(d)}\r\n\r\n`).join('');

describe('anthropic adapter', () => {
  it('maps system, images, tool calls and tool results into Messages blocks', () => {
    const body = anthropicRequest(
      {
        messages: [
          { role: 'system', content: 'S1' },
          { role: 'developer', content: 'S2' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
          { role: 'tool', tool_call_id: 't1', content: 'ok' },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
        tool_choice: 'required',
        parallel_tool_calls: false,
        stop: 'END',
        max_completion_tokens: 9,
        user: 'u1',
      },
      call({ stream: true }),
    );
    expect(body).toEqual({
      model: 'claude-x',
      system: 'S1\n\nS2',
      max_tokens: 9,
      stream: true,
      stop_sequences: ['END'],
      metadata: { user_id: 'u1' },
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      ],
    });
  });

  it('refuses fields it cannot honour, naming them', () => {
    for (const [field, value] of [
      ['n', 2],
      ['logprobs', true],
      ['response_format', { type: 'json_object' }],
      ['seed', 3],
      ['audio', {}],
    ] as const) {
      const err = (() => {
        try {
          anthropicRequest({ messages: [{ role: 'user', content: 'x' }], [field]: value }, call());
        } catch (e) {
          return e;
        }
      })();
      expect(err, field).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).status).toBe(400);
      expect((err as GatewayError).param).toBe(field);
    }
  });

  it('turns a message with text and tool use into a chat completion with usage', () => {
    const { body, usage } = anthropicResult(
      JSON.stringify({
        id: 'msg_1',
        model: 'claude-x',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'tool_use', id: 'tu', name: 'f', input: { a: 1 } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 2 },
      }),
      call(),
    );
    expect(usage).toEqual({ prompt: 12, completion: 4, total: 16 });
    expect(JSON.parse(body)).toMatchObject({
      object: 'chat.completion',
      choices: [
        {
          finish_reason: 'tool_calls',
          message: {
            content: 'hi',
            tool_calls: [{ id: 'tu', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
    });
  });

  it('translates the event stream, tool input deltas and the usage chunk', () => {
    const wire = sse([
      [
        'message_start',
        {
          type: 'message_start',
          message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 9, output_tokens: 1 } },
        },
      ],
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      ['ping', { type: 'ping' }],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hé' } },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 'tu', name: 'f', input: {} },
        },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a"' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: ':1}' } },
      ],
      [
        'message_delta',
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 6 } },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
    const t = anthropicAdapter.chatStream(call({ stream: true, includeUsage: true }));
    const chunks = run(t, wire);
    expect(chunks[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hé');
    const tools = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(tools[0]).toMatchObject({ index: 0, id: 'tu', function: { name: 'f' } });
    expect(tools.map((x) => x.function.arguments).join('')).toBe('{"a":1}');
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 },
    });
    expect(t.usage()).toEqual({ prompt: 9, completion: 6, total: 15 });
  });

  it('reports an error event mid-stream', () => {
    const t = anthropicAdapter.chatStream(call({ stream: true }));
    run(t, sse([['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }]]));
    expect(t.error()).toBe('Overloaded');
  });
});

describe('gemini adapter', () => {
  it('maps messages, generation config, tools and tool results', () => {
    const body = geminiRequest({
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'plain text' },
      ],
      temperature: 0.5,
      max_tokens: 7,
      n: 2,
      stop: ['x'],
      response_format: { type: 'json_object' },
      tools: [
        { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
    });
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'S' }] },
      contents: [
        { role: 'user', parts: [{ text: 'q' }] },
        { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'f', response: { content: 'plain text' } } }] },
      ],
      generationConfig: {
        temperature: 0.5,
        maxOutputTokens: 7,
        candidateCount: 2,
        stopSequences: ['x'],
        responseMimeType: 'application/json',
      },
      tools: [{ functionDeclarations: [{ name: 'f', description: 'd', parameters: { type: 'object' } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
    });
  });

  it('refuses an http image URL and unknown fields by name', () => {
    expect(() =>
      geminiRequest({
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
      }),
    ).toThrow(/messages\[0\]\.content/);
    expect(() => geminiRequest({ messages: [{ role: 'user', content: 'x' }], logit_bias: { 1: 2 } })).toThrow(
      /logit_bias/,
    );
  });

  it('turns candidates into choices and function calls into tool calls', () => {
    const { body, usage } = geminiResult(
      JSON.stringify({
        candidates: [
          { content: { parts: [{ functionCall: { name: 'f', args: { a: 1 } } }] }, finishReason: 'STOP' },
        ],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
      }),
      call({ model: model({ upstreamModel: 'gemini-x' }) }),
    );
    expect(usage).toEqual({ prompt: 5, completion: 2, total: 7 });
    expect(JSON.parse(body).choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
    });
  });

  it('streams text deltas and takes the last usageMetadata', () => {
    const t = new GeminiStream(call({ stream: true, includeUsage: true }));
    const chunks = run(
      t,
      sse([
        [
          undefined,
          { candidates: [{ content: { parts: [{ text: 'a' }] } }], usageMetadata: { promptTokenCount: 3 } },
        ],
        [
          undefined,
          {
            candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'MAX_TOKENS' }],
            usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
          },
        ],
      ]),
    );
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('ab');
    expect(chunks[0]!.choices[0].delta.role).toBe('assistant');
    expect(chunks[1]!.choices[0].finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });
});

describe('openai family', () => {
  it('passes chunks through byte for byte and hides the usage chunk the caller did not ask for', () => {
    const t = new OpenAiStream(false);
    const chunk = '{"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}';
    expect(t.event(undefined, chunk)).toEqual([chunk]);
    expect(
      t.event(
        undefined,
        '{"id":"x","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3,"total_tokens":5}}',
      ),
    ).toEqual([]);
    expect(t.event(undefined, '[DONE]')).toEqual([]);
    expect(t.usage()).toEqual({ prompt: 2, completion: 3, total: 5 });
  });

  it('measures streamed text and tool arguments, for a server that sends no usage', () => {
    const t = new OpenAiStream(false);
    t.event(
      undefined,
      '{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello \\"world\\""}}]}',
    );
    t.event(
      undefined,
      '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":1}"}}]}}]}',
    );
    expect(t.usage()).toBeUndefined();
    expect(t.streamedChars()).toBe('Hello \\"world\\"'.length + '{\\"a\\":1}'.length);
    expect(estimateUsage(40, 9)).toEqual({ prompt: 10, completion: 3, total: 13 });
  });

  it('asks for usage upstream when streaming and sets the upstream model', () => {
    const r = azureOpenAiAdapter.chatRequest(
      { messages: [], stream: true, model: 'caller' },
      call({
        stream: true,
        model: model({
          upstreamModel: 'gpt',
          endpointName: 'dep 1',
          baseUrl: new URL('https://x.openai.azure.com'),
          config: { apiVersion: '2025-01-01' },
        }),
      }),
    );
    expect(r.url.href).toBe(
      'https://x.openai.azure.com/openai/deployments/dep%201/chat/completions?api-version=2025-01-01',
    );
    expect(r.headers['api-key']).toBe('k');
    expect(r.headers.authorization).toBeUndefined();
    expect(JSON.parse(String(r.body))).toEqual({
      messages: [],
      stream: true,
      model: 'gpt',
      stream_options: { include_usage: true },
    });
  });

  it('joins base URLs without doubling /v1', () => {
    expect(joinUrl(new URL('http://h/v1'), '/v1/embeddings').href).toBe('http://h/v1/embeddings');
    expect(joinUrl(new URL('http://h/openai/v1/'), '/chat/completions').href).toBe(
      'http://h/openai/v1/chat/completions',
    );
    expect(joinUrl(new URL('http://h'), '/v1/messages', '?a=1').href).toBe('http://h/v1/messages?a=1');
  });

  it('reads the three providers usage shapes', () => {
    expect(readUsage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({
      prompt: 1,
      completion: 2,
      total: 3,
    });
    expect(readUsage({ input_tokens: 1, output_tokens: 2 })).toEqual({ prompt: 1, completion: 2, total: 3 });
    expect(
      readUsage({ promptTokenCount: 1, candidatesTokenCount: 2, thoughtsTokenCount: 4, totalTokenCount: 7 }),
    ).toEqual({
      prompt: 1,
      completion: 6,
      total: 7,
    });
    expect(readUsage(null)).toBeUndefined();
  });
});

describe('gemini embeddings (batchEmbedContents)', () => {
  const gm = model({ provider: 'gemini', upstreamModel: 'text-embedding-004', adapter: geminiAdapter });
  const url = new URL('https://g/v1beta/models/text-embedding-004:batchEmbedContents');

  it('one request per input, dimensions as outputDimensionality', () => {
    const r = geminiEmbeddingsRequest({ input: ['a', 'b'], dimensions: 8 }, gm, url, {});
    expect(JSON.parse(r.body as string)).toEqual({
      requests: ['a', 'b'].map((text) => ({
        model: 'models/text-embedding-004',
        content: { parts: [{ text }] },
        outputDimensionality: 8,
      })),
    });
  });

  it('refuses what it cannot honour, naming the field', () => {
    const param = (b: Record<string, unknown>) => {
      try {
        geminiEmbeddingsRequest(b, gm, url, {});
      } catch (e) {
        return (e as GatewayError).param;
      }
      return undefined;
    };
    expect(param({ input: 'a', truncate: 'END' })).toBe('truncate');
    expect(param({ input: [1, 2] })).toBe('input');
    expect(param({ input: [] })).toBe('input');
    expect(param({ input: 'a', encoding_format: 'int8' })).toBe('encoding_format');
    expect(param({ input: 'a', dimensions: 0 })).toBe('dimensions');
  });

  it('answers OpenAI-shaped, floats or base64 little-endian float32', () => {
    const text = JSON.stringify({ embeddings: [{ values: [0.5, -1] }] });
    const floats = JSON.parse(geminiEmbeddingsResult(text, gm, { input: 'abcd' }).body) as {
      data: Array<{ embedding: number[] }>;
      usage: { prompt_tokens: number };
    };
    expect(floats.data[0]!.embedding).toEqual([0.5, -1]);
    expect(floats.usage.prompt_tokens).toBe(1);
    const b64 = JSON.parse(
      geminiEmbeddingsResult(text, gm, { input: 'abcd', encoding_format: 'base64' }).body,
    ) as {
      data: Array<{ embedding: string }>;
    };
    const back = new Float32Array(Uint8Array.from(Buffer.from(b64.data[0]!.embedding, 'base64')).buffer);
    expect([...back]).toEqual([0.5, -1]);
  });
});
