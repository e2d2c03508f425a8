import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildProxyEnv,
  needsNetwork,
  type BuildNetworkLease,
  type BuildNetworkMode,
  type BuildNetworkProvider,
} from './build-network.js';
import { parseImages, staleImages, StorageGate, type CacheLimits } from './builder-cache.js';
import { endScratch, forgetPid, notePid, reapBuilderOrphans, scratchRoot } from './builder-orphans.js';
import { layoutComplete } from './layer-export.js';

/**
 * The image builder (issue 15 "Builds"): buildah from Debian's packages, rootful, with its own
 * storage under TARMAC_HOME (never the host's /var/lib/containers), `--pull=never` (a FROM names
 * an image the platform already has, never a registry), RUN steps in runc (`--isolation oci`) with
 * a memory limit, and a wall-clock limit on the whole build. Not a Dockerfile interpreter of our own.
 */
export interface BuildahOptions {
  /** buildah's storage (`--root`) and run state (`--runroot`). */
  root: string;
  runroot: string;
  isolation: 'oci' | 'chroot';
  /** What RUN steps may reach (build-network.ts): the public internet through the build proxy by default. */
  network: BuildNetworkMode;
  /** The per-build namespace and proxy behind `egress` (compose.ts hands it in). */
  egress?: BuildNetworkProvider;
  memoryMB: number;
  timeoutMs: number;
  /** Extra CAs trusted inside build steps (operator CA, TLS-inspecting proxies), PEM. */
  trustedCaPem: string;
  /** The buildah binary (tests may point elsewhere). */
  binary?: string;
}

export interface BuildRequest {
  contextDir: string;
  dockerfile: string;
  /** Where the image goes: `oci:<layout dir>:<name>` (layer-export.ts) or a storage tag. */
  output: string;
  buildArgs: Record<string, string>;
  /** `--secret id=<id>,src=<file>`: files outside the context, never in the image. */
  secrets: Array<{ id: string; file: string }>;
  log: (line: string) => void;
  signal: AbortSignal;
}

export class BuildFailure extends Error {}

/** The base image as the engine stores it: one rootfs dir plus its run settings. */
export interface SeedImage {
  name: string;
  rootfs: string;
  env: string[];
  workingDir: string;
  /** Changes when the stored image changes (re-seeded then). */
  version: string;
}

export class Buildah {
  private caBundle: string | undefined;
  /** The seeded base image's name: a FROM of it alone needs no network (needsNetwork). */
  private baseName = '';
  /** Builds and cache prunes take turns on the storage (builder-cache.ts). */
  private readonly gate = new StorageGate();

  constructor(private readonly o: BuildahOptions) {}

  /**
   * Makes `image` a buildah image named `docker.io/<name>` (what an unqualified FROM resolves to
   * with --pull=never) by copying its rootfs into a scratch container; once per version.
   */
  async seed(image: SeedImage, log: (line: string) => void, signal: AbortSignal): Promise<void> {
    mkdirSync(this.o.root, { recursive: true });
    // Build steps trust the base image's CAs plus the operator's (mounted, never in a layer).
    const bundle = join(image.rootfs, 'etc/ssl/certs/ca-certificates.crt');
    this.caBundle = (existsSync(bundle) ? readFileSync(bundle, 'utf8') : '') + '\n' + this.o.trustedCaPem;
    this.baseName = image.name;
    const marker = join(this.o.root, `.seeded-${Buffer.from(image.name).toString('hex')}`);
    if (existsSync(marker) && readFileSync(marker, 'utf8') === image.version) return;
    log(`Preparing base image ${image.name} for builds`);
    const ctr = (await this.run(['from', '--pull=never', 'scratch'], () => {}, signal)).trim();
    try {
      const mnt = (await this.run(['mount', ctr], () => {}, signal)).trim();
      await run('cp', ['-a', '--', `${image.rootfs}/.`, `${mnt}/`], log, signal, this.o.timeoutMs);
      await this.run(['umount', ctr], () => {}, signal);
      const env = image.env.flatMap((e) => ['--env', e]);
      await this.run(['config', ...env, '--workingdir', image.workingDir, ctr], log, signal);
      await this.run(['commit', '--quiet', ctr, `docker.io/${image.name}`], log, signal);
    } finally {
      await this.run(['rm', ctr], () => {}, new AbortController().signal).catch(() => undefined);
    }
    writeFileSync(marker, image.version);
  }

  /** `buildah build`; throws BuildFailure with the builder's message when the build fails. */
  async build(r: BuildRequest): Promise<void> {
    await this.gate.enter();
    try {
      await this.buildGated(r);
    } finally {
      this.gate.leave();
    }
  }

