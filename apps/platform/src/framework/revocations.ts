/**
 * "A credential stopped being valid" notices (issue 19 item 10): an API key deleted, a service
 * account deleted, a membership removed, refresh tokens revoked, a workspace deleted. The
 * management plane checks every request against the store and needs none of this; the sandbox
 * plane caches access decisions (gateway/access-cache.ts) and holds long-lived sessions
 * (gateway/open-sessions.ts), and drops both when a notice arrives.
 *
 * They travel on the ChangeFeed, which is IN-PROCESS ONLY: with several platform processes on one
 * PostgreSQL, another process learns of a revocation only when its cache entry expires, so the
 * access cache's TTL (1 s) is the cross-process bound.
 */
import type { ChangeFeed } from './change-feed.js';

export const REVOCATION_KIND = 'credential-revocation';

export interface Revocation {
  /** Whose credential (user or service account id). */
  principalId: string;
  /** Set when only access to this workspace went (membership removed, workspace deleted). */
  workspace?: string;
}

export type Revoked = (revocation: Revocation) => void;

/** Publishes revocations on the feed; a no-op without one (tests that build a bare app). */
export function revocationPublisher(feed: ChangeFeed | undefined): Revoked {
  return (r) => feed?.publish({ workspace: r.workspace ?? '', kind: REVOCATION_KIND, name: r.principalId });
}

/** Calls `listener` on every revocation; returns the function that stops listening. */
export function onRevocation(feed: ChangeFeed, listener: (r: Revocation) => void): () => void {
  return feed.subscribe(REVOCATION_KIND, (ref) =>
    listener({ principalId: ref.name, ...(ref.workspace ? { workspace: ref.workspace } : {}) }),
  );
}
