/**
 * The OpenAI family (issue 18): `openai`, `mistral`, `groq`, `deepseek`, `xai`, `cerebras`,
 * `cohere` (its compatibility API) and any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM
 * Studio) through a connection `config.baseUrl`; `azure-openai-service` differs only in URL and
 * auth header. The request body goes upstream as the caller wrote it, with `model` set to the
 * record's upstream model (and usage asked for when streaming, so accounting is exact), spliced
 * into the caller's bytes where that is provably exact (openai-bytes.ts); the answer comes back
 * byte for byte — only the usage is read from it.
 */
import type { Adapter, ChatBody, ChatCall, ResolvedModel, StreamTranslator, Usage } from './adapter.js';
import { joinUrl, jsonError, readUsage, textChars } from './adapter.js';
import { rawChatBody, usageOfAnswer } from './openai-bytes.js';

/** Chat URLs per resolved model (itself cached): no URL parse per request. */
const chatUrls = new WeakMap<ResolvedModel, URL>();
function chatUrl(m: ResolvedModel): URL {
  let url = chatUrls.get(m);
  if (!url) chatUrls.set(m, (url = joinUrl(m.baseUrl, '/chat/completions')));
  return url;
}

function headers(m: ResolvedModel): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (m.apiKey) h.authorization = `Bearer ${m.apiKey}`;
  const org = m.config.organization ?? m.organization;
  if (org) h['openai-organization'] = org;
  if (m.config.project) h['openai-project'] = m.config.project;
  return h;
}

function azureHeaders(m: ResolvedModel): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json' };
  if (m.apiKey) h['api-key'] = m.apiKey;
  return h;
}

/** Default `api-version` of Azure OpenAI: the GA version with `stream_options` (2024-10-21). */
export const AZURE_API_VERSION = '2024-10-21';

function body(b: ChatBody, call: ChatCall): Buffer | string {
  const raw = call.raw && rawChatBody(call.raw, b, call.model.upstreamModel, call.stream);
  if (raw) return raw;
  const out: ChatBody = { ...b, model: call.model.upstreamModel };
  if (call.stream) {
    const so = (b.stream_options ?? {}) as Record<string, unknown>;
    out.stream_options = { ...so, include_usage: true };
  }
  return JSON.stringify(out);
}

/** Passes chunks through untouched; drops the usage-only chunk the caller did not ask for. */
export class OpenAiStream implements StreamTranslator {
  private seen: Usage | undefined;
  private failed: string | undefined;
  private chars = 0;
  constructor(private readonly includeUsage: boolean) {}

  streamedChars(): number {
    return this.chars;
  }

  event(_name: string | undefined, data: string): string[] {
    if (data === '[DONE]') return [];
    // Text and tool-argument deltas, measured without a parse (only used when no usage arrives).
    this.chars += textChars(data);
    if (!data.includes('"usage"') && !data.includes('"error"')) return [data];
    let parsed: { usage?: unknown; choices?: unknown[]; error?: unknown };
    try {
      parsed = JSON.parse(data) as typeof parsed;
    } catch {
      return [data];
    }
    if (parsed.error) this.failed = jsonError(data);
    const usage = readUsage(parsed.usage);
    if (usage) this.seen = usage;
    if (usage && !this.includeUsage && (parsed.choices?.length ?? 0) === 0) return [];
    return [data];
  }

  end(): string[] {
    return [];
  }

  usage(): Usage | undefined {
    return this.seen;
  }

  error(): string | undefined {
    return this.failed;
  }
}

function result(text: string): { body: string; usage: Usage | undefined } {
  return { body: text, usage: usageOfAnswer(Buffer.from(text)) };
}

/** The answer goes back byte for byte: only its usage is read (openai-bytes.ts). */
function resultBytes(raw: Buffer): { body: Buffer; usage: Usage | undefined } {
  return { body: raw, usage: usageOfAnswer(raw) };
}

export const openAiAdapter: Adapter = {
  name: 'openai',
  chatRequest: (b, call) => ({
    url: chatUrl(call.model),
    method: 'POST',
    headers: headers(call.model),
    body: body(b, call),
  }),
  chatResult: (text) => result(text),
  chatResultBytes: resultBytes,
  chatStream: (call) => new OpenAiStream(call.includeUsage),
  embeddingsRequest: (b, m) => ({
    url: joinUrl(m.baseUrl, '/embeddings'),
    method: 'POST',
    headers: headers(m),
    body: JSON.stringify({ ...b, model: m.upstreamModel }),
  }),
  passthroughRequest: (m, path, query) => ({ url: joinUrl(m.baseUrl, path, query), headers: headers(m) }),
  errorMessage: jsonError,
};

function azureUrl(m: ResolvedModel, op: string): URL {
  const deployment = encodeURIComponent(m.endpointName ?? m.upstreamModel);
  const url = joinUrl(m.baseUrl, `/openai/deployments/${deployment}${op}`);
  url.searchParams.set('api-version', m.config.apiVersion ?? AZURE_API_VERSION);
  return url;
}

export const azureOpenAiAdapter: Adapter = {
  name: 'azure-openai-service',
  chatRequest: (b, call) => ({
    url: azureUrl(call.model, '/chat/completions'),
    method: 'POST',
    headers: azureHeaders(call.model),
    body: body(b, call),
  }),
  chatResult: (text) => result(text),
  chatResultBytes: resultBytes,
  chatStream: (call) => new OpenAiStream(call.includeUsage),
  embeddingsRequest: (b, m) => ({
    url: azureUrl(m, '/embeddings'),
    method: 'POST',
    headers: azureHeaders(m),
    body: JSON.stringify({ ...b, model: m.upstreamModel }),
  }),
  passthroughRequest: (m, path, query) => {
    const url = joinUrl(m.baseUrl, path, query);
    if (!url.searchParams.has('api-version'))
      url.searchParams.set('api-version', m.config.apiVersion ?? AZURE_API_VERSION);
    return { url, headers: azureHeaders(m) };
  },
  errorMessage: jsonError,
};
