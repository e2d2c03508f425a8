/**
 * "May this token use this workspace?", cached briefly: the gateway's hot path must not hash an
 * API key and read memberships on every request to a sandbox. Bounds (issue 19 item 10: a revoked
 * key worked on the sandbox plane for 5 s, an expired one ~2 s past its expiry):
 *  - a revocation notice on the ChangeFeed (framework/revocations.ts) empties the cache at once, in
 *    this process;
 *  - no entry outlives the credential's expiry (`Principal.expiresAtMs`);
 *  - otherwise an entry lives `ttlMs` (1 s): the bound across platform processes, which the
 *    in-process ChangeFeed does not reach.
 * The management plane checks the store on every request and needs none of this.
 *
 * Refresh ahead (issue 20 item 2: the first request after a pause paid the store reads of an
 * expired entry, +3.5 ms): an entry used in the last `refreshWindowMs` (30 s) is re-validated in
 * the background shortly before it expires, so a caller coming back after a pause finds a fresh
 * entry. The bounds above are unchanged — every entry still lives at most `ttlMs` from its last
 * check against the store — only the check moved off the request path. At most `maxRefreshed`
 * entries are kept fresh (most recently used first); the rest expire as before.
 */
import type { Authenticator, Principal, WorkspaceResolver } from '@tarmac/server-kit';
import type { ChangeFeed } from './change-feed.js';
import { onRevocation, type Revocation } from './revocations.js';

export const ACCESS_CACHE_TTL_MS = 1000;
/** How long after its last use an entry is kept fresh in the background. */
export const ACCESS_REFRESH_WINDOW_MS = 30_000;

interface Recent {
  token: string;
  /** Undefined: the principal alone (`authenticated`). */
  workspace: string | undefined;
  usedAt: number;
}

export class AccessCache {
  /** `markedAt`: when `peekAllowed` last marked the entry used (it marks at most every quarter TTL). */
  private readonly decisions = new Map<string, { allowed: boolean; until: number; markedAt?: number }>();
  private readonly principals = new Map<string, { principal: Principal | undefined; until: number }>();
  private readonly listeners = new Set<(r: Revocation) => void>();
  private readonly unsubscribe: () => void;
  /** Bumped by every revocation: a lookup that started before one must not be cached after it. */
  private generation = 0;
  /** Entries used lately, by cache key, least recently used first (Map insertion order). */
  private readonly recent = new Map<string, Recent>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing = false;

  constructor(
    private readonly authenticator: Authenticator,
    private readonly workspaces: WorkspaceResolver,
    private readonly now: () => number,
    private readonly ttlMs = ACCESS_CACHE_TTL_MS,
    private readonly maxEntries = 10_000,
    revocations?: ChangeFeed,
    private readonly refresh: { windowMs: number; maxRefreshed: number } | undefined = undefined,
  ) {
    this.unsubscribe = revocations ? onRevocation(revocations, (r) => this.revoke(r)) : () => undefined;
  }

  /** Starts the background refresh (the gateway's; tests call `refreshDue` with their clock). */
  startRefresh(): void {
    if (!this.refresh || this.refreshTimer) return;
    this.refreshTimer = setInterval(() => void this.refreshDue(), Math.max(50, this.ttlMs / 4));
    this.refreshTimer.unref();
  }

  /**
   * Re-validates, one after another, the recently used entries that expire within half a TTL;
   * forgets the ones unused for longer than the window. Resolves when done.
   */
  async refreshDue(): Promise<void> {
    if (!this.refresh || this.refreshing) return;
    this.refreshing = true;
    try {
      const now = this.now();
      for (const [key, r] of [...this.recent]) {
        if (now - r.usedAt > this.refresh.windowMs) {
          this.recent.delete(key);
          continue;
        }
        const entry = r.workspace === undefined ? this.principals.get(r.token) : this.decisions.get(key);
        if (entry && entry.until - now > this.ttlMs / 2) continue;
        await (
          r.workspace === undefined
            ? this.lookupPrincipal(r.token)
            : this.decide(key, r.token, r.workspace, true)
        ).catch(
          () => undefined, // the store did not answer: the entry expires and a request asks again
        );
      }
    } finally {
      this.refreshing = false;
    }
  }

