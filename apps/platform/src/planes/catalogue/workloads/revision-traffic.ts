/**
 * Revisions of agents and functions and the traffic they are configured to take (issue 16
 * "revision.active, canary + canaryPercent split traffic by weight"; reference control-plane.md
 * §1.1 `RevisionMetadata`, §2.1 `RevisionConfiguration`). The catalogue owns this resolution: it
 * checks `spec.revision` when a record is written, answers `GET …/revisions` with it, and hands it
 * to the run plane (run-records.ts), which starts the revisions that have a share and splits
 * requests between them (planes/run/traffic-split.ts).
 *
 * A revision remembers what its replicas run (`content`: the runtime with its envs still sealed,
 * and the integration connections), so an older revision can run again as the active one or a
 * canary. Like a Knative Revision (a snapshot of `spec.template`; the Route's traffic block is not
 * part of it), a write that changes only `spec.revision`, `enabled` or `public` makes no revision.
 */
import type { RevisionConfiguration, RevisionMetadata } from '@tarmac/contract';
import { ApiError } from '@tarmac/server-kit';

export interface RevisionContent {
  runtime?: { [key: string]: unknown } | undefined;
  integrationConnections?: string[] | undefined;
}

export interface StoredRevision {
  id: string;
  createdAt: string;
  createdBy: string;
  /** The image a build made (build-records.ts). */
  image?: string;
  /** What its replicas run; absent on revisions stored before this existed (the current spec then). */
  content?: RevisionContent;
}

/** The spec fields a revision is made of: everything but these (traffic and serving switches). */
const NOT_REVISIONED = new Set(['revision', 'enabled', 'public']);

export function revisionContent(spec: RevisionContent): RevisionContent {
  return structuredClone({
    runtime: spec.runtime,
    integrationConnections: spec.integrationConnections,
  });
}

/** Whether two specs (secrets opened) would run the same replicas: no new revision then. */
export function sameDeployment(a: object, b: object): boolean {
  return canonical(strip(a)) === canonical(strip(b));
}

function strip(spec: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(spec).filter(([k]) => !NOT_REVISIONED.has(k)));
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * `spec.revision` against the record's revisions: `active` and `canary` must name one of them
 * (they are made by the server, so a create can name none), differ from each other, and a
 * `canaryPercent` above 0 needs a `canary`. A 400 naming each bad field.
 */
export function checkRevisionConfig(config: RevisionConfiguration | undefined, known: string[]): void {
  if (!config) return;
  const details: { field: string; message: string }[] = [];
  const unknown = (field: 'active' | 'canary') => {
    const id = config[field];
    if (id !== undefined && !known.includes(id)) {
      details.push({
        field: `body.spec.revision.${field}`,
        message: known.length
          ? `revision "${id}" does not exist (revisions: ${known.join(', ')})`
          : `revision "${id}" does not exist (the record has no revision yet)`,
      });
    }
  };
  unknown('active');
  unknown('canary');
  if (config.canary !== undefined && config.canary === (config.active ?? known[0])) {
    details.push({
      field: 'body.spec.revision.canary',
      message: `must differ from the active revision "${config.canary}"`,
    });
  }
  if (config.canary === undefined && (config.canaryPercent ?? 0) > 0) {
    details.push({
      field: 'body.spec.revision.canaryPercent',
      message: 'needs spec.revision.canary (the revision that takes this share)',
    });
  }
  if (details.length > 0) {
    const text = details.map((d) => `${d.field}: ${d.message}`).join('; ');
    throw new ApiError('validation_error', `Invalid request: ${text}`, { details });
  }
}

export interface ConfiguredTraffic {
  /** The revision serving the rest of the traffic (the newest one unless spec.revision.active). */
  active: string | undefined;
  canary: string | undefined;
  /** Share per revision id, summing to 100 (0 entries left out). */
  percent: Map<string, number>;
  /** Seconds a client stays on the revision that answered it first (0: no stickiness). */
  stickySessionTtl: number;
}

/**
 * The split as configured, over revisions newest first. A name that is no longer among them
 * (aged out of the kept 20) falls back to the newest revision for `active` and to none for
 * `canary`, so a stale configuration never leaves a record without traffic.
 */
export function configuredTraffic(
  config: RevisionConfiguration | undefined,
  ids: readonly string[],
): ConfiguredTraffic {
  const known = (id: string | undefined) => (id !== undefined && ids.includes(id) ? id : undefined);
  const active = known(config?.active) ?? ids[0];
  const c = known(config?.canary);
  const canary = c !== active ? c : undefined;
  const share = canary ? (config?.canaryPercent ?? 0) : 0;
  const percent = new Map<string, number>();
  if (active !== undefined && share < 100) percent.set(active, 100 - share);
  if (canary !== undefined && share > 0) percent.set(canary, share);
  return { active, canary, percent, stickySessionTtl: config?.stickySessionTtl ?? 0 };
}

/** `RevisionMetadata[]` newest first (reference §1.1) with the configured traffic. */
export function revisionList(
  stored: readonly StoredRevision[],
  config: RevisionConfiguration | undefined,
  status: string,
): RevisionMetadata[] {
  const t = configuredTraffic(
    config,
    stored.map((r) => r.id),
  );
  const activeAt = stored.findIndex((r) => r.id === t.active);
  return stored.map((rev, index) => {
    const percent = t.percent.get(rev.id) ?? 0;
    return {
      id: rev.id,
      active: rev.id === t.active,
      canary: rev.id === t.canary,
      // The revision the active one replaced: the next older one.
      previousActive: activeAt >= 0 && index === activeAt + 1,
      status: percent > 0 ? status : 'DEACTIVATED',
      trafficPercent: percent,
      createdAt: rev.createdAt,
      createdBy: rev.createdBy,
    };
  });
}
