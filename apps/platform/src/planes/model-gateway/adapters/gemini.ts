/**
 * Google's Gemini API (issue 18), translated both ways: OpenAI chat request →
 * `POST {base}/v1beta/models/{model}:generateContent` (or `:streamGenerateContent?alt=sse`),
 * key in `x-goog-api-key`; `GenerateContentResponse` (whole, or one per SSE event) → chat
 * completion (chunks). Function calls arrive whole in one part; each becomes one tool-call delta.
 * Base URL: the host root, as Google's SDK takes it (`https://generativelanguage.googleapis.com`).
 */
import { jsonError, joinUrl, readUsage } from './adapter.js';
import type { Adapter, ChatBody, ChatCall, ResolvedModel, StreamTranslator, Usage } from './adapter.js';
import {
  argsObject,
  maxTokens,
  optionalNumber,
  readMessages,
  readToolChoice,
  readTools,
  refuseOthers,
  stopList,
  textOf,
  type Part,
} from './openai-request.js';
import { GatewayError, unsupportedField } from '../gateway-error.js';
import { geminiEmbeddingsRequest, geminiEmbeddingsResult } from './gemini-embeddings.js';

const NAME = 'gemini';
const HANDLED = [
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'n',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'response_format',
  'tools',
  'tool_choice',
];

function headers(m: ResolvedModel): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (m.apiKey) h['x-goog-api-key'] = m.apiKey;
  return h;
}

type GPart = Record<string, unknown>;

function gparts(parts: Part[], field: string): GPart[] {
  return parts.map((p) => {
    if (p.type === 'text') return { text: p.text };
    if (p.data === undefined)
      throw unsupportedField(field, NAME, 'with an http(s) image URL is not supported (send a data: URL)');
    return { inlineData: { mimeType: p.mediaType, data: p.data } };
  });
}

export function geminiRequest(b: ChatBody): Record<string, unknown> {
  refuseOthers(b, HANDLED, NAME);
  const system: string[] = [];
  const contents: Array<{ role: 'user' | 'model'; parts: GPart[] }> = [];
  const names = new Map<string, string>(); // tool call id → function name
  const push = (role: 'user' | 'model', parts: GPart[]) => {
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  readMessages(b, NAME).forEach((m, i) => {
    const field = `messages[${i}].content`;
    if (m.role === 'system') return void system.push(textOf(m.parts));
    if (m.role === 'tool') {
      const text = textOf(m.parts);
      let response: unknown;
      try {
        response = JSON.parse(text);
      } catch {
        response = undefined;
      }
      const obj =
        typeof response === 'object' && response !== null && !Array.isArray(response)
          ? response
          : { content: text };
      const name = names.get(m.toolCallId ?? '');
      if (!name)
        throw new GatewayError(
          400,
          `messages[${i}].tool_call_id names no earlier tool call`,
          `messages[${i}].tool_call_id`,
        );
      return push('user', [{ functionResponse: { name, response: obj } }]);
    }
    const parts = gparts(m.parts, field).filter((p) => p.text !== '');
    for (const [j, tc] of m.toolCalls.entries()) {
      names.set(tc.id, tc.name);
      parts.push({
        functionCall: {
          name: tc.name,
          args: argsObject(tc.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
        },
      });
    }
    push(m.role === 'assistant' ? 'model' : 'user', parts);
  });
  const gen: Record<string, unknown> = {};
  const set = (k: string, v: unknown) => v !== undefined && (gen[k] = v);
  set('temperature', optionalNumber(b, 'temperature'));
  set('topP', optionalNumber(b, 'top_p'));
  set('maxOutputTokens', maxTokens(b));
  set('stopSequences', stopList(b));
  set('candidateCount', optionalNumber(b, 'n'));
  set('seed', optionalNumber(b, 'seed'));
  set('presencePenalty', optionalNumber(b, 'presence_penalty'));
  set('frequencyPenalty', optionalNumber(b, 'frequency_penalty'));
  const rf = b.response_format as { type?: string; json_schema?: { schema?: unknown } } | undefined;
  if (rf && rf.type === 'json_object') gen.responseMimeType = 'application/json';
  else if (rf && rf.type === 'json_schema') {
    gen.responseMimeType = 'application/json';
    if (rf.json_schema?.schema) gen.responseJsonSchema = rf.json_schema.schema;
  } else if (rf && rf.type !== 'text')
    throw unsupportedField('response_format', NAME, `type "${String(rf.type)}" is not supported`);
  const out: Record<string, unknown> = { contents };
  if (system.length > 0) out.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (Object.keys(gen).length > 0) out.generationConfig = gen;
  const tools = readTools(b);
  if (tools.length > 0)
    out.tools = [
      {
        functionDeclarations: tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          parameters: t.parameters,
        })),
      },
    ];
  const choice = readToolChoice(b);
  if (choice === 'auto') out.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice === 'none') out.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (choice === 'required') out.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (choice)
    out.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  return out;
}

const FINISH: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  BLOCKLIST: 'content_filter',
  SPII: 'content_filter',
};

interface Candidate {
  index?: number;
  content?: {
    parts?: Array<{
      text?: string;
      thought?: boolean;
      functionCall?: { id?: string; name?: string; args?: unknown };
    }>;
  };
  finishReason?: string;
}

const openAiUsage = (u: Usage | undefined) =>
  u && { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.total };

