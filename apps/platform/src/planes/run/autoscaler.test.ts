// The autoscaler's arithmetic (autoscaler.ts): time-weighted window averages, the clamp to
// [max(minScale, 1), min(maxScale, operator, host)], panic on bursts (up within seconds, never
// above the ceiling, never down while panicking), scale-down only after a stable window, and no
// scale-down of a set younger than one (re-attached after a restart).
import { describe, expect, it } from 'vitest';
import {
  addSample,
  Autoscaler,
  BUCKET_MS,
  decide,
  DEFAULT_AUTOSCALE,
  newScaleState,
  scaleLimits,
  windowAverage,
  type AutoscaleSettings,
  type ScaleBounds,
} from './autoscaler.js';

const settings: AutoscaleSettings = {
  targetConcurrency: 1,
  stableWindowMs: 10_000,
  panicWindowMs: 2_000,
  panicThreshold: 2,
  maxReplicas: 10,
};
const bounds: ScaleBounds = { minScale: 0, maxScale: 3, memoryMB: 256 };

/**
 * Drives one set second by second: `load(t)` requests in flight during second t, the replica
 * count following the decision at once (`ready` = what was decided the step before).
 */
function simulate(
  load: (t: number) => number,
  seconds: number,
  opts: { s?: AutoscaleSettings; b?: ScaleBounds; start?: number } = {},
) {
  const scaler = new Autoscaler(opts.s ?? settings);
  const set = {};
  let current = opts.start ?? 1;
  const out: number[] = [];
  scaler.observe(set, 0, opts.b ?? bounds, { current, ready: current }, 0);
  for (let t = 1; t <= seconds; t++) {
    const d = scaler.observe(
      set,
      load(t - 1) * 1000,
      opts.b ?? bounds,
      { current, ready: current },
      t * 1000,
    );
    current = d.desired;
    out.push(current);
  }
  return out;
}

