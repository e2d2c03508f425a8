// Trigger paths (reference control-plane.md §5.2): mounted at {ws}{path} as an alias of the
// workload's root, the longest first, never over another workload's URL space or another
// gateway's, and `?async=true` on an agent's own URL (§5.3) with the parameter not forwarded.
import { describe, expect, it } from 'vitest';
import type { RunRecord, RunTrigger } from '../run-ports.js';
import { asyncAddress } from './async-address.js';
import { mountPath, TriggerRoutes } from './trigger-routes.js';
import { runRecord } from '../../../test-support/run-record.js';

const trigger = (id: string, path: string, over: Partial<RunTrigger> = {}): RunTrigger => ({
  id,
  type: 'http',
  path,
  public: false,
  callbackUrl: undefined,
  retry: undefined,
  timeoutSeconds: undefined,
  ...over,
});
const record = (
  kind: 'agent' | 'function',
  name: string,
  triggers: RunTrigger[],
  workspace = 'ws',
): RunRecord =>
  runRecord({ id: `${kind}-${name}`, kind, workspace, name, image: 'img', maxScale: 10, triggers });

describe('trigger routes', () => {
  it('mounts a path as an alias of the workload root, sub-paths and query forwarded', () => {
    const routes = new TriggerRoutes();
    routes.update([record('agent', 'echo', [trigger('t1', '/hooks/in', { public: true })])]);
    expect(routes.match('/ws/hooks/in')).toMatchObject({ kind: 'agent', name: 'echo', path: '/' });
    expect(routes.match('/ws/hooks/in/a/b?x=1')).toMatchObject({
      path: '/a/b?x=1',
      trigger: { id: 't1', public: true },
    });
    expect(routes.match('/ws/hooks/in?x=1')?.path).toBe('/?x=1');
    expect(routes.match('/ws/hooks/inside')).toBeUndefined(); // segment boundary
    expect(routes.match('/other/hooks/in')).toBeUndefined(); // another workspace
    expect(routes.match('/ws/hooks')).toBeUndefined();
  });

  it('the longest path wins; the same records always give the same table', () => {
    const routes = new TriggerRoutes();
    routes.update([
      record('agent', 'b', [trigger('t', '/x')]),
      record('agent', 'a', [trigger('t', '/x')]),
      record('function', 'f', [trigger('t', '/x/deeper')]),
    ]);
    expect(routes.match('/ws/x/deeper/1')).toMatchObject({ kind: 'function', name: 'f', path: '/1' });
    expect(routes.match('/ws/x/1')).toMatchObject({ name: 'a', path: '/1' });
  });

  it('may mount under its own URL (the reference example), never another workload’s or gateway’s', () => {
    expect(mountPath('agent', 'my-agent', '/agents/my-agent/sync')).toBe('/agents/my-agent/sync');
    expect(mountPath('agent', 'my-agent', '/agents/other/sync')).toBeUndefined();
    expect(mountPath('agent', 'my-agent', '/functions/my-agent')).toBeUndefined();
    expect(mountPath('function', 'f', '/functions/f/hook')).toBe('/functions/f/hook');
    for (const p of ['/models/gpt', '/jobs/j/executions', '/applications/x', '/', '', '/a/../b', undefined])
      expect(mountPath('agent', 'a', p)).toBeUndefined();
    expect(mountPath('agent', 'a', '//x//y/')).toBe('/x/y');
    const routes = new TriggerRoutes();
    routes.update([record('agent', 'evil', [trigger('t', '/agents/victim', { public: true })])]);
    expect(routes.match('/ws/agents/victim')).toBeUndefined();
  });

  it('async: an http-async trigger path, or ?async=true on an agent URL (parameter dropped)', () => {
    const t = trigger('a', '/later', { type: 'http-async' });
    expect(asyncAddress({ kind: 'agent', workspace: 'ws', name: 'a', path: '/', trigger: t })).toBeDefined();
    expect(
      asyncAddress({ kind: 'agent', workspace: 'ws', name: 'a', path: '/', trigger: trigger('h', '/now') }),
    ).toBeUndefined();
    expect(asyncAddress({ kind: 'agent', workspace: 'ws', name: 'a', path: '/x?async=true&k=v' })?.path).toBe(
      '/x?k=v',
    );
    expect(asyncAddress({ kind: 'agent', workspace: 'ws', name: 'a', path: '/?async=true' })?.path).toBe('/');
    expect(
      asyncAddress({ kind: 'agent', workspace: 'ws', name: 'a', path: '/?async=false' }),
    ).toBeUndefined();
    expect(
      asyncAddress({ kind: 'function', workspace: 'ws', name: 'f', path: '/mcp?async=true' }),
    ).toBeUndefined();
  });
});
