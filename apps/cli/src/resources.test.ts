import { ConflictError } from '@tarmac/sdk';
import { describe, expect, it } from 'vitest';
import { RESOURCE_TYPES, findResourceType } from './resources.js';

describe('resource table', () => {
  it('finds types by name, alias and kind, case-insensitively', () => {
    expect(findResourceType('sbx')?.name).toBe('sandboxes');
    expect(findResourceType('Sandbox')?.name).toBe('sandboxes');
    expect(findResourceType('mcp')?.name).toBe('functions');
    expect(findResourceType('IntegrationConnection')?.name).toBe('integrationconnections');
    expect(findResourceType('WS')?.name).toBe('workspaces');
    expect(findResourceType('gizmo')).toBeUndefined();
  });

  it('has no word that means two types', () => {
    // A type's kind may equal its own singular alias (sandbox / Sandbox); across types, no repeats.
    const clashes = RESOURCE_TYPES.flatMap((t) =>
      [t.name, ...t.aliases].filter((w) =>
        RESOURCE_TYPES.some((o) => o !== t && [o.name, ...o.aliases, o.kind.toLowerCase()].includes(w)),
      ),
    );
    expect(clashes).toEqual([]);
  });

  it('creates sandboxes first (PUT on 409) and PUTs the other envelope kinds first', async () => {
    const calls: string[] = [];
    const fake = {
      call: async (method: string, path: string) => {
        calls.push(`${method} ${path}`);
        if (method === 'POST' && path === '/v0/sandboxes') {
          throw new ConflictError({
            status: 409,
            code: 'conflict',
            message: 'exists',
            method,
            url: path,
            body: undefined,
          });
        }
        return {};
      },
    };
    const doc = { kind: 'Sandbox', metadata: { name: 'a' }, spec: {} };
    expect(await findResourceType('sandbox')?.apply?.(fake as never, doc)).toBe('configured');
    expect(await findResourceType('agent')?.apply?.(fake as never, { ...doc, kind: 'Agent' })).toBe(
      'configured',
    );
    expect(calls).toEqual(['POST /v0/sandboxes', 'PUT /v0/sandboxes/a', 'PUT /v0/agents/a']);
  });
});

describe('sandbox columns (issue 14 item 9)', () => {
  const sandboxes = RESOURCE_TYPES.find((t) => t.name === 'sandboxes');
  const cells = (item: Record<string, unknown>) =>
    Object.fromEntries((sandboxes?.columns ?? []).map(([header, cell]) => [header, cell(item)]));

  it('shows STANDBY for a deployed sandbox in standby, the status otherwise', () => {
    const base = { metadata: { name: 'hello' }, spec: {} };
    expect(cells({ ...base, status: 'DEPLOYED', state: 'STANDBY' }).status).toBe('STANDBY');
    expect(cells({ ...base, status: 'DEPLOYED', state: 'RUNNING' }).status).toBe('DEPLOYED');
    expect(cells({ ...base, status: 'DEPLOYING' }).status).toBe('DEPLOYING');
    expect(cells({ ...base, status: 'TERMINATED', state: 'STANDBY' }).status).toBe('TERMINATED');
  });

  it('names the image, the base image when the spec names none', () => {
    expect(cells({ metadata: { name: 'a' }, spec: {} }).image).toBe('tarmac/base:latest');
    expect(cells({ metadata: { name: 'b' }, spec: { runtime: { image: 'blaxel/py:1' } } }).image).toBe(
      'blaxel/py:1',
    );
  });
});