  private async buildGated(r: BuildRequest): Promise<void> {
    const caFile = join(this.o.root, 'build-ca-bundle.crt');
    writeFileSync(caFile, this.caBundle ?? this.o.trustedCaPem);
    const needed = this.o.network !== 'egress' || needsNetwork(readText(r.dockerfile), this.baseName);
    const lease = needed ? await this.openNetwork() : undefined;
    if (!needed)
      r.log('Built without a network: the Dockerfile runs and fetches nothing (no RUN, ADD, ONBUILD)');
    // This build's own runc state and TMPDIR: whatever outlives buildah is found there.
    const scratch = join(scratchRoot(this.o), randomBytes(6).toString('hex'));
    mkdirSync(join(scratch, 'tmp'), { recursive: true, mode: 0o700 });
    try {
      await this.buildIn(r, caFile, lease, scratch);
    } finally {
      endScratch(scratch);
      await lease?.release();
    }
  }

  /** The egress namespace and proxy, in `egress` mode. */
  private async openNetwork(): Promise<BuildNetworkLease | undefined> {
    if (this.o.network !== 'egress') return undefined;
    if (!this.o.egress)
      throw new BuildFailure('the build network (TARMAC_BUILD_NETWORK=egress) is not set up');
    try {
      return await this.o.egress.open();
    } catch (err) {
      throw new BuildFailure(`the build network could not be set up: ${(err as Error).message}`);
    }
  }

  private async buildIn(
    r: BuildRequest,
    caFile: string,
    lease: BuildNetworkLease | undefined,
    scratch: string,
  ): Promise<void> {
    // The build's proxy password is good for this build only and revoked after it; still, a step
    // that prints its environment does not put it in the log.
    const password = lease ? new URL(lease.proxyUrl).password : '';
    const log = password ? (line: string) => r.log(line.replaceAll(password, '****')) : r.log;
    const args = [
      'build',
      '--pull=never',
      '--layers',
      // A failed step's container goes too (the default keeps it, mounted, in our storage).
      '--force-rm',
      `--isolation=${this.o.isolation}`,
      // Step containers' runc state under our runroot: a crashed run's are found (builder-orphans.ts).
      '--runtime-flag',
      `root=${join(scratch, 'runc')}`,
      // egress without a lease: the Dockerfile runs nothing and fetches nothing (needsNetwork).
      `--network=${lease ? `ns:${lease.netnsPath}` : this.o.network === 'egress' ? 'none' : this.o.network}`,
      `--memory=${this.o.memoryMB}m`,
      // Trusted CAs for build steps only: a bind mount is not part of any layer (issue 15).
      '--volume',
      `${caFile}:/etc/ssl/certs/ca-certificates.crt:ro`,
      '-f',
      r.dockerfile,
      '-t',
      r.output,
      ...Object.entries(r.buildArgs).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]),
      ...r.secrets.flatMap((s) => ['--secret', `id=${s.id},src=${s.file}`]),
      r.contextDir,
    ];
    const env = { TMPDIR: join(scratch, 'tmp'), ...(lease ? buildProxyEnv(lease.proxyUrl) : {}) };
    let cachedLast = false;
    const watch = (line: string) => {
      if (CACHED_LAST_STEP.test(line)) cachedLast = true;
      log(line);
    };
    try {
      await this.run(args, watch, r.signal, { env });
    } catch (err) {
      // buildah 1.28, last step from the layer cache: it copies the cached image to the `-t`
      // destination, then looks the copy up in its own storage, which fails for an `oci:` layout
      // ("locating new copy of image …: image not known", imagebuildah tagExistingImage) although
      // the copy is whole. A whole layout is taken; the engine's import vets it like any other.
      const layout = /^oci:(.+):[^:]*$/.exec(r.output)?.[1];
      if (!cachedLast || r.signal.aborted || !layout || !layoutComplete(layout)) throw err;
      r.log('The last step came from the layer cache; the image is in the layout');
    }
  }

  /**
   * The layer cache's GC (builder-cache.ts): dangling images older than `maxAgeMs`, or all of them
   * when the storage holds more than `maxBytes`. Undefined when a build runs (the next pass tries);
   * else how many images went.
   */
  pruneCache(limits: CacheLimits, nowMs: number): Promise<number> | undefined {
    if (!existsSync(this.o.root)) return undefined; // never built: nothing to mount or prune
    return this.gate.exclusive(async () => {
      const none = new AbortController().signal;
      const list = async () =>
        parseImages(
          await this.run(['images', '--all', '--json', '--filter', 'dangling=true'], () => {}, none),
        );
      const before = await list();
      const du = await run('du', ['-sb', this.o.root], () => {}, none, 120_000);
      if (Number(du.split('\t')[0]) > limits.maxBytes) {
        await this.run(['rmi', '--prune'], () => {}, none).catch(() => undefined);
      } else {
        // One at a time: an image still a working container's is refused, the others go.
        for (const id of staleImages(before, limits.maxAgeMs, nowMs).slice(0, 500))
          await this.run(['rmi', id], () => {}, none).catch(() => undefined);
      }
      return before.length - (await list()).length;
    });
  }

  /**
   * On platform shutdown: working containers go, and the storage's own mounts (containers-storage
   * bind-mounts its overlay dir and mounts each container's rootfs) are undone, so nothing under
   * TARMAC_HOME stays mounted. The next build mounts again.
   */
  async shutdown(): Promise<void> {
    const none = new AbortController().signal;
    await this.run(['rm', '--all'], () => {}, none).catch(() => undefined);
    await run('umount', [join(this.o.root, 'overlay')], () => {}, none, 30_000).catch(() => undefined);
  }

  /**
   * At start: what a platform that died mid-build left (builder-orphans.ts), then the working
   * containers. Returns what was killed, for the log.
   */
  async reapOrphans(): Promise<string[]> {
    // Only where a build was cut short: buildah's first command on a storage mounts it (its
    // overlay folder), which a platform that never builds must not leave behind.
    if (!existsSync(this.o.root)) return [];
    const scratch = scratchRoot(this.o);
    const cutShort = existsSync(scratch) && readdirSync(scratch).length > 0;
    const removed = reapBuilderOrphans(this.o);
    if (cutShort || removed.length > 0)
      await this.run(['rm', '--all'], () => {}, new AbortController().signal).catch(() => undefined);
    return removed;
  }

  private run(
    args: string[],
    log: (line: string) => void,
    signal: AbortSignal,
    extra: { env?: Record<string, string> } = {},
  ): Promise<string> {
    const global = ['--root', this.o.root, '--runroot', this.o.runroot, '--storage-driver', 'overlay'];
    return run(this.o.binary ?? 'buildah', [...global, ...args], log, signal, this.o.timeoutMs, {
      ...extra,
      onSpawn: (pid) => notePid(this.o, pid),
      onExit: (pid) => forgetPid(this.o, pid),
    });
  }
}

