/**
 * How many replicas a revision should run while it has traffic (issue 16 "Scaling and revisions";
 * ARCHITECTURE.md "Autoscaling"): a request-driven autoscaler after Knative Serving's KPA.
 *
 *   desired = clamp(ceil(observed concurrency / target), floor, ceiling)
 *
 * - observed concurrency is the time-weighted average of requests in flight on the revision's
 *   replicas (replica-load.ts: every request and open stream or WebSocket counts while it lasts),
 *   sampled at each controller pass over two windows: the **stable** window (60 s) and the short
 *   **panic** window (6 s, Knative's 10 % of the stable one);
 * - normally the stable average decides, so a revision scales down only once a whole stable window
 *   of traffic asked for fewer replicas;
 * - a burst that makes the panic window ask for at least `panicThreshold` (200 %) times the ready
 *   replicas enters **panic**: the panic average decides, within seconds, and the count never goes
 *   down while panicking; panic ends after a stable window without such a burst;
 * - floor = max(minScale, 1): an awake revision runs at least one replica. Going to zero when
 *   idle (STANDBY, then stopped) is not this module's: the idle policy (idle-policy.ts) freezes and
 *   stops replicas beyond minScale and puts a minScale-0 set to sleep, and an asleep set is not
 *   sized at all (replica-scaling.ts `scale`) until a request wakes it;
 * - ceiling = min(maxScale, the operator's TARMAC_RUN_MAX_REPLICAS, how many replicas of this
 *   memory the host could ever hold): the engine's memory ledger still refuses a replica that does
 *   not fit now (the controller retries it after 1 s without counting a crash);
 * - a revision seen for less than a stable window (new, or re-attached after a platform restart)
 *   never scales below the replicas it has: no evidence yet that fewer suffice.
 * Pure: no clock, no I/O (the controller passes `now` and the load it measured).
 */

export interface AutoscaleSettings {
  /** Concurrent requests one replica is sized for (TARMAC_RUN_TARGET_CONCURRENCY). */
  targetConcurrency: number;
  /** Averaging window of the normal (stable) mode, and how long panic lasts after a burst. */
  stableWindowMs: number;
  /** Averaging window that detects bursts. */
  panicWindowMs: number;
  /** Panic when the panic window asks for this many times the ready replicas (Knative: 2). */
  panicThreshold: number;
  /** The operator's ceiling per revision, whatever maxScale says (TARMAC_RUN_MAX_REPLICAS). */
  maxReplicas: number;
  /** Memory the engine may commit to containers (host x overcommit), MB; unbounded when absent. */
  hostMemoryMB?: number;
}

/**
 * Defaults. Target 10: an agent request is slow (seconds to minutes) and spends most of it waiting
 * on a model, so one process serves many at once; concurrency = rate x latency, so a target of 1
 * (one request per replica, Lambda-style) would run 20 replicas of 2 GB for one request a second
 * of 20 s each. 10 keeps a replica's event loop and memory (conversation context, tool outputs)
 * comfortable; Knative's default of 100 is sized for short web requests. Windows and threshold
 * are Knative's (stable 60 s, panic 6 s, 200 %). Ceiling 10: the reference's default maxScale.
 */
export const DEFAULT_AUTOSCALE: AutoscaleSettings = {
  targetConcurrency: 10,
  stableWindowMs: 60_000,
  panicWindowMs: 6_000,
  panicThreshold: 2,
  maxReplicas: 10,
};

/** What the record asks (spec.runtime). */
export interface ScaleBounds {
  minScale: number;
  maxScale: number;
  memoryMB: number;
}

/** Samples are merged up to this span (bounds a window's samples; finer than any window). */
export const BUCKET_MS = 250;

/** One measurement: the in-flight requests' area (request x ms) over (atMs - spanMs, atMs]. */
interface Sample {
  atMs: number;
  spanMs: number;
  area: number;
}

/** The autoscaler's memory of one revision's replica set. */
export interface ScaleState {
  samples: Sample[];
  /** When this set was first measured. */
  sinceMs: number;
  lastMs: number;
  /** Panicking since the last burst at this time (undefined: stable mode). */
  panicAtMs: number | undefined;
  /** Highest count decided while panicking: panic never scales down. */
  panicPeak: number;
}

export interface ScaleDecision {
  desired: number;
  panicking: boolean;
  stableConcurrency: number;
  panicConcurrency: number;
}

export function newScaleState(now: number): ScaleState {
  return { samples: [], sinceMs: now, lastMs: now, panicAtMs: undefined, panicPeak: 0 };
}

