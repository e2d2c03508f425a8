import { describe, expect, it } from 'vitest';
import { execEnvArgs, HIDDEN_PREFIX, sandboxdProcessEnv } from './sandboxd-env.js';

describe('sandboxd process env', () => {
  it('renames NODE_EXTRA_CA_CERTS and NODE_OPTIONS only, keeping every other variable and the order', () => {
    const env = [
      'PATH=/bin',
      'NODE_EXTRA_CA_CERTS=/ca.crt',
      'NODE_EXTRA_CA_CERTS_X=y',
      'A=b=c',
      'NODE_OPTIONS=--x',
    ];
    expect(sandboxdProcessEnv(env)).toEqual([
      'PATH=/bin',
      `${HIDDEN_PREFIX}NODE_EXTRA_CA_CERTS=/ca.crt`,
      'NODE_EXTRA_CA_CERTS_X=y',
      'A=b=c',
      `${HIDDEN_PREFIX}NODE_OPTIONS=--x`,
    ]);
  });

  it('gives runc exec the hidden variables back under their own names', () => {
    const env = sandboxdProcessEnv(['PATH=/bin', 'NODE_EXTRA_CA_CERTS=/ca=1.crt']);
    expect(execEnvArgs(env)).toEqual(['--env', 'NODE_EXTRA_CA_CERTS=/ca=1.crt']);
    expect(execEnvArgs(['PATH=/bin'])).toEqual([]);
  });

  it("blanks sandboxd's own token for runc exec (it copies the container env and cannot unset)", () => {
    const env = sandboxdProcessEnv(['PATH=/bin', 'TARMAC_SANDBOXD_TOKEN=s3cret']);
    expect(env).toContain('TARMAC_SANDBOXD_TOKEN=s3cret'); // sandboxd itself reads it
    expect(execEnvArgs(env)).toEqual(['--env', 'TARMAC_SANDBOXD_TOKEN=']);
  });
});
