/**
 * "May this token use this workspace?", cached for a few seconds: the gateway's hot path must not
 * hash an API key and read memberships on every request to a sandbox. A revoked key keeps working
 * for at most `ttlMs` on the sandbox plane (the management plane checks every request).
 */
import type { Authenticator, Principal, WorkspaceResolver } from '@tarmac/server-kit';

export class AccessCache {
  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();
  private readonly principals = new Map<string, { principal: Principal | undefined; until: number }>();

  constructor(
    private readonly authenticator: Authenticator,
    private readonly workspaces: WorkspaceResolver,
    private readonly now: () => number,
    private readonly ttlMs = 5000,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticated(token: string): Promise<Principal | undefined> {
    const hit = this.principals.get(token);
    if (hit && hit.until > this.now()) return hit.principal;
    const principal = await this.authenticator.authenticate(token);
    this.remember(this.principals, token, { principal, until: this.now() + this.ttlMs });
    return principal;
  }

  async allowed(token: string, workspace: string): Promise<boolean> {
    const key = `${workspace}\u0000${token}`;
    const hit = this.decisions.get(key);
    if (hit && hit.until > this.now()) return hit.allowed;
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
    this.remember(this.decisions, key, { allowed, until: this.now() + this.ttlMs });
    return allowed;
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= this.maxEntries) map.clear(); // crude bound; entries are cheap to recompute
    map.set(key, value);
  }
}
