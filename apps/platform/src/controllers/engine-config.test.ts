import { describe, expect, it } from 'vitest';
import { EngineConfigError, engineConfigFrom } from './engine-config.js';

// Issue 19 item 8: the orphan reaper's grace is an operator setting, 60 s by default.
describe('engineConfigFrom: TARMAC_ORPHAN_GRACE_SECONDS', () => {
  it('defaults to 60 s, reads whole seconds, names the variable on garbage', () => {
    expect(engineConfigFrom({}).orphanGraceMs).toBe(60_000);
    expect(engineConfigFrom({ TARMAC_ORPHAN_GRACE_SECONDS: '5' }).orphanGraceMs).toBe(5000);
    expect(() => engineConfigFrom({ TARMAC_ORPHAN_GRACE_SECONDS: '-1' })).toThrow(EngineConfigError);
    expect(() => engineConfigFrom({ TARMAC_ORPHAN_GRACE_SECONDS: '1m' })).toThrow(
      /TARMAC_ORPHAN_GRACE_SECONDS/,
    );
  });
});
