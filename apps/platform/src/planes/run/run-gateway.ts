/**
 * The run gateway (issue 16; spec "Inference endpoints"; reference control-plane.md §5.2):
 * `{run_url}/{ws}/agents/{name}[/{path}]` and `{run_url}/{ws}/functions/{name}[/{path}]` (the MCP
 * endpoint is `/mcp`), every method, forwarded to a ready replica byte for byte — streams both
 * ways (SSE, chunked), WebSocket upgrades spliced, every header but hop-by-hop ones and the
 * platform's credentials forwarded (`X-Service-Thread-Id`, `X-Blaxel-Thread-Id`, `Mcp-Session-Id`
 * pass untouched). A raw node handler in front of the management app, like the sandbox and model
 * gateways: the hot path is a map lookup, a cached access check (framework/access-cache.ts) and a
 * pipe — no store read per request.
 *
 * Private by default: a workspace member's API key or JWT (401 without or with a wrong one; 404
 * for another workspace's resource, never a leak); `spec.public: true` skips authentication.
 * A request while no replica is ready is held (framework/held-requests.ts, bounded in number and
 * time, woken by the controller) — never an immediate "starting" 503; disabled, FAILED or gone
 * answer at once. With several revisions taking traffic (`spec.revision`), the revision of each
 * request is chosen by traffic-split.ts (weights, thread hash, sticky cookie).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { AccessCache } from '../../framework/access-cache.js';
import type { StartWaiters } from '../../framework/held-requests.js';
import { affinityKey, sessionKeyOf } from './replica-affinity.js';
import { beginRequest, endRequest } from './replica-load.js';
import { runAddress, type RunAddress } from './run-address.js';
import type { RunController } from './run-controller.js';
import { RunError, sendRunError, upgradeError } from './run-error.js';
import type { Replica } from './replica-sets.js';
import { RUN_SEGMENTS, type Forwarder, type RunRecord } from './run-ports.js';
import {
  chooseRevision,
  first,
  isTarget,
  SessionRevisions,
  stickyCookie,
  type RevisionChoice,
} from './traffic-split.js';
import type { AsyncRuns } from './triggers/async-runs.js';
import { asyncAddress } from './triggers/async-address.js';
import type { TriggerRoutes } from './triggers/trigger-routes.js';
import { HOP_BY_HOP, PLATFORM_CREDENTIALS } from '../../framework/forwarded-headers.js';

export interface RunGatewayDeps {
  controller: Pick<RunController, 'record' | 'readyReplica' | 'ready' | 'pinSession'>;
  access: AccessCache;
  forwarder: Forwarder;
  held: StartWaiters;
  /** Longest a request waits for a replica (TARMAC_RUN_HOLD_SECONDS). */
  holdMs: number;
  logger: Logger;
  now?: () => number;
  /** Trigger paths, looked up before the main URLs (triggers/trigger-routes.ts). */
  triggers?: Pick<TriggerRoutes, 'match'>;
  /** Async requests: http-async trigger paths and `?async=true` (triggers/async-runs.ts). */
  async?: Pick<AsyncRuns, 'accept'>;
}

const LABELS = { agent: 'agent', function: 'function', application: 'application' } as const;
/**
 * What an application's request loses on the way: hop-by-hop headers (RFC 9110 §7.6.1) and the
 * platform's own credential headers. `Authorization` stays: an application is a public web app
 * whose own auth may use it (as a preview's app does), the platform authenticates none of it.
 */
const APP_DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...PLATFORM_CREDENTIALS]);
const target = (replica: Replica, addr: RunAddress) => ({
  host: replica.ip,
  port: replica.port,
  path: addr.path,
  ...(addr.kind === 'application' ? { drop: APP_DROP } : {}),
});
/** Statuses in which a replica is on its way: requests wait for it. */
const COMING = new Set(['DEPLOYING', 'DEPLOYED', 'UPLOADING', 'BUILDING', 'BUILT']);

export class RunGateway {
  /** Which revision made each MCP session (traffic-split.ts): its requests go back there. */
  readonly sessions = new SessionRevisions();

  constructor(private readonly d: RunGatewayDeps) {}

  /** A path-style agent/function address (applications are matched by Host: app-hosts.ts). */
  match(req: IncomingMessage): RunAddress | undefined {
    const url = req.url ?? '/';
    return this.d.triggers?.match(url) ?? runAddress(url);
  }