/** Records the in-flight area measured since the previous sample (replica-load.ts takeArea). */
export function addSample(state: ScaleState, area: number, now: number, keepMs: number): void {
  const spanMs = now - state.lastMs;
  const last = state.samples.at(-1);
  if (spanMs <= 0) {
    if (last) last.area += area;
    return;
  }
  // Passes can come many times a second (every change notice): samples closer than a bucket merge,
  // so a window holds at most window / BUCKET_MS of them.
  if (last && now - (last.atMs - last.spanMs) <= BUCKET_MS) {
    last.area += area;
    last.spanMs += spanMs;
    last.atMs = now;
  } else state.samples.push({ atMs: now, spanMs, area });
  state.lastMs = now;
  const horizon = now - keepMs;
  while (state.samples.length > 0 && state.samples[0]!.atMs <= horizon) state.samples.shift();
}

/**
 * Average requests in flight over the last `windowMs` (samples pro-rated at the window's edge).
 * A set measured for less than the window averages over what it has (Knative does the same), so
 * the first seconds of a new revision are not diluted by time it did not exist.
 */
export function windowAverage(state: ScaleState, windowMs: number, now: number): number {
  const from = Math.max(now - windowMs, state.sinceMs);
  const span = now - from;
  if (span <= 0) return 0;
  let area = 0;
  for (const s of state.samples) {
    const start = s.atMs - s.spanMs;
    if (s.atMs <= from) continue;
    const inside = s.atMs - Math.max(start, from);
    area += s.area * (inside / s.spanMs);
  }
  return area / span;
}

/** The replica count a revision may run: [max(minScale, 1), min(maxScale, operator, host)]. */
export function scaleLimits(b: ScaleBounds, s: AutoscaleSettings): { floor: number; ceiling: number } {
  const byHost =
    s.hostMemoryMB !== undefined && b.memoryMB > 0 ? Math.floor(s.hostMemoryMB / b.memoryMB) : Infinity;
  const ceiling = Math.max(1, Math.min(b.maxScale, s.maxReplicas, byHost));
  const floor = Math.min(Math.max(b.minScale, 1), ceiling);
  return { floor, ceiling };
}

/**
 * One decision (a controller pass): `current` replicas of the set (ready, starting or launching),
 * `ready` of them answering. Mutates the panic state.
 */
export function decide(
  state: ScaleState,
  bounds: ScaleBounds,
  s: AutoscaleSettings,
  current: number,
  ready: number,
  now: number,
): ScaleDecision {
  const stableConcurrency = windowAverage(state, s.stableWindowMs, now);
  const panicConcurrency = windowAverage(state, s.panicWindowMs, now);
  const target = Math.max(s.targetConcurrency, Number.EPSILON);
  // A tiny tolerance: 2.0000001 in-flight requests over a window is 2, not 3 replicas.
  const wanted = (c: number) => Math.ceil(c / target - 1e-9);
  const stableWant = wanted(stableConcurrency);
  const panicWant = wanted(panicConcurrency);
  if (panicWant / Math.max(ready, 1) >= s.panicThreshold) {
    if (state.panicAtMs === undefined) state.panicPeak = 0;
    state.panicAtMs = now;
  } else if (state.panicAtMs !== undefined && now - state.panicAtMs >= s.stableWindowMs) {
    state.panicAtMs = undefined;
  }
  const { floor, ceiling } = scaleLimits(bounds, s);
  const clamp = (n: number) => Math.min(ceiling, Math.max(floor, n));
  let desired: number;
  const panicking = state.panicAtMs !== undefined;
  if (panicking) {
    desired = clamp(Math.max(panicWant, state.panicPeak, current));
    state.panicPeak = desired;
  } else {
    desired = clamp(stableWant);
  }
  // Young (new revision, or re-attached after a restart): no stable window of evidence yet.
  if (now - state.sinceMs < s.stableWindowMs) desired = Math.max(desired, Math.min(current, ceiling));
  return { desired, panicking, stableConcurrency, panicConcurrency };
}

/** The states of every replica set (keyed by the set object: a pruned set forgets its own). */
export class Autoscaler {
  private readonly states = new WeakMap<object, ScaleState>();

  constructor(readonly settings: AutoscaleSettings) {}

  /**
   * Adds the in-flight area measured on the set since the previous call (request x ms), then
   * decides how many replicas it should run.
   */
  observe(
    set: object,
    area: number,
    bounds: ScaleBounds,
    counts: { current: number; ready: number },
    now: number,
  ): ScaleDecision {
    let state = this.states.get(set);
    if (!state) this.states.set(set, (state = newScaleState(now)));
    addSample(state, area, now, this.settings.stableWindowMs);
    return decide(state, bounds, this.settings, counts.current, counts.ready, now);
  }
}
