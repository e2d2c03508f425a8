// The built CLI (apps/cli/scripts/bundle.mjs): `tarmac deploy` and `tarmac push` run a bundle of
// their own that holds neither zod nor the contract's schemas (issue 15 bench: building them was
// half of the CLI's start, a sixth of a warm rebuild), and every other command the full one.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN } from '../support/platform.js';

const dist = dirname(CLI_MAIN);
const read = (name: string) => readFileSync(join(dist, name), 'utf8');
// Markers of zod (its schema internals) and of the contract (a route table's operation id).
const zod = /_zod\b/;
const contract = /operationId/;

describe('the CLI bundles', () => {
  it('deploy/push bundle: no zod, no route table; the full bundle has both (the check is real)', () => {
    const deploy = read('cli-deploy.mjs');
    const full = read('cli-full.mjs');
    expect(full).toMatch(zod);
    expect(full).toMatch(contract);
    expect(deploy).not.toMatch(zod);
    expect(deploy).not.toMatch(contract);
    expect(deploy.length).toBeLessThan(full.length / 4);
  });

  it('the entry picks the bundle by the first argument', () => {
    const run = (args: string[]) =>
      spawnSync(process.execPath, [CLI_MAIN, ...args], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp' },
      });
    // `deploy --help` prints the deploy command's usage; `--help` lists every command.
    const deployHelp = run(['deploy', '--help']);
    expect(deployHelp.status).toBe(0);
    expect(deployHelp.stdout).toContain('Usage: tarmac deploy [options] [dir]');
    expect(deployHelp.stdout).toContain('--no-wait');
    const pushHelp = run(['push', '--help']);
    expect(pushHelp.stdout).toContain('Usage: tarmac push [options] [dir]');
    const help = run(['--help']);
    expect(help.stdout).toMatch(/deploy \[options\] \[dir\]/);
    expect(help.stdout).toMatch(/sandbox/);
  });
});
