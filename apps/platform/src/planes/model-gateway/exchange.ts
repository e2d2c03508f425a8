/**
 * One call through the gateway: the provider request an adapter builds, the upstream answer turned
 * into the caller's (whole or streamed), the provider's errors turned into OpenAI-shaped ones, and
 * the usage read on the way (issue 18).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  estimateUsage,
  readUsage,
  textChars,
  type ChatBody,
  type ChatCall,
  type ResolvedModel,
  type Usage,
} from './adapters/adapter.js';
import { GatewayError } from './gateway-error.js';
import { SseParser } from './sse.js';
import type { CancelSignal, Upstream, UpstreamResponse } from './upstream.js';

export interface Outcome {
  status: number;
  usage: Usage | undefined;
}

/** Caller headers never sent upstream: credentials, hop-by-hop, the platform's own. */
const DROPPED = new Set([
  'authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'accept-encoding',
  'x-service-authorization',
  'x-blaxel-authorization',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-real-ip',
]);
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);
/** JSON bodies larger than this are not read for usage (pass-through only). */
const MAX_SNIFF = 4 * 1024 * 1024;

export class Exchange {
  constructor(
    private readonly upstream: Upstream,
    private readonly m: ResolvedModel,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly signal: CancelSignal,
  ) {}

  async chat(raw: Buffer, id: string): Promise<Outcome> {
    const body = parseObject(raw);
    const stream = body.stream === true;
    const so = body.stream_options as { include_usage?: unknown } | undefined;
    const call: ChatCall = {
      model: this.m,
      stream,
      includeUsage: stream && so?.include_usage === true,
      raw,
      id,
      created: Math.floor(Date.now() / 1000),
    };
    const up = await this.send(this.m.adapter.chatRequest(body, call));
    if (!stream) {
      const answer = await readBytes(up);
      let out: { body: string | Buffer; usage: Usage | undefined };
      try {
        const bytes = this.m.adapter.chatResultBytes;
        out = bytes ? bytes(answer, call) : this.m.adapter.chatResult(answer.toString('utf8'), call);
      } catch {
        throw new GatewayError(502, `the ${this.m.adapter.name} provider answered a body that is not JSON`);
      }
      this.res.writeHead(200, [
        'content-type',
        'application/json',
        'content-length',
        String(typeof out.body === 'string' ? Buffer.byteLength(out.body) : out.body.length),
      ]);
      this.res.end(out.body);
      const usage =
        out.usage ??
        estimateUsage(JSON.stringify(body.messages ?? '').length, textChars(out.body.toString()));
      return { status: 200, usage };
    }
    const t = this.m.adapter.chatStream(call);
    this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // The head leaves with the first events when the provider sent them together: one write and
    // one wake-up of the caller before its first token, not two (on a 2-core host every extra
    // wake-up is a chance to lose the core; bench/model-gateway.ts, streaming TTFT p99). When the
    // provider makes us wait, the head goes at once, so the caller sees the 200 as early as the
    // provider's. `headersSent` is true from writeHead on, before anything left: hence `sent`.
    let sent = false;
    const flushHead = () => {
      if (!sent) this.res.flushHeaders();
      sent = true;
    };
    let pending = '';
    const parser = new SseParser((event, data) => {
      for (const out of t.event(event, data)) pending += `data: ${out}\n\n`;
    });
    try {
      for await (const chunk of up.body.chunks(flushHead)) {
        parser.push(chunk);
        if (pending) {
          this.res.write(pending);
          sent = true;
          pending = '';
        }
      }
    } catch {
      // upstream cut the stream (or the caller left): what arrived was sent; say so below
      if (this.signal.aborted) return { status: 499, usage: t.usage() };
    }
    parser.end();
    const failed = t.error();
    if (failed) pending += `data: ${new GatewayError(502, `${this.m.adapter.name}: ${failed}`).body()}\n\n`;
    for (const out of t.end()) pending += `data: ${out}\n\n`;
    this.res.end(`${pending}data: [DONE]\n\n`);
    const usage =
      t.usage() ?? estimateUsage(JSON.stringify(body.messages ?? '').length, t.streamedChars?.() ?? 0);
    return { status: failed ? 502 : 200, usage };
  }

  async embeddings(raw: Buffer): Promise<Outcome> {
    const build = this.m.adapter.embeddingsRequest;
    if (!build)
      throw new GatewayError(
        404,
        `the ${this.m.adapter.name} adapter has no embeddings endpoint; call the provider's own API under the model's URL`,
      );
    const request = parseObject(raw);
    const up = await this.send(build(request, this.m));
    let text = await readText(up);
    let usage: Usage | undefined;
    const translate = this.m.adapter.embeddingsResult;
    if (translate) {
      ({ body: text, usage } = translate(text, this.m, request));
    } else {
      try {
        usage = readUsage((JSON.parse(text) as { usage?: unknown }).usage);
      } catch {
        usage = undefined;
      }
    }
    this.res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    this.res.end(text);
    return { status: 200, usage };
  }

