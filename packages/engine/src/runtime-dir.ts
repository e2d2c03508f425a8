// The runtime the engine injects read-only at /.tarmac in every sandbox: the host's node binary
// with the shared libraries it links (so it runs on any image, glibc or not), a static tini as
// PID 1, a static busybox whose shell restarts sandboxd if it dies (issue 19 item 6), and the
// sandboxd bundle with its native addons (lib/*.node next to the bundle, e.g. the PTY's pty.node,
// copied to /.tarmac/lib). Built once per content version under <home>/runtime/<key>.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  linkSync,
  readdirSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { CommandRunner } from './runner.js';
import { BOOT_ENV_PATH } from './boot-env.js';

export interface RuntimeSources {
  nodeBinary: string;
  /** A statically linked tini (Debian: /usr/bin/tini-static). */
  tiniBinary: string;
  /**
   * A statically linked busybox (Debian busybox-static: /bin/busybox, the default when it exists).
   * Without one sandboxd runs unsupervised: its death ends the container.
   */
  busyboxBinary?: string;
  /**
   * The sandboxd bundle, one JS file (packages/sandboxd/dist/sandboxd.bundle.mjs). Native addons
   * in `lib/*.node` next to it are copied to /.tarmac/lib, where the bundle loads them from.
   */
  sandboxdBundle: string;
}

/** Where things are inside the sandbox. */
export const IN_SANDBOX = {
  dir: '/.tarmac',
  tini: '/.tarmac/bin/tini',
  busybox: '/.tarmac/bin/busybox',
  node: '/.tarmac/bin/node',
  libDir: '/.tarmac/lib',
  // .mjs: there is no package.json next to it inside the sandbox to say "type": "module".
  sandboxd: '/.tarmac/sandboxd.mjs',
  /** The code-cache loader (packages/sandboxd scripts/sandboxd-boot.cjs), preferred when shipped. */
  boot: '/.tarmac/lib/sandboxd-boot.cjs',
};

const BOOT_FILE = 'sandboxd-boot.cjs';
const CODE_CACHE_FILE = 'sandboxd.cjs.cache';

export interface RuntimeDir {
  hostPath: string;
  /** The in-sandbox path of the dynamic loader node is run through. */
  loader: string;
  /** The script node runs: the code-cache loader when the bundle ships one, else the bundle. */
  entry: string;
  /** busybox is shipped: sandboxd runs under the restart loop (sandboxArgs). */
  supervised: boolean;
}

/** Debian busybox-static's path, used when the sources name none. */
export const DEFAULT_BUSYBOX = '/bin/busybox';

/**
 * sandboxd's private state in a sandbox (the process table and output FIFOs, packages/sandboxd
 * ARCHITECTURE.md "Restarts"): under /dev, the tmpfs runc makes for every container, so it is
 * memory-backed and gone with the container and its processes.
 */
export const SANDBOXD_STATE_DIR = '/dev/.tarmac-sandboxd';

export class RuntimeBuilder {
  private cached: { key: string; dir: RuntimeDir } | undefined;

  constructor(
    private readonly sources: RuntimeSources,
    private readonly baseDir: string,
    private readonly runner: CommandRunner,
  ) {}

  /** The runtime for the current sources; cheap after the first call (a few stats). */
  async ensure(): Promise<RuntimeDir> {
    const busybox = this.busybox();
    const key = this.key(busybox);
    if (this.cached?.key === key) return this.cached.dir;
    const hostPath = join(this.baseDir, key);
    const addons = this.addons();
    const libs = [
      ...new Set(
        (
          await Promise.all(
            [this.sources.nodeBinary, ...addons.filter((a) => a.endsWith('.node'))].map((b) =>
              this.sharedLibs(b),
            ),
          )
        ).flat(),
      ),
    ];
    const loader = libs.find((l) => /\/ld-[^/]*\.so/.test(l));
    if (!loader) throw new Error(`cannot find the dynamic loader of ${this.sources.nodeBinary}`);
    if (!existsSync(hostPath)) {
      const tmp = `${hostPath}.tmp-${process.pid}-${Date.now()}`;
      mkdirSync(join(tmp, 'bin'), { recursive: true });
      mkdirSync(join(tmp, 'lib'), { recursive: true });
      linkOrCopy(this.sources.nodeBinary, join(tmp, 'bin', 'node'));
      linkOrCopy(this.sources.tiniBinary, join(tmp, 'bin', 'tini'));
      if (busybox) linkOrCopy(busybox, join(tmp, 'bin', 'busybox'));
      copyFileSync(this.sources.sandboxdBundle, join(tmp, 'sandboxd.mjs'));
      for (const lib of libs) linkOrCopy(lib, join(tmp, 'lib', basename(lib)));
      for (const addon of addons) copyFileSync(addon, join(tmp, 'lib', basename(addon)));
      if (existsSync(join(tmp, 'lib', BOOT_FILE))) await this.writeCodeCache(join(tmp, 'lib'));
      try {
        renameSync(tmp, hostPath);
      } catch (err) {
        // Another engine finished the same content first: use theirs.
        rmSync(tmp, { recursive: true, force: true });
        if (!existsSync(hostPath)) throw err;
      }
    }
    const dir = {
      hostPath,
      loader: `${IN_SANDBOX.libDir}/${basename(loader)}`,
      entry: existsSync(join(hostPath, 'lib', BOOT_FILE)) ? IN_SANDBOX.boot : IN_SANDBOX.sandboxd,
      supervised: existsSync(join(hostPath, 'bin', 'busybox')),
    };
    this.cached = { key, dir };
    return dir;
  }

