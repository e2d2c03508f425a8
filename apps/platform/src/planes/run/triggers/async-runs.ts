/**
 * Async requests (issue 16; reference control-plane.md §5.3): a call to an `http-async` trigger's
 * path, or to an agent's URL with `?async=true`, is answered at once — 202
 * `{"success": true, "id": "<request id>"}` — and run against the agent in the background: held
 * for a ready replica like any request, then forwarded with the caller's method, path, headers
 * (minus the platform's credentials) and body, for at most the trigger's `timeout` (seconds, ≤ 900,
 * default 900) from acceptance. Its result is POSTed to the trigger's `callbackUrl`, signed
 * (callback-signature.ts), retried per `retry` (callback-sender.ts). Each accepted request is one
 * `agent_async_requests_count` (the meter, through `count`).
 *
 * Bounded (ARCHITECTURE.md "Triggers"): the body at most `maxBodyBytes` (413 beyond), per
 * workspace at most `concurrency` running and `queue` waiting (429 + Retry-After beyond), all
 * workspaces' waiting bodies at most MAX_QUEUED_BYTES (503), the captured answer at most
 * MAX_RESPONSE_BYTES (`response_length` still says the whole length). Kept in memory: a platform
 * restart loses the requests not yet delivered (ARCHITECTURE.md "Not done").
 */
import { randomUUID } from 'node:crypto';
import { request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { affinityKey } from '../replica-affinity.js';
import { beginRequest, endRequest } from '../replica-load.js';
import type { RunAddress } from '../run-address.js';
import { RunError } from '../run-error.js';
import type { Replica } from '../replica-sets.js';
import type { RunRecord, RunTrigger } from '../run-ports.js';
import type { CallbackPayload } from './callback-signature.js';
import type { CallbackSender, Delivery } from './callback-sender.js';
import { CallbackRefused } from './callback-sender.js';

export const DEFAULT_ASYNC_TIMEOUT_SECONDS = 900;
/** Callback retries when the trigger names no `retry`. */
export const DEFAULT_CALLBACK_RETRY = 3;
export const MAX_RESPONSE_BYTES = 1024 * 1024;
export const MAX_QUEUED_BYTES = 256 * 1024 * 1024;

/** Request headers not forwarded: hop-by-hop and the platform's credentials (as the proxy). */
const DROP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'trailer',
  'host',
  'content-length',
  'authorization',
  'x-service-authorization',
  'x-blaxel-authorization',
]);

export interface AsyncLimits {
  /** Requests running at once per workspace. */
  concurrency: number;
  /** Requests waiting per workspace beyond those running. */
  queue: number;
  maxBodyBytes: number;
}

export interface AsyncRunsDeps {
  /** A ready replica of the record (the gateway's hold), waiting at most until `deadline`. */
  /** `affinity`: the request's thread or MCP session key (replica-affinity.ts). */
  replicaFor(addr: RunAddress, gone: AbortSignal, deadline: number, affinity?: string): Promise<Replica>;
  sender: Pick<CallbackSender, 'check' | 'deliver'>;
  secretOf(record: RunRecord, triggerId: string): Promise<string | undefined>;
  /** One agent_async_requests_count for this request (the meter; idempotent per id). */
  count(record: RunRecord, requestId: string, at: number): void;
  limits: AsyncLimits;
  logger: Logger;
  now?: () => number;
  /** Told when a request's delivery ended (tests, logs). */
  onDone?: (id: string, result: CallbackPayload, delivery: Delivery | undefined) => void;
}

interface Job {
  id: string;
  record: RunRecord;
  addr: RunAddress;
  trigger: RunTrigger | undefined;
  method: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  deadline: number;
}

interface Lane {
  running: number;
  waiting: Job[];
}

