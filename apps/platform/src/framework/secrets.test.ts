import { SECRET_MASK } from '@tarmac/contract';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox, sealEnvs, sealMap, viewEnvs, viewMap } from './secrets.js';

const box = new SecretBox(randomBytes(32));

describe('SecretBox (AES-256-GCM, random nonce, bound context)', () => {
  it('round-trips, and never produces the same sealed text twice', () => {
    const a = box.seal('hunter2', 'ws/sandbox/a');
    const b = box.seal('hunter2', 'ws/sandbox/a');
    expect(a).not.toBe(b);
    expect(a).not.toContain('hunter2');
    expect(box.open(a, 'ws/sandbox/a')).toBe('hunter2');
    expect(box.open(box.seal('', 'c'), 'c')).toBe('');
  });

  it('refuses another key, another context and any tampering', () => {
    const sealed = box.seal('hunter2', 'ws/sandbox/a');
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'ws/sandbox/a')).toThrow();
    expect(() => box.open(sealed, 'ws/sandbox/b')).toThrow();
    const raw = Buffer.from(sealed.slice('sealed:v1:'.length), 'base64url');
    raw[raw.length - 20]! ^= 1;
    expect(() => box.open(`sealed:v1:${raw.toString('base64url')}`, 'ws/sandbox/a')).toThrow();
    expect(() => box.open('plain', 'ws/sandbox/a')).toThrow(/not sealed/);
    expect(() => new SecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('secret envs and maps', () => {
  it('seals only secret values, masks or reveals them, and keeps a stored value sent back masked', () => {
    const envs = [
      { name: 'A', value: 'open' },
      { name: 'B', value: 'closed', secret: true },
    ];
    const sealed = sealEnvs(box, envs, 'ctx')!;
    expect(sealed[0]).toEqual(envs[0]);
    expect(SecretBox.isSealed(sealed[1]!.value)).toBe(true);
    expect(viewEnvs(box, sealed, 'ctx', 'mask')).toEqual([
      envs[0],
      { name: 'B', value: SECRET_MASK, secret: true },
    ]);
    expect(viewEnvs(box, sealed, 'ctx', 'reveal')).toEqual(envs);
    const resent = sealEnvs(box, [{ name: 'B', value: SECRET_MASK, secret: true }], 'ctx', sealed)!;
    expect(resent[0]!.value).toBe(sealed[1]!.value);
    const changed = sealEnvs(box, [{ name: 'B', value: 'new', secret: true }], 'ctx', sealed)!;
    expect(box.open(changed[0]!.value, 'ctx')).toBe('new');

    const map = sealMap(box, { token: 'abc' }, 'ctx')!;
    expect(viewMap(box, map, 'ctx', 'mask')).toEqual({ token: SECRET_MASK });
    expect(viewMap(box, map, 'ctx', 'reveal')).toEqual({ token: 'abc' });
    expect(sealMap(box, { token: SECRET_MASK }, 'ctx', map)).toEqual(map);
  });
});
