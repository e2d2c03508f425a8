import type { BillingDimension } from '@tarmac/contract';

/** Who consumed: the identity every usage sample carries (issue "Metering"). */
export interface MeteredResource {
  accountId: string;
  workspace: string;
  /** Raw resource type of the spec's billing table: sandbox, agent, job, mcp_server, volume, custom_domain. */
  resourceType: string;
  resourceName: string;
  resourceUuid: string;
}

/** A steady consumption: `perSecond` units of `dimension` for every second it holds. */
export interface Rate {
  dimension: BillingDimension;
  perSecond: number;
}

/** The rates a resource had from `at` on, as recorded in its state-change events. */
export interface RateChange {
  at: number;
  rates: Rate[];
}

/** What a producer reports about one resource at one moment. */
export interface Observation {
  resource: MeteredResource;
  /** Rates now. */
  rates: Rate[];
  /** Recorded rate changes, oldest first (from the row's events); used to split intervals exactly. */
  changes: RateChange[];
  /** Epoch ms the resource ended (terminatedAt), if it did: nothing is charged after it. */
  endedAt?: number;
}

/**
 * A producer of time-based usage (sandboxes, volumes; later agents, jobs, MCP servers, custom
 * domains). It derives rates from the records; the meter turns rates into samples over time.
 */
export interface UsageSource {
  /** Resource kind it reads, e.g. `sandbox`; change notices of this kind trigger a meter pass. */
  readonly kind: string;
  /** Every live resource, plus those of `known` (resource uuids the meter is tracking) even if ended. */
  observe(known: ReadonlySet<string>): Promise<Observation[]>;
}