  /** The provider's own API: caller's method, path, body and headers; our credentials. */
  async passthrough(raw: Buffer, path: string, query: string): Promise<Outcome> {
    if (escapesBase(path))
      throw new GatewayError(400, 'the path must not contain "." or ".." segments', 'path', 'invalid_path');
    const target = this.m.adapter.passthroughRequest(this.m, path, query);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.req.headers)) {
      if (v === undefined || DROPPED.has(k) || k.startsWith('x-tarmac-')) continue;
      headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    const method = this.req.method ?? 'GET';
    const up = await this.upstream.send(
      {
        url: target.url,
        method,
        headers: { ...headers, ...target.headers, 'accept-encoding': 'identity' },
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: raw }),
      },
      this.signal,
    );
    const status = up.statusCode;
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
    this.res.writeHead(status, out);
    const sniff = new UsageSniffer(String(up.headers['content-type'] ?? ''));
    try {
      for await (const chunk of up.body) {
        sniff.push(chunk);
        this.res.write(chunk);
      }
    } catch {
      if (this.signal.aborted) return { status: 499, usage: sniff.usage() };
    }
    this.res.end();
    return { status, usage: sniff.usage() };
  }

  /** The upstream response when it succeeded; its error as an OpenAI-shaped one otherwise. */
  private async send(r: Parameters<Upstream['send']>[0]): Promise<UpstreamResponse> {
    // The adapter built this call's own headers object: the caller's Accept is added in place.
    r.headers.accept = this.req.headers.accept ?? '*/*';
    const up = await this.upstream.send(r, this.signal);
    const status = up.statusCode;
    if (status < 400) return up;
    const text = await readText(up).catch(() => '');
    const message = this.m.adapter.errorMessage(text) ?? `HTTP ${status}`;
    const retryAfter = up.headers['retry-after'];
    throw new GatewayError(
      status >= 400 && status <= 599 ? status : 502,
      `${this.m.adapter.name} provider: ${message}`,
      null,
      status === 429 ? 'rate_limit_exceeded' : 'upstream_error',
      typeof retryAfter === 'string' ? { 'retry-after': retryAfter } : {},
    );
  }
}

function parseObject(raw: Buffer): ChatBody {
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new GatewayError(400, 'request body must be JSON', null, 'invalid_json');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new GatewayError(400, 'request body must be a JSON object', null, 'invalid_json');
  return v as ChatBody;
}

async function readText(res: UpstreamResponse): Promise<string> {
  return (await readBytes(res)).toString('utf8');
}

async function readBytes(res: UpstreamResponse): Promise<Buffer> {
  try {
    return await res.body.bytes();
  } catch {
    throw new GatewayError(502, 'the provider closed the connection before its answer was complete');
  }
}

/**
 * A `.` or `..` segment, plain or percent-encoded: URL parsing would resolve it and step out of the
 * base URL's path (e.g. from `https://proxy/team-a/v1` to `/team-b`) with the platform's key.
 */
export function escapesBase(path: string): boolean {
  return path.split('/').some((segment) => {
    let s = segment;
    try {
      s = decodeURIComponent(segment);
    } catch {
      return true; // malformed escapes: refuse rather than guess
    }
    return s === '.' || s === '..' || s.includes('/') || s.includes('\\');
  });
}

/** Usage in a pass-through answer: a JSON body's `usage`/`usageMetadata`, or SSE events carrying them. */
export class UsageSniffer {
  private prompt = 0;
  private completion = 0;
  private total: number | undefined;
  private seen = false;
  private json: Buffer[] | undefined;
  private size = 0;
  private readonly sse: SseParser | undefined;

  constructor(contentType: string) {
    if (contentType.includes('text/event-stream'))
      this.sse = new SseParser((_e, data) => data.includes('sage') && this.take(data));
    else if (contentType.includes('json')) this.json = [];
  }

  push(chunk: Buffer): void {
    if (this.sse) return this.sse.push(chunk);
    if (!this.json) return;
    this.size += chunk.length;
    if (this.size > MAX_SNIFF) this.json = undefined;
    else this.json.push(chunk);
  }

  usage(): Usage | undefined {
    if (this.sse) this.sse.end();
    if (this.json) {
      this.take(Buffer.concat(this.json).toString('utf8'));
      this.json = undefined;
    }
    if (!this.seen) return undefined;
    return {
      prompt: this.prompt,
      completion: this.completion,
      total: this.total ?? this.prompt + this.completion,
    };
  }

  private take(text: string): void {
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    const message = o.message as { usage?: unknown } | undefined;
    const u = readUsage(o.usage ?? o.usageMetadata ?? message?.usage);
    if (!u) return;
    this.seen = true;
    // Anthropic sends input tokens at the start and cumulative output tokens later; others repeat all.
    this.prompt = Math.max(this.prompt, u.prompt);
    if (u.completion > 0 || this.completion === 0) this.completion = u.completion;
    this.total = Math.max(u.total, this.prompt + this.completion);
  }
}
