// Issue 20: "whatever the claim changes inside the sandbox must be indistinguishable, from inside,
// from a sandbox booted for that name". A sandbox claimed from the warm pool and one booted for
// its name, with the same envs, are compared from inside: PID 1's environment (and sandboxd's)
// byte for byte — it is the image's alone, so it carries no pool-time value (the pooled boot's
// hostname, the pool flag) nor anything of the sandbox (packages/engine boot-env.ts) —, the
// hostname by every means, the variables processes get, and the sandbox's boot env file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import { readyPoolMembers } from './pool-support.js';
import {
  cleanUp,
  exec,
  json,
  missingCapability,
  sbx,
  startSandboxPlatform,
  waitFor,
  type SandboxView,
} from './support.js';

const missing = missingCapability();
const IMAGE = 'blaxel/base-image:latest';
const POOL_MEMORY = 512;

describe.skipIf(missing !== null)(
  `a pooled sandbox is, from inside, a booted one${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;

    beforeAll(async () => {
      p = await startSandboxPlatform({
        env: {
          TARMAC_POOL: `${IMAGE}@${POOL_MEMORY}=1`,
          TARMAC_STANDBY_AFTER: '10m',
          TARMAC_BRIDGE: 'tarmacpl2',
          TARMAC_SUBNET: '10.189.0.0/16',
        },
      });
    }, 15 * 60_000);

    afterAll(() => cleanUp(p, ['ident-pooled', 'ident-booted']), 180_000);

    const envs = [
      { name: 'PLAIN_VAR', value: 'plain' },
      { name: 'SECRET_VAR', value: 'ident-s3cret', secret: true },
    ];

    async function create(name: string, memory: number): Promise<SandboxView> {
      const res = await p!.api('/v0/sandboxes', {
        method: 'POST',
        body: JSON.stringify({ metadata: { name }, spec: { runtime: { image: IMAGE, memory, envs } } }),
      });
      const body = await json<SandboxView>(res);
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body;
    }

    /** A pool member is ready once labelled so (frozen, or hot); until then a create boots. */
    const memberReady = () => readyPoolMembers(p!.home).length > 0;

    async function pooledCreate(): Promise<SandboxView> {
      await waitFor('a ready pool member', async () => (memberReady() ? true : undefined), 120_000);
      return create('ident-pooled', POOL_MEMORY);
    }

    /** What a process started in the sandbox sees. */
    async function inside(name: string) {
      const run = async (command: string) => (await exec(p!, name, command)).stdout ?? '';
      const sandboxdPid = (await run('pgrep -f sandboxd-boo[t] | head -1')).trim();
      return {
        init: await run('cat /proc/1/environ | base64 -w0'),
        sandboxd: await run(`cat /proc/${sandboxdPid}/environ | base64 -w0`),
        names: (await run('hostname; uname -n; cat /proc/sys/kernel/hostname; echo "$HOSTNAME"')).trim(),
        envKeys: (await run('env | cut -d= -f1 | sort')).trim(),
        vars: (await run('echo "$PLAIN_VAR $SECRET_VAR"')).trim(),
        bootKeys: (
          await run(
            `python3 -c 'import json; print("\\n".join(sorted(json.load(open("/dev/.tarmac-boot-env.json")))))'`,
          )
        ).trim(),
        bootHas: (await run('cat /dev/.tarmac-boot-env.json')).trim(),
        // Root's only, like /proc/1/environ was: another user of the sandbox cannot read it.
        bootByNobody: (
          await run(
            `python3 -c 'import os; os.setgid(65534); os.setuid(65534); open("/dev/.tarmac-boot-env.json").read()' 2>&1 | tail -1`,
          )
        ).trim(),
      };
    }

    it('has the same PID 1 and sandboxd environment, hostname, variables and boot env as a sandbox booted for its name', async () => {
      const pooled = await pooledCreate();
      expect(pooled.status).toBe('DEPLOYED');
      expect(pooled.events[0]?.message).toContain('warm pool');
      const booted = await create('ident-booted', 256); // a shape the pool does not hold: a boot
      expect(booted.status).toBe('DEPLOYING');
      for (let i = 0; i < 300; i++) {
        const s = await json<SandboxView>(await p!.api('/v0/sandboxes/ident-booted'));
        if (s.status === 'DEPLOYED') break;
        expect(s.status).not.toBe('FAILED');
        await new Promise((r) => setTimeout(r, 100));
      }
      // The pool's warm-up process (sandboxd /_tarmac/warm) is nobody's: not listed, no logs left.
      const listed = await json<unknown[]>(await sbx(p!, 'ident-pooled', '/process'));
      expect(listed).toEqual([]);
      const a = await inside('ident-pooled');
      expect((await exec(p!, 'ident-pooled', 'ls -a /var/log/sandbox-api')).stdout).not.toContain(
        'tarmac-warm',
      );
      const b = await inside('ident-booted');

      // PID 1's env and sandboxd's: the image's, the same bytes in both, nothing of either sandbox.
      expect(a.init).toBe(b.init);
      expect(a.sandboxd).toBe(b.sandboxd);
      for (const environ of [a.init, a.sandboxd]) {
        const text = Buffer.from(environ, 'base64').toString('utf8');
        expect(text).toContain('PATH=');
        for (const absent of ['HOSTNAME=', 'TARMAC_SANDBOXD', 'ident-', 'SECRET_VAR', 'HTTP_PROXY', 'sb-'])
          expect(text).not.toContain(absent);
      }
      // The name by every means, and the envs.
      expect(a.names).toBe(Array(4).fill('ident-pooled').join('\n'));
      expect(b.names).toBe(Array(4).fill('ident-booted').join('\n'));
      expect(a.vars).toBe('plain ident-s3cret');
      expect(b.vars).toBe('plain ident-s3cret');
      // The same variables (values differ only by name and record: HOSTNAME, proxy credentials).
      expect(a.envKeys).toBe(b.envKeys);
      // The boot env file: the same variables, none left from the pooled boot.
      expect(a.bootKeys).toBe(b.bootKeys);
      expect(a.bootHas).toContain('"HOSTNAME":"ident-pooled"');
      expect(a.bootHas).not.toContain('TARMAC_SANDBOXD_POOLED');
      for (const x of [a, b]) expect(x.bootByNobody).toContain('PermissionError');
    }, 240_000);
  },
);
