import { describe, expect, it } from 'vitest';
import { EngineConfigError, engineConfigFrom } from './engine-config.js';

describe('engineConfigFrom limits (issue 19 items 5 and 13)', () => {
  it('leaves the engine its defaults when nothing is set', () => {
    expect(engineConfigFrom({}).limits).toEqual({});
  });

  it('passes disk, open files and overcommit through', () => {
    expect(
      engineConfigFrom({
        TARMAC_SANDBOX_DISK_MB: '2048',
        TARMAC_SANDBOX_NOFILE: '1024',
        TARMAC_MEMORY_OVERCOMMIT: '1.5',
      }).limits,
    ).toEqual({ defaultDiskMB: 2048, nofileLimit: 1024, memoryOvercommit: 1.5 });
  });

  it('refuses values that cannot be limits, naming the variable', () => {
    expect(() => engineConfigFrom({ TARMAC_SANDBOX_DISK_MB: '10' })).toThrow(/TARMAC_SANDBOX_DISK_MB/);
    expect(() => engineConfigFrom({ TARMAC_SANDBOX_DISK_MB: '1.5e3x' })).toThrow(EngineConfigError);
    expect(() => engineConfigFrom({ TARMAC_SANDBOX_NOFILE: '100.5' })).toThrow(/TARMAC_SANDBOX_NOFILE/);
    expect(() => engineConfigFrom({ TARMAC_MEMORY_OVERCOMMIT: '0' })).toThrow(/TARMAC_MEMORY_OVERCOMMIT/);
  });
});
