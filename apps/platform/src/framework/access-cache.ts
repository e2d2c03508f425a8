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
 */
import type { Authenticator, Principal, WorkspaceResolver } from '@tarmac/server-kit';
import type { ChangeFeed } from './change-feed.js';
import { onRevocation, type Revocation } from './revocations.js';

export const ACCESS_CACHE_TTL_MS = 1000;

export class AccessCache {
  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();
  private readonly principals = new Map<string, { principal: Principal | undefined; until: number }>();
  private readonly listeners = new Set<(r: Revocation) => void>();
  private readonly unsubscribe: () => void;
  /** Bumped by every revocation: a lookup that started before one must not be cached after it. */
  private generation = 0;

  constructor(
    private readonly authenticator: Authenticator,
    private readonly workspaces: WorkspaceResolver,
    private readonly now: () => number,
    private readonly ttlMs = ACCESS_CACHE_TTL_MS,
    private readonly maxEntries = 10_000,
    revocations?: ChangeFeed,
  ) {
    this.unsubscribe = revocations ? onRevocation(revocations, (r) => this.revoke(r)) : () => undefined;
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
    this.unsubscribe();
    this.listeners.clear();
  }

  async authenticated(token: string): Promise<Principal | undefined> {
    const hit = this.principals.get(token);
    if (hit && hit.until > this.now()) return hit.principal;
    const generation = this.generation;
    const principal = await this.authenticator.authenticate(token);
    if (generation === this.generation) {
      this.remember(this.principals, token, { principal, until: this.until(principal) });
    }
    return principal;
  }

  async allowed(token: string, workspace: string): Promise<boolean> {
    const key = `${workspace}\u0000${token}`;
    const hit = this.decisions.get(key);
    if (hit && hit.until > this.now()) return hit.allowed;
    const generation = this.generation;
    const principal = await this.authenticated(token);
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