  private used(key: string, token: string, workspace: string | undefined): void {
    if (!this.refresh) return;
    const now = this.now();
    const seen = this.recent.get(key);
    // Moved to the back at most every quarter TTL: a delete and re-insert per request was ~8 % of
    // the model gateway's CPU at 64 clients, and the order only picks whom to stop refreshing.
    if (seen && now - seen.usedAt < this.ttlMs / 4) return;
    this.recent.delete(key);
    this.recent.set(key, { token, workspace, usedAt: now });
    if (this.recent.size > this.refresh.maxRefreshed) {
      const oldest = this.recent.keys().next().value;
      if (oldest !== undefined) this.recent.delete(oldest);
    }
  }

  /** Forgets every decision (cheap to recompute) and tells the listeners (open-sessions.ts). */
  revoke(r: Revocation): void {
    this.generation++;
    this.decisions.clear();
    this.principals.clear();
    for (const l of this.listeners) l(r);
  }

  /** Called after every revocation this cache sees; returns the function that stops it. */
  onRevoke(listener: (r: Revocation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    clearInterval(this.refreshTimer);
    this.unsubscribe();
    this.listeners.clear();
  }

  /**
   * The principal when both the token and its membership of `workspace` are cached, fresh and
   * allowed — `authenticated` and `allowed` without a promise each (the gateways' hot path);
   * undefined when either needs a lookup (or says no: ask those for the answer).
   */
  peekAllowed(token: string, workspace: string): Principal | undefined {
    const now = this.now();
    const principal = this.principals.get(token);
    if (!principal?.principal || principal.until <= now) return undefined;
    const key = `${workspace}\u0000${token}`;
    const decision = this.decisions.get(key);
    if (!decision?.allowed || decision.until <= now) return undefined;
    if (this.refresh && !(now - (decision.markedAt ?? -Infinity) < this.ttlMs / 4)) {
      decision.markedAt = now;
      this.used(`\u0000${token}`, token, undefined);
      this.used(key, token, workspace);
    }
    return principal.principal;
  }

  async authenticated(token: string): Promise<Principal | undefined> {
    this.used(`\u0000${token}`, token, undefined);
    const hit = this.principals.get(token);
    if (hit && hit.until > this.now()) return hit.principal;
    return this.lookupPrincipal(token);
  }

  private async lookupPrincipal(token: string): Promise<Principal | undefined> {
    const generation = this.generation;
    const principal = await this.authenticator.authenticate(token);
    if (generation === this.generation) {
      this.remember(this.principals, token, { principal, until: this.until(principal) });
    }
    return principal;
  }

  async allowed(token: string, workspace: string): Promise<boolean> {
    const key = `${workspace}\u0000${token}`;
    this.used(key, token, workspace);
    const hit = this.decisions.get(key);
    if (hit && hit.until > this.now()) return hit.allowed;
    return this.decide(key, token, workspace);
  }

  /** `fresh`: ask the store for the principal too (a refresh must not lean on a cached one). */
  private async decide(key: string, token: string, workspace: string, fresh = false): Promise<boolean> {
    const generation = this.generation;
    const cached = fresh ? undefined : this.principals.get(token);
    const principal =
      cached && cached.until > this.now() ? cached.principal : await this.lookupPrincipal(token);
    let allowed = false;
    if (principal) {
      try {
        await this.workspaces.resolve(principal, workspace);
        allowed = true;
      } catch {
        allowed = false; // not a member: 404 like a missing workspace
      }
    }
    if (generation === this.generation) {
      this.remember(this.decisions, key, { allowed, until: this.until(principal) });
    }
    return allowed;
  }

  /** Now + TTL, but never past the credential's own expiry. */
  private until(principal: Principal | undefined): number {
    const ttl = this.now() + this.ttlMs;
    return principal?.expiresAtMs !== undefined ? Math.min(ttl, principal.expiresAtMs) : ttl;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= this.maxEntries) map.clear(); // crude bound; entries are cheap to recompute
    map.set(key, value);
  }
}
