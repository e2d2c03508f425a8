/**
 * OpenAI embeddings on Gemini (issue 18: "`POST .../embeddings` where the provider has them"):
 * `{input, model}` → `POST {base}/v1beta/models/{model}:batchEmbedContents` with one request per
 * input string (Gemini's REST reference, `models.batchEmbedContents`); `{embeddings: [{values}]}`
 * → `{object: "list", data: [{object: "embedding", index, embedding}], model, usage}`.
 * Gemini reports no token usage for embeddings: usage is estimated like any answer without it.
 */
import { estimateUsage } from './adapter.js';
import type { ChatBody, ResolvedModel, Usage } from './adapter.js';
import type { UpstreamRequest } from '../upstream.js';
import { GatewayError, unsupportedField } from '../gateway-error.js';

/** Fields that do not change the answer or that Gemini takes (`dimensions` → outputDimensionality). */
const HANDLED = new Set(['input', 'model', 'user', 'encoding_format', 'dimensions']);

/** Most inputs in one call: Gemini's batch limit. */
export const GEMINI_EMBED_BATCH_MAX = 100;

function inputs(b: ChatBody): string[] {
  const input = b.input;
  const list = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string')) {
    throw new GatewayError(400, 'input must be a string or a non-empty array of strings', 'input');
  }
  if (list.length > GEMINI_EMBED_BATCH_MAX) {
    throw new GatewayError(400, `input has more than ${GEMINI_EMBED_BATCH_MAX} strings`, 'input');
  }
  return list as string[];
}

export function geminiEmbeddingsRequest(
  b: ChatBody,
  m: ResolvedModel,
  url: URL,
  headers: Record<string, string>,
): UpstreamRequest {
  for (const k of Object.keys(b)) if (!HANDLED.has(k)) throw unsupportedField(k, 'gemini');
  // OpenAI's clients ask base64 by default (little-endian float32s); both are produced here.
  if (b.encoding_format !== undefined && b.encoding_format !== 'float' && b.encoding_format !== 'base64') {
    throw unsupportedField('encoding_format', 'gemini', 'other than "float" or "base64" is not supported');
  }
  const dims = b.dimensions;
  if (dims !== undefined && (typeof dims !== 'number' || !Number.isInteger(dims) || dims < 1)) {
    throw new GatewayError(400, 'dimensions must be a positive integer', 'dimensions');
  }
  const model = `models/${m.upstreamModel}`;
  const requests = inputs(b).map((text) => ({
    model,
    content: { parts: [{ text }] },
    ...(dims !== undefined ? { outputDimensionality: dims } : {}),
  }));
  return { url, method: 'POST', headers, body: JSON.stringify({ requests }) };
}

export function geminiEmbeddingsResult(
  text: string,
  m: ResolvedModel,
  request: ChatBody,
): { body: string; usage: Usage } {
  let values: number[][];
  try {
    const o = JSON.parse(text) as { embeddings?: Array<{ values?: number[] }> };
    values = (o.embeddings ?? []).map((e) => e.values ?? []);
  } catch {
    throw new GatewayError(502, 'gemini: the embeddings answer is not JSON');
  }
  const chars = inputs(request).reduce((n, s) => n + s.length, 0);
  const usage = estimateUsage(chars, 0);
  const body = JSON.stringify({
    object: 'list',
    data: values.map((v, index) => ({
      object: 'embedding',
      index,
      embedding:
        request.encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v,
    })),
    model: m.upstreamModel,
    usage: { prompt_tokens: usage.prompt, total_tokens: usage.total },
  });
  return { body, usage };
}
