/**
 * The part of a sandbox record (kind 'sandbox' on the resources table) the controllers read. The
 * sandboxes module validates the spec with the contract's schema on write; here every field is
 * read defensively, since a record written by an older version must not crash a reconcile loop.
 */
import type { ResourceRow } from '@tarmac/store';
export { SANDBOX_KIND, VOLUME_KIND } from '../../../framework/kinds.js';

export interface EnvVar {
  name: string;
  value?: string;
  secret?: boolean;
}

export interface ExpirationPolicy {
  type: string;
  value: string;
  action?: string;
}

export interface SandboxSpecView {
  runtime?: {
    image?: string;
    memory?: number;
    ports?: { target: number; name?: string; protocol?: string }[];
    envs?: EnvVar[];
    ttl?: string | null;
    expires?: string | null;
    terminationGracePeriodSeconds?: number;
    extraArgs?: Record<string, unknown>;
  };
  lifecycle?: { expirationPolicies?: ExpirationPolicy[]; terminatedRetention?: string } | null;
  volumes?: { name: string; mountPath: string; readOnly?: boolean }[];
}

/** System-owned fields the controllers keep in `system` (beyond status/state/events). */
export interface SandboxSystem {
  /** Engine id of the container (derived from the record id; see engineIdOf). */
  engineId?: string;
  /** Address of the sandbox on the platform bridge, where sandboxd listens on :8080. */
  ip?: string;
  lastUsedAt?: string;
  /** When the sandbox last became DEPLOYED (ttl-idle counts from here before any use). */
  deployedAt?: string;
  /** OOM kills already reported as events. */
  oomKillsReported?: number;
  /** A fork's snapshot (engine id): its writable layer starts as a copy of it (issue 14 item 6). */
  seedSnapshot?: string;
  [key: string]: unknown;
}

export type SandboxRow = ResourceRow<SandboxSpecView>;

/** Default memory when the spec has none (reference sandbox-api.md: SDK default 4096 MB). */
export const DEFAULT_MEMORY_MB = 4096;

export function systemOf(row: { system: Record<string, unknown> }): SandboxSystem {
  return row.system as SandboxSystem;
}