  async handle(req: IncomingMessage, res: ServerResponse, addr: RunAddress): Promise<void> {
    const later = this.d.async && asyncAddress(addr);
    if (later) {
      try {
        await this.d.async!.accept(req, res, later, await this.authorize(req, later));
      } catch (err) {
        this.log(err);
        if (!res.destroyed) sendRunError(res, err);
      }
      return;
    }
    let admitted: Admitted;
    try {
      admitted = await this.admit(req, addr, closed(res));
    } catch (err) {
      this.log(err);
      if (!res.destroyed) sendRunError(res, err);
      return;
    }
    const { replica, cookie } = admitted;
    const now = this.d.now ?? Date.now;
    beginRequest(replica, now()); // the autoscaler's measure (replica-load.ts)
    try {
      await this.d.forwarder.forward(req, res, {
        ...target(replica, addr),
        appendResponseHeaders: cookie ? { 'set-cookie': cookie } : undefined,
        onResponseHeaders: this.sessionMade(req, replica),
      });
    } finally {
      endRequest(replica, now());
    }
  }

  /**
   * An MCP server makes its session id in its answer (initialize): the revision that made it is
   * remembered (traffic-split.ts SessionRevisions) and, for a request that had no affinity key,
   * the replica that answered is pinned (replica-affinity.ts), so the session's next requests
   * find the same revision, then the same replica.
   */
  private sessionMade(req: IncomingMessage, replica: Replica) {
    const pin = affinityKey(req.headers) === undefined;
    return (headers: IncomingHttpHeaders) => {
      const session = first(headers['mcp-session-id']);
      if (!session) return;
      this.sessions.remember(replica.recordId, session, replica.revision);
      const key = sessionKeyOf(headers);
      if (pin && key) this.d.controller.pinSession(replica, key);
    };
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, addr: RunAddress): Promise<void> {
    let replica: Replica;
    try {
      // A spliced upgrade's answer is the replica's own bytes: it carries no sticky cookie.
      ({ replica } = await this.admit(req, addr, closed(socket)));
    } catch (err) {
      this.log(err);
      if (!socket.destroyed) upgradeError(socket, err);
      return;
    }
    const now = this.d.now ?? Date.now;
    beginRequest(replica, now()); // an open WebSocket counts as in flight until it closes
    try {
      await this.d.forwarder.upgrade(req, socket, head, target(replica, addr));
    } finally {
      endRequest(replica, now());
    }
  }

  /** The revision of a request: the one that made its MCP session, else traffic-split's choice. */
  private choose(record: RunRecord, headers: IncomingHttpHeaders): RevisionChoice {
    const session = first(headers['mcp-session-id']);
    const made = session && this.sessions.revisionOf(record.id, session);
    if (made && isTarget(record, made)) return { revision: made, sticky: true };
    return chooseRevision(record, headers, (this.d.now ?? Date.now)());
  }

  /** A cookie keeping the client on the revision that served it, unless it already holds one. */
  private cookie(
    record: RunRecord,
    addr: RunAddress,
    choice: RevisionChoice,
    served: Replica,
  ): string | undefined {
    const ttl = record.stickySessionTtl ?? 0;
    if (ttl <= 0 || (choice.sticky && served.revision === choice.revision)) return undefined;
    if (!(record.traffic ?? []).some((t) => t.revision === served.revision && t.percent > 0))
      return undefined;
    const path = `/${addr.workspace}/${RUN_SEGMENTS[addr.kind]}/${addr.name}`;
    return stickyCookie(path, served.revision, ttl, (this.d.now ?? Date.now)());
  }

  private log(err: unknown): void {
    if (!(err instanceof RunError)) this.d.logger.error({ err }, 'run gateway error');
  }

  /** Authentication (unless public), then a ready replica: everything before the first byte out. */
  private async admit(req: IncomingMessage, addr: RunAddress, gone: AbortSignal): Promise<Admitted> {
    await this.authorize(req, addr);
    return this.untilReady(addr, gone, undefined, req.headers);
  }

  /**
   * A ready replica for a request accepted earlier (an async one), held until `deadline`; its
   * headers choose the revision and the replica as a synchronous request's would.
   */
  async replicaFor(
    addr: RunAddress,
    gone: AbortSignal,
    deadline: number,
    headers?: IncomingHttpHeaders,
  ): Promise<Replica> {
    return (await this.untilReady(addr, gone, deadline, headers)).replica;
  }

  /**
   * The record, once the caller may use it: a workspace member's token unless the record is public
   * or the request came in on a public trigger's path (reference §5.2; the main URL stays private).
   */
  private async authorize(req: IncomingMessage, addr: RunAddress): Promise<RunRecord> {
    await this.d.controller.ready; // just started: replicas are re-attached by the first pass
    const record = this.d.controller.record(addr.kind, addr.workspace, addr.name);
    // Applications are always public (spec "Application"); an unknown one is a 404, not a 401.
    if (addr.kind !== 'application' && !record?.public && !addr.trigger?.public) {
      const token = bearer(req);
      if (!token)
        throw new RunError(401, 'Missing bearer token: send "Authorization: Bearer <API key or JWT>"');
      if (!(await this.d.access.authenticated(token))) {
        throw new RunError(401, 'Invalid, expired or revoked credentials');
      }
      if (!(await this.d.access.allowed(token, addr.workspace))) throw notFound(addr);
    }
    if (!record) throw notFound(addr);
    return record;
  }