const CACHED_LAST_STEP =
  /^Error: locating new copy of image "[0-9a-f]{64}" \(i\.e\., "oci:.*"\): image not known$/;

/** The Dockerfile's text; unreadable counts as "RUN" (needsNetwork says yes; buildah reports why). */
function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return 'RUN';
  }
}

/** Runs a command, streaming its output lines to `log`; the process group dies on abort or timeout. */
export function run(
  cmd: string,
  args: string[],
  log: (line: string) => void,
  signal: AbortSignal,
  timeoutMs: number,
  extra: {
    /** Added to the inherited environment (the build proxy variables, build-network.ts). */
    env?: Record<string, string>;
    /** Told the process id (builder-orphans.ts notes it) and when the process is gone. */
    onSpawn?: (pid: number) => void;
    onExit?: (pid: number) => void;
  } = {},
): Promise<string> {
  const { env } = extra;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new BuildFailure('build cancelled'));
    // `env K=V… cmd`: the variables on top of the inherited environment, which only main.ts reads.
    const [file, argv] = env
      ? ['env', [...Object.entries(env).map(([k, v]) => `${k}=${v}`), cmd, ...args]]
      : [cmd, args];
    const child = spawn(file, argv, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    if (pid) extra.onSpawn?.(pid);
    let stdout = '';
    let why: string | undefined;
    const kill = (reason: string) => {
      why = reason;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const onAbort = () => kill('build cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => kill(`build took longer than ${Math.round(timeoutMs / 1000)} s`),
      timeoutMs,
    );
    const lines = (stream: NodeJS.ReadableStream, keep: boolean) => {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        if (keep && stdout.length < 1 << 20) stdout += chunk;
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const p of parts) log(p);
      });
      stream.on('end', () => rest && log(rest));
    };
    lines(child.stdout, true);
    lines(child.stderr, false);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new BuildFailure(`${cmd} could not start: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (pid) extra.onExit?.(pid);
      signal.removeEventListener('abort', onAbort);
      if (why) reject(new BuildFailure(why));
      else if (code !== 0) reject(new BuildFailure(`${cmd} exited with code ${code}`));
      else resolve(stdout);
    });
  });
}
