import { describe, expect, it } from 'vitest';
import { hostTarget, pathTarget } from './sandbox-address.js';

describe('sandbox addresses', () => {
  it('splits sbx-<name>-<ws> every way names with dashes allow, region label optional, port ignored', () => {
    const t = hostTarget('sbx-my-box-team-a.local.localhost:8080', '/process?x=1', 'localhost');
    expect(t?.candidates).toEqual([
      { name: 'my', workspace: 'box-team-a' },
      { name: 'my-box', workspace: 'team-a' },
      { name: 'my-box-team', workspace: 'a' },
    ]);
    expect(t?.path).toBe('/process?x=1');
    expect(hostTarget('sbx-a-b.localhost', '/', 'localhost')?.candidates).toEqual([
      { name: 'a', workspace: 'b' },
    ]);
  });

  it('ignores hosts that are not sandbox hosts of this domain', () => {
    expect(hostTarget('127.0.0.1:8080', '/', 'localhost')).toBeUndefined();
    expect(hostTarget('sbx-a-b.local.example.com', '/', 'localhost')).toBeUndefined();
    expect(hostTarget('sbx-ab.local.localhost', '/', 'localhost')).toBeUndefined(); // no workspace part
    expect(hostTarget('x.sbx-a-b.local.localhost', '/', 'localhost')).toBeUndefined();
    expect(hostTarget(undefined, '/', 'localhost')).toBeUndefined();
  });

  it('matches path-style {ws}/sandboxes/{name}/..., never a reserved first segment like /v0', () => {
    expect(pathTarget('/team/sandboxes/box/filesystem/tmp?a=1')).toEqual({
      candidates: [{ workspace: 'team', name: 'box' }],
      path: '/filesystem/tmp?a=1',
    });
    expect(pathTarget('/team/sandboxes/box')?.path).toBe('/');
    expect(pathTarget('/team/sandboxes/box?q=1')?.path).toBe('/?q=1');
    expect(pathTarget('/v0/sandboxes/box')).toBeUndefined();
    expect(pathTarget('/team/agents/box')).toBeUndefined();
  });
});
