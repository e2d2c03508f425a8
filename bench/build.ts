// Issue 15 bench: time from `tarmac deploy` start to image ready (BUILT) for examples/node-agent,
// cold (fresh platform home: empty builder storage, base image seeded on first build) and warm
// (source change only, dependency layer cached), against `buildah bud` run directly on the same
// folder with the same flags and its own fresh storage. Reports each median and the spread, and the
// platform's overhead as a ratio (platform / bare builder). Goal (issue 15): warm under 10 s,
// overhead under 1.2x.
//
//   node --import tsx bench/build.ts          (RUNS=3 warm rounds)
// Needs root and buildah; uses a bridge/subnet of its own (10.173.0.0/16; BENCH_BRIDGE and
// BENCH_SUBNET override them, so two benches can run side by side) and cleans up after.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_MAIN, REPO_ROOT, removeHome, startPlatform } from '../tests/e2e/support/platform.js';

const RUNS = Number(process.env.RUNS ?? 3);
const SHARED_IMAGES = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';
const BASE_DIR = encodeURIComponent('tarmac/base:latest');
const work = mkdtempSync(join(tmpdir(), 'tarmac-bench-build-'));
// An image store of the bench's own, holding the shared cache's base image (a hard-linked copy:
// not built again), so a cold build finds none of its layers stored (they are shared by content,
// packages/engine images/layer-store.ts) and nothing is left behind.
const IMAGE_DIR = join(work, 'images');
mkdirSync(IMAGE_DIR, { mode: 0o700 });
if (existsSync(join(SHARED_IMAGES, BASE_DIR, 'image.json')))
  execFileSync('cp', ['-al', '--', join(SHARED_IMAGES, BASE_DIR), join(IMAGE_DIR, BASE_DIR)]);
const folder = join(work, 'node-agent');
cpSync(join(REPO_ROOT, 'examples/node-agent'), folder, { recursive: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(1)}..${Math.max(...xs).toFixed(1)}`;
const touch = (i: number) => writeFileSync(join(folder, 'changed.js'), `export const round = ${i};\n`);

/** The platform's own step times, from the build log the CLI streams (builds.service.ts). */
const steps: string[] = [];

function timed(cmd: string, args: string[], env?: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  const secs = (performance.now() - t) / 1000;
  const logged = r.stdout.split('\n').filter((l) => /^(Image built|Built )/.test(l));
  if (logged.length > 0) steps.push(`${secs.toFixed(1)} s: ${logged.join(' | ')}`);
  return secs;
}

// The platform: deploy -> BUILT, through the CLI as a user would.
const p = await startPlatform({
  timeoutMs: 15 * 60_000,
  env: {
    TARMAC_IMAGE_DIR: IMAGE_DIR,
    TARMAC_BRIDGE: process.env.BENCH_BRIDGE ?? 'tmi15bench',
    TARMAC_SUBNET: process.env.BENCH_SUBNET ?? '10.173.0.0/16',
  },
});
const cliEnv = {
  PATH: process.env.PATH,
  HOME: work,
  TARMAC_API_URL: p.url,
  TARMAC_API_KEY: p.credentials.apiKey,
};
const platform = { cold: 0, warm: [] as number[] };
try {
  touch(0);
  platform.cold = timed(process.execPath, [CLI_MAIN, 'deploy', folder], cliEnv);
  for (let i = 1; i <= RUNS; i++) {
    touch(i);
    platform.warm.push(timed(process.execPath, [CLI_MAIN, 'deploy', folder], cliEnv));
  }
} finally {
  await p.stop();
  removeHome(p.home);
}

// The bare builder on the same folder: the Dockerfile the platform generated for it, the same
// flags, its own storage seeded with the same base image (the seeding is not timed, as it is not
// part of a bare `buildah bud`), then `buildah bud` cold and warm.
const storage = join(work, 'buildah');
const bh = [
  '--root',
  join(storage, 'root'),
  '--runroot',
  join(storage, 'run'),
  '--storage-driver',
  'overlay',
];
const base = join(IMAGE_DIR, BASE_DIR, 'layers/000');
const ctr = execFileSync('buildah', [...bh, 'from', 'scratch'], { encoding: 'utf8' }).trim();
const mnt = execFileSync('buildah', [...bh, 'mount', ctr], { encoding: 'utf8' }).trim();
execFileSync('cp', ['-a', `${base}/.`, `${mnt}/`]);
execFileSync('buildah', [...bh, 'umount', ctr]);
execFileSync('buildah', [...bh, 'commit', '--quiet', ctr, 'docker.io/tarmac/base:latest']);
execFileSync('buildah', [...bh, 'rm', ctr]);
const dockerfile = join(work, 'Dockerfile');
writeFileSync(
  dockerfile,
  'FROM tarmac/base:latest\nWORKDIR /app\nENV NODE_ENV=production\nCOPY package.json ./\nCOPY . .\nCMD ["node","index.js"]\n',
);
const bud = (tag: string) =>
  timed('buildah', [
    ...bh,
    'build',
    '--pull=never',
    '--layers',
    '--isolation=oci',
    '--network=host',
    '-f',
    dockerfile,
    '-t',
    tag,
    folder,
  ]);
const bare = { cold: 0, warm: [] as number[] };
try {
  touch(100);
  bare.cold = bud('localhost/bench:cold');
  for (let i = 1; i <= RUNS; i++) {
    touch(100 + i);
    bare.warm.push(bud(`localhost/bench:warm${i}`));
  }
} finally {
  spawnSync('buildah', [...bh, 'rm', '--all']);
  rmSync(work, { recursive: true, force: true });
}

const warmP = median(platform.warm);
const warmB = median(bare.warm);
console.log(
  JSON.stringify(
    {
      machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Number(l.toFixed(2))) },
      seconds: {
        platformCold: Number(platform.cold.toFixed(1)),
        platformWarmMedian: Number(warmP.toFixed(1)),
        platformWarmSpread: spread(platform.warm),
        bareBudCold: Number(bare.cold.toFixed(1)),
        bareBudWarmMedian: Number(warmB.toFixed(1)),
        bareBudWarmSpread: spread(bare.warm),
      },
      ratio: {
        cold: Number((platform.cold / bare.cold).toFixed(1)),
        warm: Number((warmP / warmB).toFixed(1)),
      },
      goals: { warmUnder10s: warmP < 10, overheadUnder1_2x: warmP / warmB < 1.2 },
      platformSteps: steps,
    },
    null,
    2,
  ),
);
