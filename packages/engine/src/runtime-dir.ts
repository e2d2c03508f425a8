// The runtime the engine injects read-only at /.tarmac in every sandbox: the host's node binary
// with the shared libraries it links (so it runs on any image, glibc or not), a static tini as
// PID 1, and the sandboxd bundle with its native addons (lib/*.node next to the bundle, e.g. the
// PTY's pty.node, copied to /.tarmac/lib). Built once per content version under <home>/runtime/<key>.
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

export interface RuntimeSources {
  nodeBinary: string;
  /** A statically linked tini (Debian: /usr/bin/tini-static). */
  tiniBinary: string;
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
}

export class RuntimeBuilder {
  private cached: { key: string; dir: RuntimeDir } | undefined;

  constructor(
    private readonly sources: RuntimeSources,
    private readonly baseDir: string,
    private readonly runner: CommandRunner,
  ) {}

  /** The runtime for the current sources; cheap after the first call (a few stats). */
  async ensure(): Promise<RuntimeDir> {
    const key = this.key();
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
    };
    this.cached = { key, dir };
    return dir;
  }

  private key(): string {
    const h = createHash('sha256');
    for (const p of [
      this.sources.nodeBinary,
      this.sources.tiniBinary,
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

/** The container's command: tini reaping zombies, running sandboxd via the injected loader. */
export function sandboxArgs(runtime: RuntimeDir, port = 8080): string[] {
  return [
    IN_SANDBOX.tini,
    '-g', // forward signals to the whole process group, so SIGTERM reaches every child
    '--',
    runtime.loader,
    '--library-path',
    IN_SANDBOX.libDir,
    IN_SANDBOX.node,
    runtime.entry,
    '--port',
    String(port),
  ];
}