describe('autoscaler', () => {
  it('defaults: 10 concurrent requests per replica, Knative windows (60 s, 6 s, 200 %), 10 replicas', () => {
    expect(DEFAULT_AUTOSCALE).toEqual({
      targetConcurrency: 10,
      stableWindowMs: 60_000,
      panicWindowMs: 6_000,
      panicThreshold: 2,
      maxReplicas: 10,
    });
  });

  it('limits: floor max(minScale, 1); ceiling min(maxScale, operator, host memory / replica memory)', () => {
    expect(scaleLimits({ minScale: 0, maxScale: 3, memoryMB: 256 }, settings)).toEqual({
      floor: 1,
      ceiling: 3,
    });
    expect(scaleLimits({ minScale: 2, maxScale: 50, memoryMB: 256 }, settings)).toEqual({
      floor: 2,
      ceiling: 10, // the operator's TARMAC_RUN_MAX_REPLICAS
    });
    // A 4 GB host holds three 1.2 GB replicas at most, whatever maxScale says.
    const host = { ...settings, hostMemoryMB: 4096 };
    expect(scaleLimits({ minScale: 0, maxScale: 10, memoryMB: 1200 }, host)).toEqual({
      floor: 1,
      ceiling: 3,
    });
    // minScale above what fits is cut to the ceiling; a replica bigger than the host still gets 1.
    expect(scaleLimits({ minScale: 5, maxScale: 10, memoryMB: 1200 }, host)).toEqual({
      floor: 3,
      ceiling: 3,
    });
    expect(scaleLimits({ minScale: 0, maxScale: 10, memoryMB: 8192 }, host)).toEqual({
      floor: 1,
      ceiling: 1,
    });
  });

  it('averages requests in flight over time, pro-rating the sample at the window edge', () => {
    const s = newScaleState(0);
    addSample(s, 4 * 1000, 1000, 60_000); // 4 in flight for 1 s
    addSample(s, 0, 2000, 60_000);
    addSample(s, 2 * 1000, 3000, 60_000); // 2 in flight for 1 s
    expect(windowAverage(s, 3000, 3000)).toBeCloseTo(2); // (4 + 0 + 2) / 3
    expect(windowAverage(s, 1000, 3000)).toBeCloseTo(2);
    expect(windowAverage(s, 1500, 3000)).toBeCloseTo(2 / 1.5); // half of the empty second inside
    // A set measured for 1 s averages over that second, not over a 60 s window of nothing.
    const young = newScaleState(0);
    addSample(young, 5000, 1000, 60_000);
    expect(windowAverage(young, 60_000, 1000)).toBeCloseTo(5);
  });

  it('merges samples closer than a bucket, so a window holds a bounded number of them', () => {
    const s = newScaleState(0);
    for (let t = 10; t <= 60_000; t += 10) addSample(s, 10, t, 10_000); // a pass every 10 ms
    expect(s.samples.length).toBeLessThanOrEqual(10_000 / BUCKET_MS + 2);
    expect(windowAverage(s, 10_000, 60_000)).toBeCloseTo(1, 1);
  });

  it('a burst panics: up to maxScale within seconds, never above it', () => {
    // Idle, then 6 slow requests in flight from t = 5 s to t = 25 s, then idle.
    const burst = (t: number) => (t >= 5 && t < 25 ? 6 : 0);
    const counts = simulate(burst, 60);
    expect(counts.slice(0, 5)).toEqual([1, 1, 1, 1, 1]);
    // Seconds after the burst began: the panic window asks for 3 (ceiling), at once.
    const up = counts.findIndex((c) => c === 3);
    expect(up).toBeGreaterThanOrEqual(5);
    expect(up).toBeLessThanOrEqual(7);
    expect(Math.max(...counts)).toBe(3);
  });

  it('panic never scales down; after the burst, back to the floor once a stable window passed', () => {
    const burst = (t: number) => (t >= 5 && t < 25 ? 6 : 0);
    const counts = simulate(burst, 60);
    const up = counts.findIndex((c) => c === 3);
    const downAt = counts.findIndex((c, i) => i > up && c < 3);
    // Not before a whole stable window (10 s) after the burst ended (t = 25 s).
    expect(downAt + 1).toBeGreaterThanOrEqual(25 + 10);
    expect(counts.at(-1)).toBe(1);
    for (let i = 1; i < counts.length; i++) {
      if (i > up && i < 25) expect(counts[i]).toBe(3); // held while the burst lasts
    }
  });

  it('without panic the stable average decides: a brief dip does not scale down', () => {
    // A steady 2 in flight (2 replicas at target 1), one idle second, then 2 again.
    const load = (t: number) => (t === 30 ? 0 : 2);
    const counts = simulate(load, 40, { start: 2 });
    expect(counts.slice(12)).toEqual(Array(28).fill(2));
  });

  it('target concurrency divides: 25 in flight at target 10 is 3 replicas; 20 is exactly 2', () => {
    const s10 = { ...settings, targetConcurrency: 10 };
    const b = { minScale: 0, maxScale: 10, memoryMB: 256 };
    expect(simulate(() => 25, 30, { s: s10, b, start: 3 }).at(-1)).toBe(3);
    expect(simulate(() => 20, 30, { s: s10, b, start: 2 }).at(-1)).toBe(2);
  });

  it('minScale is honoured with no traffic at all', () => {
    const counts = simulate(() => 0, 30, { b: { minScale: 2, maxScale: 3, memoryMB: 256 } });
    expect(counts.every((c) => c === 2)).toBe(true);
  });

  it('a set younger than a stable window keeps the replicas it has (re-attached after a restart)', () => {
    const counts = simulate(() => 0, 20, { start: 3 });
    expect(counts.slice(0, 9)).toEqual(Array(9).fill(3));
    expect(counts.at(-1)).toBe(1);
  });

  it('decide: panic is entered at 200 % of the ready replicas, not below', () => {
    const s = newScaleState(0);
    addSample(s, 3 * 2000, 2000, 10_000); // 3 in flight over the panic window, 2 ready: 150 %
    const calm = decide(s, { minScale: 0, maxScale: 10, memoryMB: 1 }, settings, 2, 2, 2000);
    expect(calm.panicking).toBe(false);
    const s2 = newScaleState(0);
    addSample(s2, 4 * 2000, 2000, 10_000); // 4 over 2 ready: 200 %
    const hot = decide(s2, { minScale: 0, maxScale: 10, memoryMB: 1 }, settings, 2, 2, 2000);
    expect(hot).toMatchObject({ panicking: true, desired: 4 });
  });
});
