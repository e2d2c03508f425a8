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
 * MAX_RESPONSE_BYTES (`response_length` still says the whole length).
 *
 * Durable (async-spool.ts): a request is on disk before its 202 and leaves it once its callback was
 * delivered or finally refused; `recover` runs what a stopped or crashed platform left, at least
 * once, under the same id.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { beginRequest, endRequest } from '../replica-load.js';
import type { RunAddress } from '../run-address.js';
import { RunError } from '../run-error.js';
import type { Replica } from '../replica-sets.js';
import type { RunRecord, RunTrigger } from '../run-ports.js';
import type { CallbackPayload } from './callback-signature.js';
import type { CallbackSender, Delivery } from './callback-sender.js';
import { CallbackRefused } from './callback-sender.js';
import { forwardedHeaders, readBody, sendToReplica } from './async-exchange.js';
import type { AsyncSpool, SpooledRequest } from './async-spool.js';

export const DEFAULT_ASYNC_TIMEOUT_SECONDS = 900;
/** Callback retries when the trigger names no `retry`. */
export const DEFAULT_CALLBACK_RETRY = 3;
export const MAX_QUEUED_BYTES = 256 * 1024 * 1024;

export interface AsyncLimits {
  /** Requests running at once per workspace. */
  concurrency: number;
  /** Requests waiting per workspace beyond those running. */
  queue: number;
  maxBodyBytes: number;
}

export interface AsyncRunsDeps {
  /** A ready replica of the record (the gateway's hold), waiting at most until `deadline`. */
  /** `headers`: the request's, which choose its revision and replica (thread, MCP session, cookie). */
  replicaFor(
    addr: RunAddress,
    gone: AbortSignal,
    deadline: number,
    headers?: IncomingHttpHeaders,
  ): Promise<Replica>;
  sender: Pick<CallbackSender, 'check' | 'deliver'>;
  /** Where accepted requests wait on disk until delivered (async-spool.ts). */
  spool: Pick<AsyncSpool, 'save' | 'remove' | 'load'>;
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
  /** The forwarded ones only (async-exchange.ts): what the spool keeps. */
  headers: Record<string, string | string[]>;
  body: Buffer;
  acceptedAt: number;
  deadline: number;
}

