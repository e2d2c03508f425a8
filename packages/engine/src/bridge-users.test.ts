import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeUsers } from './bridge-users.js';

describe('BridgeUsers', () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'bridge-users-'));
    dirs.push(d);
    return join(d, 'br0');
  };
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('the last live user is told so; an earlier one is not', () => {
    const d = dir();
    const alive = new Set([101, 102]);
    const a = new BridgeUsers(d, 101, (p) => alive.has(p));
    const b = new BridgeUsers(d, 102, (p) => alive.has(p));
    a.register();
    b.register();
    expect(a.unregister()).toBe(false);
    alive.delete(101);
    expect(b.unregister()).toBe(true);
  });

  it('a user that died without unregistering does not keep the bridge', () => {
    const d = dir();
    new BridgeUsers(d, 201, () => false).register();
    const me = new BridgeUsers(d, 202, (p) => p === 202);
    me.register();
    expect(me.unregister()).toBe(true);
  });

  it('remembers whether an engine created the bridge', () => {
    const users = new BridgeUsers(dir(), 301, () => true);
    expect(users.created()).toBe(false);
    users.markCreated();
    expect(users.created()).toBe(true);
    users.forgetCreated();
    expect(users.created()).toBe(false);
  });
});
