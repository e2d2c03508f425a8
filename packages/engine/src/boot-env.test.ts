// The sandbox's boot env file (boot-env.ts): what a claim turns a pooled boot's file into, and
// what a `runc exec` gets from it.
import { describe, expect, it } from 'vitest';
import { bootEnv, bootEnvArgs, claimedBootEnv } from './boot-env.js';

describe('boot env', () => {
  it('a claimed file is the file a boot for the claimed name writes', () => {
    const platform = { HTTP_PROXY: 'http://rec:pw@10.0.0.1:3128', TARMAC_SANDBOXD_TOKEN: 't' };
    const pooled = bootEnv('sb-abc', { ...platform, TARMAC_SANDBOXD_POOLED: '1' });
    const user = { PLAIN: 'p', HTTP_PROXY: 'http://mine' };
    const claimed = claimedBootEnv(pooled, 'my-box', user);
    const booted = bootEnv('my-box', { ...platform, ...user });
    expect(claimed).toEqual(booted);
    expect(Object.keys(claimed)).toEqual(Object.keys(booted)); // the order processes see
    expect(JSON.stringify(claimed)).not.toContain('sb-abc');
    expect(claimed).not.toHaveProperty('TARMAC_SANDBOXD_POOLED');
  });

  it("gives a runc exec the sandbox's env with sandboxd's own variables blank", () => {
    const args = bootEnvArgs({ HOSTNAME: 'h', A: 'x=y', TARMAC_SANDBOXD_TOKEN: 's3cret' });
    expect(args).toEqual(['--env', 'HOSTNAME=h', '--env', 'A=x=y', '--env', 'TARMAC_SANDBOXD_TOKEN=']);
  });
});
