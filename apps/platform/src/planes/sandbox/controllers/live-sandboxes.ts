/**
 * The DEPLOYED sandboxes of this platform process, in memory: what the gateway needs on its hot
 * path (name -> address, current state) without a database read per request. The lifecycle
 * controller adds an entry when a sandbox becomes DEPLOYED (or is re-attached after a restart) and
 * removes it when the sandbox fails or is deleted; the ChangeFeed drives those reconciles, so the
 * map follows the store within one reconcile.
 */
export interface LiveSandbox {
  /** Record id (resources table). */
  readonly id: string;
  readonly workspace: string;
  readonly name: string;
  readonly engineId: string;
  readonly ip: string;
  state: 'RUNNING' | 'STANDBY';
  /** Epoch ms its container was created, sandboxd's start (standby.ts: no freeze before minAgeMs). */
  readonly bootedMs: number;
  /** Epoch ms of the last request that reached the sandbox. */
  lastUsedMs: number;
  /** lastUsedMs as last written to the store (writes are batched, spec'd "every few seconds"). */
  lastUsedWrittenMs: number;
  /** Requests and WebSockets being proxied right now; a sandbox with any is not idle. */
  inflight: number;
  /** A freeze is under way (between the freezer write and the store write). */
  freezing: boolean;
  /** Bookkeeping to do once nothing is in flight (standby.ts: the record of a resume). */
  whenIdle?: (() => void) | undefined;
}

/**
 * The end of a request or session counted in `inflight`: the sandbox was used until `now`, and
 * the last one out runs `whenIdle` — after the exchange, never on its path.
 */
export function released(entry: LiveSandbox, now: number): void {
  entry.inflight--;
  entry.lastUsedMs = Math.max(entry.lastUsedMs, now);
  const idle = entry.inflight === 0 ? entry.whenIdle : undefined;
  if (!idle) return;
  entry.whenIdle = undefined;
  setImmediate(idle);
}

export class LiveSandboxes {
  private readonly byName = new Map<string, LiveSandbox>();
  private readonly byId = new Map<string, LiveSandbox>();

  get(workspace: string, name: string): LiveSandbox | undefined {
    return this.byName.get(key(workspace, name));
  }

  getById(id: string): LiveSandbox | undefined {
    return this.byId.get(id);
  }

  add(entry: LiveSandbox): void {
    this.remove(entry.id);
    this.byName.set(key(entry.workspace, entry.name), entry);
    this.byId.set(entry.id, entry);
  }

  remove(id: string): LiveSandbox | undefined {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    this.byId.delete(id);
    if (this.byName.get(key(entry.workspace, entry.name)) === entry) {
      this.byName.delete(key(entry.workspace, entry.name));
    }
    return entry;
  }

  all(): LiveSandbox[] {
    return [...this.byId.values()];
  }
}

const key = (workspace: string, name: string) => `${workspace}\u0000${name}`;