  private busybox(): string | undefined {
    const b = this.sources.busyboxBinary ?? DEFAULT_BUSYBOX;
    return existsSync(b) ? b : undefined;
  }

  private key(busybox: string | undefined): string {
    const h = createHash('sha256');
    for (const p of [
      this.sources.nodeBinary,
      this.sources.tiniBinary,
      ...(busybox ? [busybox] : []),
      this.sources.sandboxdBundle,
      ...this.addons(),
    ]) {
      const s = statSync(p);
      h.update(`${p}:${s.size}:${s.mtimeMs}:${s.ino};`);
    }
    return h.digest('hex').slice(0, 16);
  }

  /**
   * V8's code cache of the CommonJS build, written by the same node binary the sandboxes run, with
   * node's default flags and no NODE_OPTIONS (the runner's env), so the sandbox's node accepts it:
   * sandboxd starts ~25% faster (packages/sandboxd ARCHITECTURE.md "Start-up"). The loader builds
   * the daemon without listening. Without a cache sandboxd still starts, only slower: a failure
   * here is not an error.
   */
  private async writeCodeCache(libDir: string): Promise<void> {
    await this.runner.run(
      this.sources.nodeBinary,
      [join(libDir, BOOT_FILE), '--write-code-cache', join(libDir, CODE_CACHE_FILE)],
      { allowFail: true, timeoutMs: 30_000 },
    );
  }

  /**
   * Native addons, code-split chunks and the code-cache loader shipped next to the bundle
   * (`lib/*.node`, `lib/*.mjs`, `lib/*.cjs`).
   */
  private addons(): string[] {
    const dir = join(dirname(this.sources.sandboxdBundle), 'lib');
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((f) => f.endsWith('.node') || f.endsWith('.mjs') || f.endsWith('.cjs'))
      .sort()
      .map((f) => join(dir, f));
  }

  /** Resolved paths of a binary's shared libraries, loader included, from ldd. */
  private async sharedLibs(binary: string): Promise<string[]> {
    const { stdout } = await this.runner.run('ldd', [binary]);
    const libs: string[] = [];
    for (const line of stdout.split('\n')) {
      const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
      if (m?.[1]) libs.push(m[1]);
    }
    return libs;
  }
}

/**
 * Hard link when on the same filesystem (node is ~100 MB; package upgrades replace files by
 * rename, so the linked inode stays the old, consistent binary), else copy.
 */
function linkOrCopy(path: string, dest: string): void {
  // link(2) does not follow symlinks (libstdc++.so.6 is one): link the target, keep the name.
  const src = realpathSync(path);
  try {
    linkSync(src, dest);
  } catch {
    copyFileSync(src, dest);
  }
}

/**
 * The supervisor (issue 19 item 6): busybox's shell runs sandboxd (the arguments after $0) again
 * whenever it dies other than by the engine's stop, so an OOM kill or a crash of sandboxd no longer
 * ends the container and every process in it. The processes sandboxd started live in their own
 * sessions and are reparented to tini (PID 1), which reaps them; the new sandboxd re-adopts them
 * from its state dir. A SIGTERM/INT/HUP (the engine's stop, forwarded to the group by tini -g)
 * only sets a flag: the shell waits for sandboxd's graceful exit, then exits with its code.
 * Restarts are immediate, then back off 1, 2, 4, 8 s while sandboxd keeps dying within 10 s of
 * its last restart. One static shell: 56 KB of private memory (its text is shared page cache),
 * ~1 ms of the start.
 */
export const SUPERVISOR_SCRIPT = [
  `b=${IN_SANDBOX.busybox}; stop=; delay=0; last=0`,
  "trap 'stop=1' TERM INT HUP",
  'while :; do',
  '  "$@"',
  '  code=$?',
  '  if [ -n "$stop" ] || [ "$code" = 0 ]; then exit "$code"; fi',
  // No clock read before the first start: it would cost every sandbox start a fork.
  '  now=$($b date +%s)',
  '  if [ $((now - last)) -ge 10 ]; then delay=0; fi',
  '  echo "tarmac: sandboxd exited with $code, restarting in ${delay}s" >&2',
  '  $b sleep $delay',
  '  if [ -n "$stop" ]; then exit "$code"; fi',
  '  last=$((now + delay))',
  '  delay=$((delay == 0 ? 1 : (delay >= 8 ? 8 : delay * 2)))',
  'done',
].join('\n');

/**
 * The container's command: tini reaping zombies, running sandboxd via the injected loader, under
 * the restart loop when busybox is shipped.
 */
export function sandboxArgs(runtime: RuntimeDir, port = 8080): string[] {
  const sandboxd = [
    runtime.loader,
    '--library-path',
    IN_SANDBOX.libDir,
    IN_SANDBOX.node,
    runtime.entry,
    '--port',
    String(port),
    '--boot-env',
    BOOT_ENV_PATH,
  ];
  const tini = [IN_SANDBOX.tini, '-g', '--']; // -g: signals go to the whole process group
  if (!runtime.supervised) return [...tini, ...sandboxd];
  return [
    ...tini,
    IN_SANDBOX.busybox,
    'sh',
    '-c',
    SUPERVISOR_SCRIPT,
    'sandboxd-supervisor',
    ...sandboxd,
    '--state-dir',
    SANDBOXD_STATE_DIR,
  ];
}
