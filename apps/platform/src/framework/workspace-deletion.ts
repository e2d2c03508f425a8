/**
 * A workspace was deleted (issue 19 item 8): its resource records went with it (the store
 * cascades), so nothing else would tell the controllers that its sandboxes and volumes must go.
 * The notice makes them reap that workspace's engine objects at once (controllers/orphan-reaper.ts)
 * and, as a revocation, drops every cached access and open session in it (issue 19 item 10).
 */
import type { ChangeFeed } from './change-feed.js';
import { REVOCATION_KIND } from './revocations.js';

export const WORKSPACE_KIND = 'workspace';

export function publishWorkspaceDeleted(feed: ChangeFeed | undefined, name: string): void {
  feed?.publish({ workspace: name, kind: WORKSPACE_KIND, name });
  // principalId '' with a workspace: everyone's access to that workspace.
  feed?.publish({ workspace: name, kind: REVOCATION_KIND, name: '' });
}
