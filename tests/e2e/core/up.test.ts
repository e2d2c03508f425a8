// Issue "Platform core" §2: `tarmac up` against the built binaries — first start creates the
// database, account, workspace and admin key and writes credentials.json (0600); a second start
// reuses everything; SIGTERM lets an in-flight request finish; --port, --host, --home, TARMAC_HOME.
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CLI_MAIN,
  freePort,
  PLATFORM_MAIN,
  removeHome,
  startPlatform,
  tempHome,
} from '../support/platform.js';
import { isolatedEnv, spawnNode, waitForPlatform } from './process.js';

const homes: string[] = [];
const home = () => {
  const dir = tempHome();
  homes.push(dir);
  return dir;
};
afterAll(() => homes.forEach(removeHome));

describe('tarmac platform binary: first start, second start, SIGTERM', () => {
  it('creates the account, workspace and admin key once, and reuses them on the next start', async () => {
    const dir = home();
    const first = await startPlatform({ home: dir, env: await isolatedEnv() });
    expect(Object.keys(first.credentials).sort()).toEqual([
      'accountId',
      'apiKey',
      'apiUrl',
      'runUrl',
      'workspace',
    ]);
    expect(first.credentials.workspace).toBe('default');
    expect(first.credentials.apiUrl).toBe(first.url);
    expect(first.credentials.runUrl).toBe(first.url);
    expect(first.credentials.apiKey).toMatch(/^ak_/);
    expect(first.credentials.accountId).toMatch(/^acc_/);
    expect(statSync(join(dir, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    expect(existsSync(join(dir, 'tarmac.db'))).toBe(true);
    // Printed once, with the account and workspace.
    expect(first.output()).toContain(first.credentials.apiKey);
    expect(first.output()).toContain(first.credentials.accountId);
    const workspaces = await first.api('/v0/workspaces');
    expect(workspaces.status).toBe(200);
    expect(((await workspaces.json()) as { name: string }[]).map((w) => w.name)).toEqual(['default']);
    const accounts = (await (await first.api('/v0/accounts')).json()) as { id: string; isAdmin: boolean }[];
    expect(accounts).toEqual([expect.objectContaining({ id: first.credentials.accountId, isAdmin: true })]);
    const created = await first.api('/v0/workspaces', {
      method: 'POST',
      body: JSON.stringify({ name: 'kept' }),
    });
    expect(created.status).toBe(200);
    const jwks1 = await (await fetch(`${first.url}/.well-known/jwks.json`)).json();
    expect(await first.stop('SIGTERM')).toBe(0);

    const second = await startPlatform({ home: dir, env: await isolatedEnv() });
    expect(second.credentials.accountId).toBe(first.credentials.accountId);
    expect(second.credentials.apiKey).toBe(first.credentials.apiKey);
    expect(second.output()).not.toContain(first.credentials.apiKey);
    expect((await second.api('/v0/accounts')).status).toBe(200);
    expect((await second.api('/v0/workspaces/kept')).status).toBe(200);
    expect(await (await fetch(`${second.url}/.well-known/jwks.json`)).json()).toEqual(jwks1);
    expect(await second.stop('SIGTERM')).toBe(0);
  });

  it('on SIGTERM, a request in flight completes before the process exits 0', async () => {
    const platform = await startPlatform({ home: home(), env: await isolatedEnv() });
    const body = JSON.stringify({ name: 'in-flight', displayName: 'Sent across SIGTERM' });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        `${platform.url}/v0/workspaces`,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${platform.credentials.apiKey}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      // Half the body now, the rest after SIGTERM: the request is in flight when the signal lands.
      req.write(body.slice(0, 10));
      setTimeout(() => {
        void platform.stop('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 400);
      }, 200);
    });
    const started = Date.now();
    const result = await response;
    expect(result.status).toBe(200);
    expect(JSON.parse(result.text)).toMatchObject({ name: 'in-flight' });
    // A second SIGTERM during shutdown (Ctrl-C reaches `tarmac up` and its child) must not kill it.
    expect(await platform.stop('SIGTERM')).toBe(0);
    expect(Date.now() - started).toBeLessThan(8_000);
    // New connections are refused once it is down.
    await expect(fetch(`${platform.url}/health`)).rejects.toThrow();
  });

  it('`tarmac up` through the CLI binary with --port, --host and --home, stopped by SIGTERM', async () => {
    const dir = home();
    const port = await freePort();
    const cli = spawnNode(
      [CLI_MAIN, 'up', '--port', String(port), '--host', '127.0.0.1', '--home', dir],
      await isolatedEnv(),
    );
    const url = `http://127.0.0.1:${port}`;
    const credentials = await waitForPlatform(cli, url, dir);
    expect(credentials.apiUrl).toBe(url);
    const res = await fetch(`${url}/v0/workspaces`, {
      headers: { authorization: `Bearer ${credentials.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(cli.output()).toContain(credentials.apiKey);
    expect(await cli.stop('SIGTERM')).toBe(0);
  });

  it('--host binds only that address and is reflected in apiUrl', async () => {
    const dir = home();
    const port = await freePort();
    const proc = spawnNode(
      [PLATFORM_MAIN, '--port', String(port), '--host', '127.0.0.2', '--home', dir],
      await isolatedEnv(),
    );
    const credentials = await waitForPlatform(proc, `http://127.0.0.2:${port}`, dir);
    expect(credentials.apiUrl).toBe(`http://127.0.0.2:${port}`);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    expect(await proc.stop('SIGTERM')).toBe(0);
  });

  it('data goes to TARMAC_HOME without --home, and to ~/.tarmac without either', async () => {
    const viaEnv = home();
    const port = await freePort();
    const withEnv = spawnNode(
      [PLATFORM_MAIN, '--port', String(port)],
      await isolatedEnv({ TARMAC_HOME: viaEnv }),
    );
    const fromEnv = await waitForPlatform(withEnv, `http://127.0.0.1:${port}`, viaEnv);
    expect(fromEnv.apiKey).toMatch(/^ak_/);
    expect(existsSync(join(viaEnv, 'tarmac.db'))).toBe(true);
    expect(await withEnv.stop('SIGTERM')).toBe(0);

    const fakeHome = mkdtempSync(join(tmpdir(), 'tarmac-userhome-'));
    homes.push(fakeHome);
    const port2 = await freePort();
    const withDefault = spawnNode(
      [PLATFORM_MAIN, '--port', String(port2)],
      await isolatedEnv({ TARMAC_HOME: undefined, HOME: fakeHome }),
    );
    const fromDefault = await waitForPlatform(
      withDefault,
      `http://127.0.0.1:${port2}`,
      join(fakeHome, '.tarmac'),
    );
    expect(JSON.parse(readFileSync(join(fakeHome, '.tarmac', 'credentials.json'), 'utf8'))).toEqual(
      fromDefault,
    );
    expect(await withDefault.stop('SIGTERM')).toBe(0);
  });

  it('refuses a bad --port with a message and exit code 2', async () => {
    const proc = spawnNode([PLATFORM_MAIN, '--port', 'eighty', '--home', home()], await isolatedEnv());
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('--port');
  });
});
