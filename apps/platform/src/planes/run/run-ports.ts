/**
 * What the run plane needs of other planes, declared here and handed in by the composition root
 * (compose.ts; ARCHITECTURE.md beside this file): the catalogue's agent and function records, the
 * sandbox plane's engine (same isolation, egress and image store as sandboxes and job tasks), the
 * egress defaults of a container, byte-for-byte forwarding, and the held-request waiters. The plane
 * constructs none of them.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Engine, HostFile, SandboxInfo } from '@tarmac/engine';

/** The kinds served here (stored kind) and their run-URL segment (applications: their own host). */
export type RunKind = 'agent' | 'function' | 'application';
export const RUN_SEGMENTS: Record<RunKind, string> = {
  agent: 'agents',
  function: 'functions',
  application: 'applications',
};

/**
 * An agent, function or application as the run plane sees it. `revision` is the newest of the record's
 * `system.revisions` (the catalogue writes one on every create, update and good build): the
 * replica set a request goes to belongs to one revision (ARCHITECTURE.md "Seams").
 */
export interface RunRecord {
  id: string;
  kind: RunKind;
  workspace: string;
  name: string;
  status: string;
  enabled: boolean;
  public: boolean;
  /** `spec.runtime.image` (a prebuilt or built ref, resolved per workspace), when set. */
  image: string | undefined;
  memoryMB: number;
  /** Where the workload listens (PORT): 8080, or an application's `spec.port`. */
  port: number;
  /** Hosts an application's `spec.urls[]` claim (app-hosts.ts routes them); none otherwise. */
  hosts: readonly string[];
  /**
   * `spec.runtime.minScale` / `maxScale` (reference control-plane.md §2.1: "0 means scale to
   * zero"; unset min is 0). The autoscaler runs [max(minScale, 1), maxScale] replicas while a set
   * is awake (autoscaler.ts); the first minScale replicas of a set are never frozen nor stopped
   * for idleness (idle-policy.ts).
   */
  minScale: number;
  maxScale: number;
  revision: string;
  /** The newest event's message (FAILED reasons reach held requests). */
  lastMessage: string | undefined;
  /** Enabled `http`/`http-async` triggers (ARCHITECTURE.md "Triggers"). */
  triggers?: RunTrigger[];
}

/**
 * A trigger as the run plane serves it (reference control-plane.md §2.5, §5.2, §5.3). The
 * callback secret is not here: it stays sealed in the record until a callback is signed
 * (`RunCatalogue.callbackSecret`).
 */
export interface RunTrigger {
  id: string;
  type: 'http' | 'http-async';
  /** `configuration.path`, mounted at `{run_url}/{ws}{path}`. */
  path: string | undefined;
  /** `authenticationType: public`: the trigger's path needs no token. */
  public: boolean;
  callbackUrl: string | undefined;
  /** Callback retries after the first attempt. */
  retry: number | undefined;
  /** Seconds an async request may take from its acceptance (at most 900). */
  timeoutSeconds: number | undefined;
}

export interface RunCatalogue {
  /** Every agent, function and application that is not terminated (envs stay sealed). */
  list(): Promise<RunRecord[]>;
  /**
   * The env a replica of this record gets, secrets opened: `runtime.envs`, then (functions) each
   * integration connection's config and secret keys under their own names.
   */
  envOf(record: RunRecord): Promise<Record<string, string>>;
  /**
   * Writes status + an event when the record still has this revision and another status
   * (idempotent: the same status is not written twice). Resolves false when nothing was written.
   */
  setStatus(record: RunRecord, status: string, message: string): Promise<boolean>;
  /** A trigger's `callbackSecret`, opened (only to sign one callback); undefined when it has none. */
  callbackSecret?(record: RunRecord, triggerId: string): Promise<string | undefined>;
  /**
   * Writes an event at the record's current status (STANDBY, stopped for idleness, woken: the
   * status stays DEPLOYED) when the record still has this revision.
   */
  note(record: RunRecord, message: string): Promise<void>;
}

/** The engine calls a replica needs (the sandbox plane's engine). */
export type ReplicaEngine = Pick<
  Engine,
  'createSandbox' | 'inspect' | 'stopSandbox' | 'deleteSandbox' | 'readLog'
> & {
  list(): Promise<SandboxInfo[]>;
  ensureImage?: Engine['ensureImage'];
  /** The cgroup freezer (STANDBY, idle-policy.ts); resolves once every process is frozen. */
  freeze(id: string): Promise<void>;
  /** Synchronous on purpose: the resume runs on a request's path (one cgroup write). */
  thawSync(id: string): void;
  /** Back to the memory-proportional CPU quota once a replica answers (startup boost over). */
  endCpuBoost(id: string): void;
};

export interface ReplicaSetup {
  /** Egress proxy env (with the replica's own proxy credentials) and CA files, like a sandbox's. */
  defaults(credentialId: string): Promise<{ env: Record<string, string>; files: HostFile[] }>;
  /** The engine ref an image reference names in a workspace, undefined when it may not use it. */
  resolveImage(workspace: string, ref: string): Promise<string | undefined>;
}

export interface ForwardTarget {
  host: string;
  port: number;
  path: string;
  /** Request headers not forwarded (default: hop-by-hop and the platform's credentials). */
  drop?: ReadonlySet<string>;
  /** Told the upstream's response headers before they are sent on (an MCP session to pin). */
  onResponseHeaders?: (headers: IncomingHttpHeaders) => void;
}

/** Streams a request to a replica and its answer back (the sandbox gateway's proxy). */
export interface Forwarder {
  forward(req: IncomingMessage, res: ServerResponse, to: ForwardTarget): Promise<void>;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, to: ForwardTarget): Promise<void>;
  /**
   * Closes the idle keep-alive connections to one upstream. Before a freeze: the workload's own
   * keep-alive timers expire while it is frozen and fire the moment it thaws, racing the request
   * that thawed it on a reused connection (a reset); a fresh connection has no such timer.
   */
  dropIdle?(to: { host: string; port: number }): void;
}