export class AsyncRuns {
  private readonly lanes = new Map<string, Lane>();
  private queuedBytes = 0;
  private readonly stopping = new AbortController();
  private readonly inflight = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly d: AsyncRunsDeps) {
    this.now = d.now ?? Date.now;
  }

  /** Accepts an authorized async request: checks, reads the body, queues, answers 202. */
  async accept(
    req: IncomingMessage,
    res: ServerResponse,
    addr: RunAddress,
    record: RunRecord,
  ): Promise<void> {
    const trigger = addr.trigger ?? record.triggers?.find((t) => t.type === 'http-async');
    if (trigger?.callbackUrl) {
      try {
        await this.d.sender.check(trigger.callbackUrl);
      } catch (err) {
        // A name that does not resolve now may later: the delivery's retries decide. A refused
        // destination never becomes allowed: the caller learns it at once.
        const log = { record: record.name, trigger: trigger.id, err };
        if (!(err instanceof CallbackRefused)) this.d.logger.warn(log, 'async callback host unresolved now');
        else {
          this.d.logger.warn(log, 'async callback refused');
          throw new RunError(403, err.message);
        }
      }
    }
    if (!record.enabled) {
      // Nothing to run it on: refused at once, not counted (the sync path answers the same).
      throw new RunError(503, `agent ${record.name} is ${record.status} (spec.enabled is false)`);
    }
    this.refuseWhenFull(addr.workspace); // before reading the body: a full queue costs nothing
    const body = await readBody(req, this.d.limits.maxBodyBytes);
    this.refuseWhenFull(addr.workspace); // others may have queued meanwhile
    const lane = this.lane(addr.workspace);
    if (this.queuedBytes + body.length > MAX_QUEUED_BYTES) {
      throw new RunError(503, 'too many async request bodies wait on this platform; retry shortly', 5);
    }
    const at = this.now();
    const job: Job = {
      id: randomUUID(),
      record,
      addr,
      trigger,
      method: req.method ?? 'POST',
      headers: req.headers,
      body,
      deadline: at + 1000 * (trigger?.timeoutSeconds ?? DEFAULT_ASYNC_TIMEOUT_SECONDS),
    };
    this.d.count(record, job.id, at);
    this.queuedBytes += body.length;
    lane.waiting.push(job);
    const answer = JSON.stringify({ success: true, id: job.id });
    res
      .writeHead(202, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(answer)),
        'x-service-request-id': job.id,
      })
      .end(answer);
    this.pump(addr.workspace);
  }

  /** Stops the background work (requests not delivered are lost: ARCHITECTURE.md). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.inflight]);
  }

  private refuseWhenFull(workspace: string): Lane {
    const lane = this.lanes.get(workspace) ?? { running: 0, waiting: [] };
    if (lane.waiting.length >= this.d.limits.queue && lane.running >= this.d.limits.concurrency) {
      throw new RunError(
        429,
        `workspace ${workspace} has ${lane.running} async requests running and ${lane.waiting.length} waiting (the most); retry later`,
        5,
      );
    }
    return lane;
  }

  private lane(workspace: string): Lane {
    let lane = this.lanes.get(workspace);
    if (!lane) this.lanes.set(workspace, (lane = { running: 0, waiting: [] }));
    return lane;
  }

  private pump(workspace: string): void {
    const lane = this.lane(workspace);
    while (lane.running < this.d.limits.concurrency && lane.waiting.length > 0) {
      const job = lane.waiting.shift()!;
      this.queuedBytes -= job.body.length;
      lane.running++;
      const p = this.run(job)
        .catch((err) => this.d.logger.error({ err, id: job.id }, 'async request failed'))
        .finally(() => {
          lane.running--;
          this.inflight.delete(p);
          if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(workspace);
          else this.pump(workspace);
        });
      this.inflight.add(p);
    }
  }

  private async run(job: Job): Promise<void> {
    const signal = AbortSignal.any([
      this.stopping.signal,
      AbortSignal.timeout(Math.max(1, job.deadline - this.now())),
    ]);
    const result = await this.call(job, signal);
    let delivery: Delivery | undefined;
    const url = job.trigger?.callbackUrl;
    if (url && !this.stopping.signal.aborted) {
      const secret = await this.d.secretOf(job.record, job.trigger!.id);
      delivery = await this.d.sender.deliver(
        url,
        secret,
        result,
        job.trigger?.retry ?? DEFAULT_CALLBACK_RETRY,
        this.stopping.signal,
      );
      const log = { id: job.id, record: job.record.name, attempts: delivery.attempts };
      if (delivery.delivered) this.d.logger.info(log, 'async callback delivered');
      else this.d.logger.warn({ ...log, reason: delivery.reason }, 'async callback not delivered');
    }
    this.d.onDone?.(job.id, result, delivery);
  }

  /** The agent's answer as the callback's payload; failures become 502/503/504 payloads. */
  private async call(job: Job, signal: AbortSignal): Promise<CallbackPayload> {
    const payload = (status: number, body: string, length = Buffer.byteLength(body)): CallbackPayload => ({
      status_code: status,
      response_body: body,
      response_length: length,
      timestamp: Math.floor(this.now() / 1000),
      request_id: job.id,
    });
    let replica: Replica;
    try {
      // A thread's async request reaches the thread's replica, like a synchronous one.
      replica = await this.d.replicaFor(job.addr, signal, job.deadline, affinityKey(job.headers));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return payload(err instanceof RunError ? err.status : 503, JSON.stringify({ error: message }));
    }
    beginRequest(replica, this.now()); // counted by the autoscaler like any request (replica-load.ts)
    try {
      const { status, body, length } = await send(replica, job, signal);
      return payload(status, body, length);
    } catch (err) {
      const timedOut = signal.aborted && !this.stopping.signal.aborted;
      const message = timedOut
        ? "the agent did not answer within the trigger's timeout"
        : `replica unreachable: ${err instanceof Error ? err.message : String(err)}`;
      return payload(timedOut ? 504 : 502, JSON.stringify({ error: message }));
    } finally {
      endRequest(replica, this.now());
    }
  }
}

/** The request body, refused with 413 beyond `max` bytes (before reading it when declared). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return Promise.reject(tooLarge(max));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.destroy();
        reject(tooLarge(max));
      } else chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

const tooLarge = (max: number) =>
  new RunError(413, `an async request body may be at most ${max} bytes (TARMAC_RUN_ASYNC_MAX_BODY_KB)`);

/** One HTTP exchange with the replica; the answer captured up to MAX_RESPONSE_BYTES. */
function send(
  replica: Replica,
  job: Job,
  signal: AbortSignal,
): Promise<{ status: number; body: string; length: number }> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(job.headers)) if (v !== undefined && !DROP.has(k)) headers[k] = v;
  headers['content-length'] = String(job.body.length);
  headers['x-service-request-id'] = job.id;
  return new Promise((resolve, reject) => {
    const req = request(
      { host: replica.ip, port: replica.port, path: job.addr.path, method: job.method, headers, signal },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        let length = 0;
        res.on('data', (c: Buffer) => {
          length += c.length;
          if (kept < MAX_RESPONSE_BYTES) {
            const part = c.subarray(0, MAX_RESPONSE_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
        });
        res.once('end', () =>
          resolve({ status: res.statusCode ?? 502, body: Buffer.concat(chunks).toString('utf8'), length }),
        );
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(job.body);
  });
}
