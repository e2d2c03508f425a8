/**
 * What one provider adapter is (issue 18 "Providers and credentials"): how the OpenAI Chat
 * Completions request becomes the provider's request, how its answer (whole or streamed) becomes
 * an OpenAI answer, where its own API lives for pass-through, and how its errors read.
 */
import type { PolicySpec } from '@tarmac/contract';
import type { UpstreamRequest } from '../upstream.js';

export interface Usage {
  prompt: number;
  completion: number;
  total: number;
}

/** The model as the gateway calls it: record, credentials and base URL, resolved once and cached. */
export interface ResolvedModel {
  workspace: string;
  name: string;
  uuid: string;
  accountId: string;
  enabled: boolean;
  /** `spec.runtime.type`. */
  provider: string;
  /** `spec.runtime.model` (the provider's model name), else the record's name. */
  upstreamModel: string;
  /** `spec.runtime.endpointName` (Azure deployment), when set. */
  endpointName: string | undefined;
  organization: string | undefined;
  apiKey: string | undefined;
  /** The connection's `config` (baseUrl, apiVersion, organization, project…). */
  config: Readonly<Record<string, string>>;
  baseUrl: URL;
  policies: ReadonlyArray<{ name: string; spec: PolicySpec }>;
  adapter: Adapter;
}

/** An OpenAI chat completions request body, as parsed JSON (fields checked by each adapter). */
export type ChatBody = Record<string, unknown> & { messages?: unknown; stream?: unknown };

export interface ChatCall {
  model: ResolvedModel;
  stream: boolean;
  /** The caller asked `stream_options.include_usage`: the usage chunk is theirs to see. */
  includeUsage: boolean;
  /** The request body as the caller sent it (adapters passing it on unchanged send these bytes). */
  raw?: Buffer;
  /** `chatcmpl-…` id and creation second for translated answers. */
  id: string;
  created: number;
}

/** Turns a provider's SSE events into OpenAI chunk payloads (the `data:` of each event). */
export interface StreamTranslator {
  event(name: string | undefined, data: string): string[];
  /** Payloads after the provider's last event (e.g. the usage chunk); `[DONE]` is added by the caller. */
  end(): string[];
  usage(): Usage | undefined;
  /** A provider error event seen mid-stream, as a message. */
  error(): string | undefined;
  /** Characters of generated text and tool arguments streamed (for a provider that sent no usage). */
  streamedChars?(): number;
}

/**
 * Tokens when a provider reports none (a self-hosted server ignoring `include_usage`): about four
 * characters a token, the common rule for English text with OpenAI-style tokenizers. An estimate,
 * so budgets still move; providers that report usage are always taken at their word.
 */
const TEXT_FIELD = /"(?:content|arguments)":"((?:[^"\\]|\\.)*)"/g;

/** Characters of generated text and tool arguments in OpenAI JSON, measured without a parse. */
export function textChars(json: string): number {
  let n = 0;
  for (const m of json.matchAll(TEXT_FIELD)) n += m[1]!.length;
  return n;
}

export function estimateUsage(promptChars: number, completionChars: number): Usage {
  const prompt = Math.ceil(promptChars / 4);
  const completion = Math.ceil(completionChars / 4);
  return { prompt, completion, total: prompt + completion };
}

export interface Adapter {
  /** Name in messages (`anthropic adapter`). */
  readonly name: string;
  /** The provider request; its `headers` a new object per call (the exchange adds Accept to it). */
  chatRequest(body: ChatBody, call: ChatCall): UpstreamRequest;
  /** The provider's JSON answer as OpenAI JSON text, with its usage. */
  chatResult(text: string, call: ChatCall): { body: string; usage: Usage | undefined };
  /** The same from the answer's bytes, for adapters that pass the answer on as it is (no decoding). */
  chatResultBytes?(body: Buffer, call: ChatCall): { body: Buffer; usage: Usage | undefined };
  chatStream(call: ChatCall): StreamTranslator;
  /** Embeddings request, or undefined when the provider has none through this adapter. */
  embeddingsRequest?(body: ChatBody, model: ResolvedModel): UpstreamRequest;
  /** The provider's embeddings answer as OpenAI JSON; absent when it already is OpenAI's. */
  embeddingsResult?(text: string, model: ResolvedModel, request: ChatBody): { body: string; usage: Usage };
  /** The provider's own API: same base, the caller's path, our credentials. */
  passthroughRequest(model: ResolvedModel, path: string, query: string): Omit<UpstreamRequest, 'method'>;
  /** The message of a provider error body. */
  errorMessage(text: string): string | undefined;
}

export function readUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const o = u as Record<string, unknown>;
  const num = (...keys: string[]) => {
    for (const k of keys) if (typeof o[k] === 'number') return o[k];
    return undefined;
  };
  // OpenAI, Anthropic, Gemini shapes.
  const prompt = num('prompt_tokens', 'input_tokens', 'promptTokenCount');
  const completion = num('completion_tokens', 'output_tokens', 'candidatesTokenCount');
  if (prompt === undefined && completion === undefined) return undefined;
  const p =
    (prompt ?? 0) +
    (typeof o.cache_creation_input_tokens === 'number' ? o.cache_creation_input_tokens : 0) +
    (typeof o.cache_read_input_tokens === 'number' ? o.cache_read_input_tokens : 0);
  const c = (completion ?? 0) + (typeof o.thoughtsTokenCount === 'number' ? o.thoughtsTokenCount : 0);
  const total = num('total_tokens', 'totalTokenCount') ?? p + c;
  return { prompt: p, completion: c, total };
}

export function jsonError(text: string): string | undefined {
  try {
    const o = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof o.error === 'string') return o.error;
    if (o.error && typeof o.error.message === 'string') return o.error.message;
    if (typeof o.message === 'string') return o.message;
  } catch {
    // not JSON: the text itself, trimmed
  }
  const t = text.trim();
  return t ? t.slice(0, 500) : undefined;
}

/** `base` + `path`, not doubling a `/v1` the base already ends with. */
export function joinUrl(base: URL, path: string, query = ''): URL {
  const root = base.pathname.replace(/\/+$/, '');
  const rest = root.endsWith('/v1') && path.startsWith('/v1/') ? path.slice(3) : path;
  const url = new URL(base.href);
  url.pathname = `${root}${rest}`;
  url.search = query;
  return url;
}
