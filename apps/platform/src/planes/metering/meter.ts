import type { BillingDimension } from '@tarmac/contract';
import type { MeteringRepository, UsageSample } from '@tarmac/store';
import type { Logger } from 'pino';
import type { ChangeFeed } from '../../framework/change-feed.js';
import { iso } from './calendar.js';
import type { MeteredResource, Observation, Rate, UsageSource } from './source.js';

const HOUR = 3_600_000;
/** How long after a change notice its metering pass starts (Meter.start). */
const NOTICE_PASS_DELAY_MS = 100;

interface Tracked {
  source: string;
  resource: MeteredResource;
  /** The rates in force since `since` (what the previous pass saw). */
  rates: Rate[];
  since: number;
}

export interface MeterDeps {
  sources: readonly UsageSource[];
  metering: Pick<MeteringRepository, 'record'>;
  now: () => number;
  logger?: Pick<Logger, 'warn'>;
}

/** Usage samples of `rates` over [from, to), one per dimension per UTC hour (the rollup grain). */
export function samplesOver(
  resource: MeteredResource,
  rates: readonly Rate[],
  from: number,
  to: number,
): UsageSample[] {
  const samples: UsageSample[] = [];
  for (let start = from; start < to;) {
    const end = Math.min(to, Math.floor(start / HOUR) * HOUR + HOUR);
    for (const rate of rates) {
      const quantity = (rate.perSecond * (end - start)) / 1000;
      if (quantity <= 0) continue;
      samples.push({
        // Deterministic: the same resource, dimension and start is the same sample, so a retried
        // write (or a replay of the same interval) is ignored by the store.
        idempotencyKey: `${resource.resourceUuid}/${rate.dimension}/${iso(start)}`,
        ...resource,
        dimension: rate.dimension,
        startAt: iso(start),
        endAt: iso(end),
        quantity,
      });
    }
    start = end;
  }
  return samples;
}

/**
 * The sampler (ARCHITECTURE.md "Meter"): each pass asks every source for its resources' current
 * rates and recorded rate changes, charges each tracked resource for [since, now) — split exactly
 * at recorded changes — and records the samples in one idempotent write. Passes run on a timer
 * and on change notices, one at a time. What a crash loses is each resource's open interval since
 * the last pass; a restart starts a new interval at its first pass.
 */
export class Meter {
  private readonly tracked = new Map<string, Tracked>();
  private lastPass: number;
  private running: Promise<number> = Promise.resolve(0);
  private queued: Promise<number> | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly unsubscribe: (() => void)[] = [];

  constructor(private readonly deps: MeterDeps) {
    this.lastPass = deps.now();
  }

  /** Runs a pass after the current one (coalesced: many requests while one waits make one pass). */
  pass(): Promise<number> {
    if (this.queued) return this.queued;
    const next = this.running
      .catch(() => 0)
      .then(() => {
        this.queued = undefined;
        return this.runPass();
      });
    this.queued = next;
    this.running = next;
    return next;
  }

  /** Count dimensions (e.g. agent_async_requests_count): one sample per event, keyed by the producer. */
  async recordCount(
    resource: MeteredResource,
    dimension: BillingDimension,
    count: number,
    at: number,
    idempotencyKey: string,
  ): Promise<boolean> {
    const sample: UsageSample = {
      idempotencyKey: `${resource.resourceUuid}/${dimension}/${idempotencyKey}`,
      ...resource,
      dimension,
      startAt: iso(at),
      endAt: iso(at + 1),
      quantity: count,
    };
    return (await this.deps.metering.record([sample], iso(this.deps.now()))) === 1;
  }

  /**
   * Passes every `intervalMs`, and shortly after change notices of the sources' kinds: one pass
   * for a burst of them, started NOTICE_PASS_DELAY_MS after the first — not inside the writer's
   * call, where a pass (every record of the kind read back) ran before the writer's response went
   * out (+7 ms on a create claimed from the warm pool, issue 20 item 1). Usage is charged from
   * the records' own change times, so the delay moves no interval.
   */
  start(intervalMs: number, changes?: ChangeFeed): void {
    for (const source of this.deps.sources) {
      if (changes) this.unsubscribe.push(changes.subscribe(source.kind, () => this.passSoon()));
    }
    this.timer = setInterval(() => void this.safePass(), intervalMs);
    this.timer.unref?.();
  }

  private soon: NodeJS.Timeout | undefined;

  private passSoon(): void {
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.safePass();
    }, NOTICE_PASS_DELAY_MS);
    this.soon.unref?.();
  }

  /** Stops the timer and closes every open interval with a last pass (graceful shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.soon);
    this.soon = undefined;
    for (const off of this.unsubscribe.splice(0)) off();
    await this.safePass();
  }

  private async safePass(): Promise<number> {
    try {
      return await this.pass();
    } catch (err) {
      this.deps.logger?.warn({ err }, 'metering pass failed; the next pass retries the interval');
      return 0;
    }
  }

  private async runPass(): Promise<number> {
    const now = this.deps.now();
    const next = new Map(this.tracked);
    const samples: UsageSample[] = [];
    for (const source of this.deps.sources) {
      const known = new Set(
        [...this.tracked.values()]
          .filter((t) => t.source === source.kind)
          .map((t) => t.resource.resourceUuid),
      );
      const seen = new Set<string>();
      for (const obs of await source.observe(known)) {
        seen.add(obs.resource.resourceUuid);
        const state = this.advance(
          source.kind,
          this.tracked.get(obs.resource.resourceUuid),
          obs,
          now,
          samples,
        );
        if (state) next.set(obs.resource.resourceUuid, state);
        else next.delete(obs.resource.resourceUuid);
      }
      for (const uuid of known) {
        if (seen.has(uuid)) continue;
        // The record is gone entirely: charge what it had up to now, then forget it.
        const t = this.tracked.get(uuid)!;
        samples.push(...samplesOver(t.resource, t.rates, t.since, now));
        next.delete(uuid);
      }
    }
    const recorded = await this.deps.metering.record(samples, iso(now));
    // Only a successful write moves the intervals on; a failed pass is retried from the same starts.
    this.tracked.clear();
    for (const [k, v] of next) this.tracked.set(k, v);
    this.lastPass = now;
    return recorded;
  }

  private advance(
    source: string,
    tracked: Tracked | undefined,
    obs: Observation,
    now: number,
    out: UsageSample[],
  ): Tracked | undefined {
    const end = Math.min(now, obs.endedAt ?? now);
    let cursor: number;
    let rates: Rate[];
    if (tracked) {
      cursor = tracked.since;
      rates = tracked.rates;
    } else {
      if (obs.endedAt !== undefined) return undefined;
      // New since the previous pass: start at its first recorded change after that pass, if any.
      const first = obs.changes.find((c) => c.at > this.lastPass && c.at <= now);
      cursor = first ? first.at : now;
      rates = first ? first.rates : obs.rates;
    }
    for (const change of obs.changes) {
      if (change.at <= cursor || change.at > end) continue;
      out.push(...samplesOver(obs.resource, rates, cursor, change.at));
      cursor = change.at;
      rates = change.rates;
    }
    if (end > cursor) out.push(...samplesOver(obs.resource, rates, cursor, end));
    if (obs.endedAt !== undefined && obs.endedAt <= now) return undefined;
    return { source, resource: obs.resource, rates: obs.rates, since: Math.max(cursor, end) };
  }
}