  /**
   * A ready replica for a request, in the order of RunController.readyReplica: the revision it
   * goes to (traffic-split.ts), then its replica in that revision's set (a thread's or MCP
   * session's own one: replica-affinity.ts); and the sticky cookie to set when the record asks for
   * one and the client holds none for that revision. Held (bounded) while no replica is ready.
   */
  private async untilReady(
    addr: RunAddress,
    gone: AbortSignal,
    until?: number,
    headers: IncomingHttpHeaders = {},
  ): Promise<Admitted> {
    const now = this.d.now ?? Date.now;
    const deadline = until ?? now() + this.d.holdMs;
    const affinity = affinityKey(headers);
    const key = `${addr.kind}/${addr.name}`;
    let holding = false;
    try {
      for (;;) {
        const watch = this.d.held.watch(addr.workspace, key); // before the read: no notice lost
        try {
          const record = this.d.controller.record(addr.kind, addr.workspace, addr.name);
          if (!record) throw notFound(addr);
          if (!record.enabled) refuseAtOnce(record); // disabled: not even a replica still stopping
          const choice = this.choose(record, headers);
          // Resumes a replica in STANDBY (one cgroup write), or wakes the chosen revision's set
          // scaled to zero and the request waits below for the replica it starts (idle-policy.ts).
          const replica = this.d.controller.readyReplica(record, choice.revision, affinity);
          if (replica) return { replica, cookie: this.cookie(record, addr, choice, replica) };
          refuseAtOnce(record);
          if (!holding && !(holding = this.d.held.hold())) {
            throw new RunError(
              503,
              `${describe(record)} has no ready replica and ${this.d.held.maxHeld} requests already wait; retry shortly`,
              1,
            );
          }
          const left = deadline - now();
          if (left <= 0 || gone.aborted) {
            throw new RunError(
              503,
              `${describe(record)} has no ready replica after ${Math.round(this.d.holdMs / 1000)} s (status ${record.status}); retry shortly`,
              1,
            );
          }
          await watch.next(left, gone);
        } finally {
          watch.cancel();
        }
      }
    } finally {
      if (holding) this.d.held.release();
    }
  }
}

interface Admitted {
  replica: Replica;
  cookie: string | undefined;
}

/** The states in which waiting cannot help: answered 503 at once, naming the state. */
function refuseAtOnce(record: RunRecord): void {
  if (!record.enabled) {
    const state = record.status === 'DEACTIVATED' ? 'DEACTIVATED' : 'DEACTIVATING';
    throw new RunError(503, `${describe(record)} is ${state} (spec.enabled is false)`);
  }
  if (record.status === 'FAILED') {
    throw new RunError(
      503,
      `${describe(record)} FAILED: ${record.lastMessage ?? 'no replica could start'}`,
      5,
    );
  }
  if (!COMING.has(record.status)) throw new RunError(503, `${describe(record)} is ${record.status}`, 1);
  if (!record.image && record.status !== 'UPLOADING' && record.status !== 'BUILDING') {
    const how = record.kind === 'application' ? 'send spec.revisions[].image' : 'set spec.runtime.image';
    throw new RunError(
      503,
      `${describe(record)} has no image yet: deploy its code (tarmac deploy) or ${how}`,
    );
  }
}

const describe = (r: RunRecord) => `${LABELS[r.kind]} ${r.name}`;
const notFound = (a: RunAddress) =>
  new RunError(404, `${LABELS[a.kind]} ${a.name} not found in workspace ${a.workspace}`);

/** `Authorization: Bearer <t>` (or X-Service-/X-Blaxel-Authorization, reference §5.2). */
function bearer(req: IncomingMessage): string | undefined {
  const h =
    req.headers.authorization ??
    req.headers['x-service-authorization'] ??
    req.headers['x-blaxel-authorization'];
  const v = Array.isArray(h) ? h[0] : h;
  return v ? /^Bearer\s+(\S+)\s*$/i.exec(v)?.[1] : undefined;
}

/** Aborts when the caller's response or socket closes (a held request of a caller who left). */
function closed(stream: { once(event: 'close', f: () => void): unknown }): AbortSignal {
  const controller = new AbortController();
  stream.once('close', () => controller.abort());
  return controller.signal;
}
