import type { Sandbox, SandboxSpec } from '@tarmac/contract';
import type { ResourceRow } from '@tarmac/store';
import { envelopeMetadata, eventsOf } from '../../../framework/envelope.js';
import { sandboxUrl } from '../../../framework/hosts.js';
import type { SecretView } from '../../../framework/secrets.js';
import { sandboxExpiresIn } from './sandbox-expiry.js';
import { sandboxSecretContext, viewSandboxSpec } from './sandbox-secrets.js';
import type { SandboxServiceDeps } from './sandboxes.deps.js';

/**
 * `state` of a sandbox that has or is about to have a container (issue 14 items 2 and 8): a
 * DEPLOYED one's as the controllers keep it; a DEPLOYING one is RUNNING once up, and requests to it
 * are held until then (gateway/start-waiters.ts), so the create response says RUNNING; an ended or
 * failed one has none (a TERMINATED record showed `state: RUNNING`).
 */
function stateOf(row: ResourceRow<SandboxSpec>): Pick<Sandbox, 'state'> {
  const stored = row.state === 'RUNNING' || row.state === 'STANDBY' ? row.state : undefined;
  if (row.status === 'DEPLOYED') return stored ? { state: stored } : {};
  if (row.status === 'DEPLOYING') return { state: stored ?? 'RUNNING' };
  return {};
}

/** A sandbox record as the API shows it (secrets masked unless `reveal`). */
export function viewSandbox(
  deps: SandboxServiceDeps,
  row: ResourceRow<SandboxSpec>,
  secrets: SecretView = 'mask',
): Sandbox {
  const expiresIn = sandboxExpiresIn(row, deps.now());
  // Never used yet: its creation is its last use (the create response carries it: spec
  // "sandbox with events, expiresIn, lastUsedAt, state, status"; issue 14 item 8).
  const lastUsedAt = row.system.lastUsedAt ?? row.createdAt;
  return {
    metadata: envelopeMetadata(row, sandboxUrl(deps.hosts, row.workspace, row.name, row.spec.region)),
    spec: viewSandboxSpec(deps.secrets, row.spec, sandboxSecretContext(row.workspace, row.name), secrets),
    events: eventsOf(row),
    status: (row.status ?? 'DEPLOYING') as Sandbox['status'],
    ...stateOf(row),
    ...(expiresIn !== undefined ? { expiresIn } : {}),
    ...(typeof lastUsedAt === 'string' ? { lastUsedAt } : {}),
    ...(row.terminatedAt ? { terminatedAt: row.terminatedAt } : {}),
  };
}
