// The run plane's autoscaler settings (planes/run/ARCHITECTURE.md "Settings"): defaults, and a bad
// value refused at start with a message naming the variable.
import { describe, expect, it } from 'vitest';
import type { PlatformEnv } from './env-schema.js';
import { ConfigError } from './values.js';
import { runConfig } from './workloads.js';

const env = (e: Record<string, string>) => e as PlatformEnv;

describe('run autoscale settings', () => {
  it('defaults: target 10, stable 60 s, panic 6 s, 10 replicas', () => {
    expect(runConfig(env({})).autoscale).toEqual({
      targetConcurrency: 10,
      stableWindowMs: 60_000,
      panicWindowMs: 6_000,
      maxReplicas: 10,
    });
  });

  it('reads the TARMAC_RUN_* settings', () => {
    const c = runConfig(
      env({
        TARMAC_RUN_TARGET_CONCURRENCY: '1',
        TARMAC_RUN_STABLE_WINDOW_SECONDS: '6',
        TARMAC_RUN_PANIC_WINDOW_SECONDS: '2',
        TARMAC_RUN_MAX_REPLICAS: '3',
      }),
    );
    expect(c.autoscale).toEqual({
      targetConcurrency: 1,
      stableWindowMs: 6000,
      panicWindowMs: 2000,
      maxReplicas: 3,
    });
  });

  it('refuses nonsense, naming the variable', () => {
    const bad = (e: Record<string, string>, what: RegExp) => {
      expect(() => runConfig(env(e))).toThrow(ConfigError);
      expect(() => runConfig(env(e))).toThrow(what);
    };
    bad({ TARMAC_RUN_TARGET_CONCURRENCY: '0' }, /TARMAC_RUN_TARGET_CONCURRENCY/);
    bad({ TARMAC_RUN_TARGET_CONCURRENCY: 'lots' }, /TARMAC_RUN_TARGET_CONCURRENCY/);
    bad({ TARMAC_RUN_PANIC_WINDOW_SECONDS: '61' }, /must not exceed TARMAC_RUN_STABLE_WINDOW_SECONDS/);
    bad({ TARMAC_RUN_MAX_REPLICAS: '101' }, /TARMAC_RUN_MAX_REPLICAS must be at most 100/);
    bad({ TARMAC_RUN_STABLE_WINDOW_SECONDS: '0' }, /TARMAC_RUN_STABLE_WINDOW_SECONDS/);
  });
});
