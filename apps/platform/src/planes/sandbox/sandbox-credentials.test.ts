import { describe, expect, it } from 'vitest';
import { SandboxCredentials } from './sandbox-credentials.js';

describe('per-sandbox credentials (issue 19 item 3)', () => {
  const key = new Uint8Array(32).fill(1);
  const c = new SandboxCredentials(key);

  it('are 256-bit, stable across instances of the same key (a restart re-attaches), apart per purpose and sandbox', () => {
    const token = c.sandboxdToken('rec-1');
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(new SandboxCredentials(key).sandboxdToken('rec-1')).toBe(token);
    expect(c.egressPassword('rec-1')).not.toBe(token);
    expect(c.sandboxdToken('rec-2')).not.toBe(token);
    expect(new SandboxCredentials(new Uint8Array(32).fill(2)).sandboxdToken('rec-1')).not.toBe(token);
  });

  it('checks an egress password in constant time, only for its own sandbox', () => {
    expect(c.egressPasswordMatches('rec-1', c.egressPassword('rec-1'))).toBe(true);
    expect(c.egressPasswordMatches('rec-2', c.egressPassword('rec-1'))).toBe(false);
    expect(c.egressPasswordMatches('rec-1', c.sandboxdToken('rec-1'))).toBe(false);
    expect(c.egressPasswordMatches('rec-1', '')).toBe(false);
    expect(c.egressPasswordMatches('rec-1', `${c.egressPassword('rec-1')}0`)).toBe(false);
  });
});