function finish(c: Candidate, calls: number): string | null {
  if (!c.finishReason) return null;
  if (calls > 0 && c.finishReason === 'STOP') return 'tool_calls';
  return FINISH[c.finishReason] ?? 'stop';
}

export function geminiResult(text: string, call: ChatCall): { body: string; usage: Usage | undefined } {
  const r = JSON.parse(text) as {
    candidates?: Candidate[];
    usageMetadata?: unknown;
    modelVersion?: string;
    responseId?: string;
  };
  const usage = readUsage(r.usageMetadata);
  let n = 0;
  const choices = (r.candidates ?? []).map((c, i) => {
    const parts = (c.content?.parts ?? []).filter((p) => !p.thought);
    const calls = parts
      .filter((p) => p.functionCall)
      .map((p) => ({
        id: p.functionCall?.id ?? `call_${call.id.slice(-12)}_${n++}`,
        type: 'function',
        function: { name: p.functionCall?.name, arguments: JSON.stringify(p.functionCall?.args ?? {}) },
      }));
    const texts = parts.filter((p) => typeof p.text === 'string').map((p) => p.text);
    return {
      index: c.index ?? i,
      message: {
        role: 'assistant',
        content: texts.length > 0 ? texts.join('') : null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
        refusal: null,
      },
      logprobs: null,
      finish_reason: finish(c, calls.length) ?? 'stop',
    };
  });
  const body = {
    id: r.responseId ? `chatcmpl-${r.responseId}` : call.id,
    object: 'chat.completion',
    created: call.created,
    model: r.modelVersion ?? call.model.upstreamModel,
    choices,
    usage: openAiUsage(usage),
  };
  return { body: JSON.stringify(body), usage };
}

export class GeminiStream implements StreamTranslator {
  private seen: Usage | undefined;
  private readonly started = new Set<number>();
  private readonly toolIndex = new Map<number, number>();
  private failed: string | undefined;
  private model: string;

  constructor(private readonly call: ChatCall) {
    this.model = call.model.upstreamModel;
  }

  private chunk(index: number, delta: Record<string, unknown>, finishReason: string | null): string {
    return JSON.stringify({
      id: this.call.id,
      object: 'chat.completion.chunk',
      created: this.call.created,
      model: this.model,
      choices: [{ index, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.call.includeUsage ? { usage: null } : {}),
    });
  }

  event(_name: string | undefined, data: string): string[] {
    let r: { candidates?: Candidate[]; usageMetadata?: unknown; modelVersion?: string; error?: unknown };
    try {
      r = JSON.parse(data) as typeof r;
    } catch {
      return [];
    }
    if (r.error) {
      this.failed = jsonError(data);
      return [];
    }
    if (r.modelVersion) this.model = r.modelVersion;
    const u = readUsage(r.usageMetadata);
    if (u) this.seen = u;
    const out: string[] = [];
    for (const [i, c] of (r.candidates ?? []).entries()) {
      const index = c.index ?? i;
      const delta: Record<string, unknown> = {};
      if (!this.started.has(index)) {
        this.started.add(index);
        delta.role = 'assistant';
      }
      const parts = (c.content?.parts ?? []).filter((p) => !p.thought);
      const text = parts
        .filter((p) => typeof p.text === 'string')
        .map((p) => p.text)
        .join('');
      if (text) delta.content = text;
      const calls = parts.filter((p) => p.functionCall);
      if (calls.length > 0) {
        delta.tool_calls = calls.map((p) => {
          const n = this.toolIndex.get(index) ?? 0;
          this.toolIndex.set(index, n + 1);
          return {
            index: n,
            id: p.functionCall?.id ?? `call_${this.call.id.slice(-12)}_${index}_${n}`,
            type: 'function',
            function: { name: p.functionCall?.name, arguments: JSON.stringify(p.functionCall?.args ?? {}) },
          };
        });
      }
      const f = finish(c, this.toolIndex.get(index) ?? 0);
      if (Object.keys(delta).length > 0 || f) out.push(this.chunk(index, delta, f));
    }
    return out;
  }

  end(): string[] {
    if (!this.call.includeUsage) return [];
    return [
      JSON.stringify({
        id: this.call.id,
        object: 'chat.completion.chunk',
        created: this.call.created,
        model: this.model,
        choices: [],
        usage: openAiUsage(this.seen),
      }),
    ];
  }

  usage(): Usage | undefined {
    return this.seen;
  }

  error(): string | undefined {
    return this.failed;
  }
}

const modelPath = (m: ResolvedModel) => `/v1beta/models/${encodeURIComponent(m.upstreamModel)}`;

export const geminiAdapter: Adapter = {
  name: NAME,
  chatRequest: (b, call) => ({
    url: joinUrl(
      call.model.baseUrl,
      `${modelPath(call.model)}:${call.stream ? 'streamGenerateContent' : 'generateContent'}`,
      call.stream ? '?alt=sse' : '',
    ),
    method: 'POST',
    headers: headers(call.model),
    body: JSON.stringify(geminiRequest(b)),
  }),
  chatResult: geminiResult,
  chatStream: (call) => new GeminiStream(call),
  embeddingsRequest: (b, m) =>
    geminiEmbeddingsRequest(b, m, joinUrl(m.baseUrl, `${modelPath(m)}:batchEmbedContents`), headers(m)),
  embeddingsResult: geminiEmbeddingsResult,
  passthroughRequest: (m, path, query) => ({ url: joinUrl(m.baseUrl, path, query), headers: headers(m) }),
  errorMessage: jsonError,
};
