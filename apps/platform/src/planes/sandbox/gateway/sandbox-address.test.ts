import { describe, expect, it } from 'vitest';
import { hostTarget, pathTarget } from './sandbox-address.js';

describe('sandbox addresses', () => {
  it('reads sbx-<name with -- for ->-<ws> canonically, keeps plain-form splits as legacy readings', () => {
    const t = hostTarget('sbx-my-box-team-a.local.localhost:8080', '/process?x=1', 'localhost');
    expect(t?.canonical).toEqual({ name: 'my', workspace: 'box-team-a' });
    expect(t?.legacy).toEqual([
      { name: 'my-box', workspace: 'team-a' },
      { name: 'my-box-team', workspace: 'a' },
    ]);
    expect(t?.path).toBe('/process?x=1');
    expect(hostTarget('sbx-my--box-team-a.localhost', '/', 'localhost')?.canonical).toEqual({
      name: 'my-box',
      workspace: 'team-a',
    });
    expect(hostTarget('sbx-a-b.localhost', '/', 'localhost')).toEqual({
      canonical: { name: 'a', workspace: 'b' },
      legacy: [],
      path: '/',
    });
  });

  it('issue 19 item 12: (team, x-ai) and (ai-team, x) have different canonical hosts', () => {
    expect(hostTarget('sbx-x--ai-team.local.localhost', '/', 'localhost')?.canonical).toEqual({
      workspace: 'team',
      name: 'x-ai',
    });
    expect(hostTarget('sbx-x-ai-team.local.localhost', '/', 'localhost')?.canonical).toEqual({
      workspace: 'ai-team',
      name: 'x',
    });
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
      canonical: { workspace: 'team', name: 'box' },
      legacy: [],
      path: '/filesystem/tmp?a=1',
    });
    expect(pathTarget('/team/sandboxes/box')?.path).toBe('/');
    expect(pathTarget('/team/sandboxes/box?q=1')?.path).toBe('/?q=1');
    expect(pathTarget('/v0/sandboxes/box')).toBeUndefined();
    expect(pathTarget('/team/agents/box')).toBeUndefined();
  });
});
