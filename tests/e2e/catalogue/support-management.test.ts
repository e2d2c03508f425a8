// Issue 3 part B, end to end against the built platform binary: the spec's Management API rows for
// supporting resources — POST /v0/images/{resourceType}/{imageName}/share, GET
// /v0/templates/{templateName}, POST /v0/integrations/connections then POST /v0/functions
// referencing it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeHome, startPlatform, type RunningPlatform } from '../support/platform.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- loose reads

describe('management API: images, templates, connections and functions against the built platform', () => {
  let p: RunningPlatform;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await p.api(path, { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };

  beforeAll(async () => {
    p = await startPlatform();
  }, 120_000);
  afterAll(async () => {
    await p?.stop();
    if (p) removeHome(p.home); // issue 14 item 9: this home used to stay in /tmp
  });

  it('POST /v0/images/{resourceType}/{imageName}/share: same account applies at once; rules 1-2 give 400s', async () => {
    const ws = p.credentials.workspace;
    const registered = await call('POST', `/v0/images?workspace=${ws}`, {
      resourceType: 'agents',
      name: 'e2e-img',
      image: 'ghcr.io/acme/e2e-img:v1',
      size: 4096,
    });
    expect(registered.status).toBe(200);
    expect(registered.body.image).toBe('agents/e2e-img:v1');
    expect((await call('POST', '/v0/workspaces', { name: 'e2e-target' })).status).toBe(200);

    const shared = await call('POST', `/v0/images/agents/e2e-img/share?workspace=${ws}`, {
      targetWorkspace: 'e2e-target',
    });
    expect(shared.status).toBe(200);
    expect(shared.body.metadata).toMatchObject({
      name: 'e2e-img',
      resourceType: 'agents',
      workspace: 'e2e-target',
      sourceWorkspace: ws,
    });
    expect(shared.body.spec).toEqual({
      size: 4096,
      tags: [{ name: 'v1', size: 4096, createdAt: expect.any(String), updatedAt: expect.any(String) }],
    });
    const there = await call('GET', '/v0/images/agents/e2e-img?workspace=e2e-target');
    expect(there.status).toBe(200);

    const badType = await call('POST', `/v0/images/models/e2e-img/share?workspace=${ws}`, {
      targetWorkspace: 'e2e-target',
    });
    expect(badType.status).toBe(400);
    expect(badType.body.message).toMatch(/resourceType.*agents, functions, sandboxes, jobs/);
    const noTarget = await call('POST', `/v0/images/agents/e2e-img/share?workspace=${ws}`, {});
    expect(noTarget.status).toBe(400);
    expect(noTarget.body.message).toContain('body.targetWorkspace');
    const wrongAccount = await call('POST', `/v0/images/agents/e2e-img/share?workspace=${ws}`, {
      targetWorkspace: 'e2e-target',
      targetAccountId: 'acc_someone_else',
    });
    expect(wrongAccount.status).toBe(400);
    expect(wrongAccount.body.message).toContain('body.targetAccountId');
  });

  it('GET /v0/templates/{templateName} answers a template of the built-in catalogue', async () => {
    const list = await call('GET', '/v0/templates');
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThanOrEqual(5);
    const one = await call('GET', '/v0/templates/template-mcp-typescript');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      name: 'template-mcp-typescript',
      defaultBranch: 'main',
      topics: expect.arrayContaining(['mcp']),
    });
    for (const field of ['description', 'url', 'sha', 'icon', 'iconDark'])
      expect(typeof one.body[field]).toBe('string');
    for (const field of ['downloadCount', 'forksCount', 'starCount'])
      expect(Number.isInteger(one.body[field])).toBe(true);
    expect((await call('GET', '/v0/templates/no-such-template')).status).toBe(404);
  });

  it('POST /v0/integrations/connections then POST /v0/functions referencing it (the integration flow)', async () => {
    const ws = p.credentials.workspace;
    const missing = await call('POST', `/v0/functions?workspace=${ws}`, {
      metadata: { name: 'e2e-gmail', displayName: 'Gmail' },
      spec: { type: 'mcp', integrationConnections: ['e2e-gmail-conn'], runtime: { type: 'mcp' } },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('e2e-gmail-conn');

    const connection = await call('POST', `/v0/integrations/connections?workspace=${ws}`, {
      metadata: { name: 'e2e-gmail-conn', displayName: 'Gmail' },
      spec: {
        integration: 'gmail',
        secret: { CLIENT_ID: 'client', CLIENT_SECRET: 'e2e-client-secret', REFRESH_TOKEN: 'e2e-refresh' },
      },
    });
    expect(connection.status).toBe(200);
    expect(connection.body.spec.secret).toEqual({
      CLIENT_ID: '********',
      CLIENT_SECRET: '********',
      REFRESH_TOKEN: '********',
    });
    const fn = await call('POST', `/v0/functions?workspace=${ws}`, {
      metadata: { name: 'e2e-gmail', displayName: 'Gmail' },
      spec: { type: 'mcp', integrationConnections: ['e2e-gmail-conn'], runtime: { type: 'mcp' } },
    });
    expect(fn.status).toBe(200);
    expect(fn.body.spec).toMatchObject({
      type: 'mcp',
      integrationConnections: ['e2e-gmail-conn'],
      runtime: { type: 'mcp' },
    });
    expect(fn.body.metadata.url).toMatch(new RegExp(`/${ws}/functions/e2e-gmail$`));
    const inUse = await call('DELETE', `/v0/integrations/connections/e2e-gmail-conn?workspace=${ws}`);
    expect(inUse.status).toBe(409);
    const all = JSON.stringify(
      await call('GET', `/v0/integrations/connections/e2e-gmail-conn?workspace=${ws}`),
    );
    expect(all).not.toMatch(/e2e-client-secret|e2e-refresh/);
  });
});