interface Lane {
  running: number;
  waiting: Job[];
  /** Accepted, being written to the spool: they hold a place in the queue. */
  saving: number;
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
      headers: forwardedHeaders(req.headers),
      body,
      acceptedAt: at,
      deadline: at + 1000 * (trigger?.timeoutSeconds ?? DEFAULT_ASYNC_TIMEOUT_SECONDS),
    };
    // Its place in the queue is held while it is written: the 202 promises it is on disk.
    const lane = this.lane(addr.workspace);
    this.queuedBytes += body.length;
    lane.saving++;
    try {
      await this.d.spool.save(spooled(job), body);
    } catch (err) {
      this.queuedBytes -= body.length;
      if (lane.running + lane.waiting.length + lane.saving === 1) this.lanes.delete(addr.workspace);
      this.d.logger.error({ err, record: record.name }, 'async request not stored');
      throw new RunError(503, 'the async request could not be stored on this platform; retry shortly', 5);
    } finally {
      lane.saving--;
    }
    this.d.count(record, job.id, at);
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

  /**
   * Queues what the spool holds (a platform's start): each request whose record still exists
   * (same id) runs again under its id, with its trigger's callback; one whose record is gone is
   * dropped. Not counted again (the meter counted it at acceptance). Resolves how many were queued.
   */
  async recover(records: readonly RunRecord[]): Promise<number> {
    const { requests, unreadable } = await this.d.spool.load();
    for (const path of unreadable) this.d.logger.error({ path }, 'async request file unreadable; left as is');
    const byId = new Map(records.map((r) => [r.id, r]));
    const workspaces = new Set<string>();
    let queued = 0;
    for (const { request: s, body } of requests) {
      const record = byId.get(s.recordId);
      if (!record || record.kind !== s.kind) {
        this.d.logger.warn({ id: s.id, record: s.name }, 'async request dropped: its record is gone');
        await this.d.spool.remove(s.id);
        continue;
      }
      const trigger = s.triggerId ? record.triggers?.find((t) => t.id === s.triggerId) : undefined;
      this.queuedBytes += body.length;
      this.lane(record.workspace).waiting.push({
        id: s.id,
        record,
        addr: { kind: record.kind, workspace: record.workspace, name: record.name, path: s.path },
        trigger,
        method: s.method,
        headers: s.headers,
        body,
        acceptedAt: s.acceptedAt,
        deadline: s.deadline,
      });
      workspaces.add(record.workspace);
      queued++;
    }
    for (const ws of workspaces) this.pump(ws);
    return queued;
  }

  /** Stops the background work; requests not delivered stay in the spool for the next start. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.inflight]);
  }

  /** Throws 429 when the workspace's queue is full; makes no lane (a refused caller leaves none). */
  private refuseWhenFull(workspace: string): void {
    const lane = this.lanes.get(workspace) ?? { running: 0, waiting: [], saving: 0 };
    const waiting = lane.waiting.length + lane.saving;
    if (waiting >= this.d.limits.queue && lane.running >= this.d.limits.concurrency) {
      throw new RunError(
        429,
        `workspace ${workspace} has ${lane.running} async requests running and ${waiting} waiting (the most); retry later`,
        5,
      );
    }
  }

  private lane(workspace: string): Lane {
    let lane = this.lanes.get(workspace);
    if (!lane) this.lanes.set(workspace, (lane = { running: 0, waiting: [], saving: 0 }));
    return lane;
  }

  private pump(workspace: string): void {
    const lane = this.lane(workspace);
    // Stopped: the waiting ones stay in the spool for the next start.
    while (
      !this.stopping.signal.aborted &&
      lane.running < this.d.limits.concurrency &&
      lane.waiting.length > 0
    ) {
      const job = lane.waiting.shift()!;
      this.queuedBytes -= job.body.length;
      lane.running++;
      const p = this.run(job)
        .catch((err) => this.d.logger.error({ err, id: job.id }, 'async request failed'))
        .finally(() => {
          lane.running--;
          this.inflight.delete(p);
          if (lane.running === 0 && lane.waiting.length === 0 && lane.saving === 0)
            this.lanes.delete(workspace);
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
    // Stopping: kept in the spool, run again by the next start (its answer here is an abort's).
    if (this.stopping.signal.aborted) return;
    let delivery: Delivery | undefined;
    const url = job.trigger?.callbackUrl;
    if (url) {
      const secret = await this.d.secretOf(job.record, job.trigger!.id);
      delivery = await this.d.sender.deliver(
        url,
        secret,
        result,
        job.trigger?.retry ?? DEFAULT_CALLBACK_RETRY,
        this.stopping.signal,
      );
      if (this.stopping.signal.aborted && !delivery.delivered) return; // the next start delivers
      const log = { id: job.id, record: job.record.name, attempts: delivery.attempts };
      if (delivery.delivered) this.d.logger.info(log, 'async callback delivered');
      else this.d.logger.warn({ ...log, reason: delivery.reason }, 'async callback not delivered');
    }
    await this.d.spool.remove(job.id);
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
      replica = await this.d.replicaFor(job.addr, signal, job.deadline, job.headers);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return payload(err instanceof RunError ? err.status : 503, JSON.stringify({ error: message }));
    }
    beginRequest(replica, this.now()); // counted by the autoscaler like any request (replica-load.ts)
    try {
      const { status, body, length } = await sendToReplica(replica, { ...job, path: job.addr.path }, signal);
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

/** What the spool keeps of a job: enough to run it again (not the record: it is looked up). */
function spooled(job: Job): SpooledRequest {
  return {
    id: job.id,
    kind: job.record.kind,
    workspace: job.record.workspace,
    name: job.record.name,
    recordId: job.record.id,
    path: job.addr.path,
    triggerId: job.trigger?.id,
    method: job.method,
    headers: job.headers,
    acceptedAt: job.acceptedAt,
    deadline: job.deadline,
  };
}
