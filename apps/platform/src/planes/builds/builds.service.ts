import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, forbidden, invalidField } from '@tarmac/server-kit';
import { BuildFailure, type Buildah } from './buildah.js';
import { BuildLog } from './build-log.js';
import { buildArgs, parseEnvFile } from './build-inputs.js';
import type { BuildImageStore, BuildRecords, BuildTarget } from './build-records.js';
import { detect } from './dockerfile-detect.js';
import type { BuiltEntry } from './image-gc.js';
import { LayerExport } from './layer-export.js';
import { extractSource, SourceArchiveError, type SourceLimits } from './source-archive.js';
import type { UploadTickets } from './upload-tickets.js';
import { WorkspaceQueue } from './workspace-queue.js';

/**
 * The code-upload flow (issue 15 "The flow"): `?upload=true` opens a build and answers a signed,
 * single-use upload URL (UPLOADING); the PUT of the archive is extracted safely and queued
 * (BUILDING); buildah builds it; the OCI result is imported into the engine's image store and the
 * record gets the image (BUILT) — or FAILED with the build's last lines. Builds live in memory:
 * one per record at a time (a new upload cancels the older build), logs kept until replaced.
 */
export interface BuildsDeps {
  records: BuildRecords;
  images: BuildImageStore;
  builder: Buildah;
  /** The exported-layer cache between the builder and the engine's store. */
  layerExport: LayerExport;
  tickets: UploadTickets;
  /** Scratch space for uploads and contexts (TARMAC_HOME/builds/work). */
  workDir: string;
  limits: SourceLimits & { maxUploadBytes: number };
  /** Base of upload URLs (the platform's own API URL). */
  apiUrl: () => string;
  log: (msg: string, extra?: Record<string, unknown>) => void;
  /** Told of every image a build stored (the GC's ledger, image-gc.ts). */
  onStored?: (entry: BuiltEntry) => void;
}

interface Build {
  id: string;
  workspace: string;
  actor: string;
  target: BuildTarget;
  log: BuildLog;
  abort: AbortController;
  state: 'UPLOADING' | 'BUILDING' | 'BUILT' | 'FAILED';
}

export const UPLOAD_PATH = '/v0/builds/uploads/';
const FAIL_LINES = 15;
const EXPORT_CACHE_TTL_MS = 24 * 3600_000;

export class BuildsService {
  private readonly builds = new Map<string, Build>();
  private readonly latest = new Map<string, string>();
  private readonly queue = new WorkspaceQueue(1);

  constructor(private readonly d: BuildsDeps) {}

  /** Opens a build for `target` (its record exists): UPLOADING, and the URL to PUT the archive to. */
  async open(workspace: string, actor: string, target: BuildTarget): Promise<{ uploadUrl: string }> {
    const key = keyOf(workspace, target);
    const older = this.latest.get(key);
    if (older) this.cancelBuild(older, 'replaced by a new upload');
    const build: Build = {
      id: randomBytes(6).toString('hex'),
      workspace,
      actor,
      target,
      log: new BuildLog(),
      abort: new AbortController(),
      state: 'UPLOADING',
    };
    this.builds.set(build.id, build);
    this.latest.set(key, build.id);
    const { token, expiresAt } = this.d.tickets.issue({ workspace, buildId: build.id });
    await this.d.records.setStatus(
      workspace,
      target,
      'UPLOADING',
      `Waiting for the code upload (URL valid until ${expiresAt.toISOString()})`,
    );
    return { uploadUrl: `${this.d.apiUrl()}${UPLOAD_PATH}${token}` };
  }

  /** `POST /v0/images?upload=true`: the image record exists (UPLOADING) before its build opens. */
  openImage(
    workspace: string,
    actor: string,
    imageType: BuildTarget['imageType'],
    name: string,
  ): Promise<void> {
    return this.d.records.openImage(workspace, actor, imageType, name);
  }

  /** The PUT of an upload URL: 403 bad/used/expired, 413 too large, 400 unsafe archive; then builds. */
  async receive(token: string, body: Readable): Promise<{ buildId: string }> {
    const ticket = this.d.tickets.consume(token);
    const build = this.builds.get(ticket.buildId);
    if (!build || build.abort.signal.aborted) throw forbidden('upload URL belongs to a cancelled build');
    const dir = join(this.d.workDir, build.id);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const archive = join(dir, 'upload');
    try {
      await pipeline(body, capped(this.d.limits.maxUploadBytes), createWriteStream(archive));
      await extractSource(archive, join(dir, 'src'), this.d.limits);
    } catch (err) {
      const apiErr = err instanceof SourceArchiveError ? invalidField('body', err.message) : err;
      const message = apiErr instanceof ApiError ? apiErr.message : 'the upload failed';
      await this.fail(build, `Upload refused: ${message}`);
      rmSync(dir, { recursive: true, force: true });
      throw apiErr;
    } finally {
      rmSync(archive, { force: true });
    }
    const ahead = this.queue.ahead(build.workspace);
    build.state = 'BUILDING';
    await this.d.records.setStatus(
      build.workspace,
      build.target,
      'BUILDING',
      ahead > 0 ? `Queued behind ${ahead} build(s) of this workspace` : 'Building',
    );
    void this.queue.run(build.workspace, () => this.runBuild(build, dir));
    return { buildId: build.id };
  }

  /** Shutdown: running builds are cancelled (their records stay BUILDING; see README "Not yet"). */
  async stop(): Promise<void> {
    for (const id of this.builds.keys()) this.cancelBuild(id, 'the platform is stopping');
    await this.queue.idle();
  }

  /** The record's latest build log, or undefined. */
  logOf(workspace: string, target: BuildTarget): BuildLog | undefined {
    const id = this.latest.get(keyOf(workspace, target));
    return id ? this.builds.get(id)?.log : undefined;
  }

  /** The record was deleted: its build stops (issue 15 "cancellable by deleting the resource"). */
  async cancelIfGone(workspace: string, target: BuildTarget): Promise<void> {
    const id = this.latest.get(keyOf(workspace, target));
    if (!id || (await this.d.records.exists(workspace, target))) return;
    this.cancelBuild(id, 'the resource was deleted');
    this.latest.delete(keyOf(workspace, target));
    this.builds.delete(id);
  }

  private cancelBuild(id: string, why: string): void {
    const b = this.builds.get(id);
    if (!b || b.state === 'BUILT' || b.state === 'FAILED') return;
    b.log.add(`Build cancelled: ${why}`);
    b.abort.abort();
  }

  private async runBuild(build: Build, dir: string): Promise<void> {
    const { log } = build;
    const signal = build.abort.signal;
    const src = join(dir, 'src');
    let localTag = '';
    try {
      if (signal.aborted) throw new BuildFailure('build cancelled');
      log.add(`Build ${build.id} of ${build.target.imageType}/${build.target.name} started`);
      await this.d.builder.seed(await this.d.images.baseImage(), (l) => log.add(l), signal);
      const dockerfile = this.dockerfileFor(src, dir, log);
      const secrets = this.secretsOf(src, dir, log);
      const tag = `b${Date.now().toString(36)}${build.id.slice(0, 4)}`;
      localTag = `localhost/tarmac-build/${build.id}:${tag}`;
      const t0 = Date.now();
      await this.d.builder.build({
        contextDir: src,
        dockerfile,
        tag: localTag,
        buildArgs: buildArgs(src),
        secrets,
        log: (l) => log.add(l),
        signal,
      });
      const t1 = Date.now();
      log.add(`Image built in ${((t1 - t0) / 1000).toFixed(1)} s; storing it`);
      // Only layers not exported before are exported; only those the engine lacks are read.
      const layout = join(dir, 'image.oci');
      const diffIds = await this.d.builder.diffIds(localTag, signal);
      const missing = this.d.layerExport.prepare(layout, diffIds);
      if (diffIds[0] !== undefined && missing.includes(diffIds[0])) {
        await this.d.builder.exportImage(localTag, { dir: `${layout}.dir` }, signal);
        LayerExport.layoutFromDir(`${layout}.dir`, layout);
      } else await this.d.builder.exportImage(localTag, { oci: layout }, signal);
      this.d.layerExport.finish(layout, diffIds);
      const reused = diffIds.length - missing.length;
      const exported = missing.length;
      const t2 = Date.now();
      const ref = `${build.target.imageType}/${build.target.name}:${tag}`;
      const engineRef = await this.d.images.importTarget(build.workspace, ref);
      const info = await this.d.images.importImage(layout, engineRef);
      if (signal.aborted) throw new BuildFailure('build cancelled');
      await this.d.records.built(build.workspace, build.actor, build.target, {
        ref,
        tag,
        sizeBytes: info.sizeBytes,
      });
      this.d.onStored?.({
        engineRef,
        workspace: build.workspace,
        imageType: build.target.imageType,
        name: build.target.name,
        tag,
      });
      build.state = 'BUILT';
      const secs = (ms: number) => (ms / 1000).toFixed(1);
      log.add(
        `Built ${ref} (${info.sizeBytes} bytes): ${exported} layer(s) exported, ${reused} reused, ` +
          `in ${secs(t2 - t1)} s; stored in ${secs(Date.now() - t2)} s`,
      );
    } catch (err) {
      const reason = err instanceof BuildFailure ? err.message : `internal error: ${(err as Error).message}`;
      if (!(err instanceof BuildFailure))
        this.d.log('build failed', { err: (err as Error).message, build: build.id });
      log.add(`Build failed: ${reason}`);
      await this.fail(build, ['Build failed:', ...log.tail(FAIL_LINES)].join('\n')).catch(() => undefined);
    } finally {
      log.end();
      rmSync(dir, { recursive: true, force: true });
      // After the log ends (the CLI waits for it): the builder's layer cache stays (intermediate
      // images); exported layers no build used for a day leave the export cache.
      if (localTag) await this.d.builder.removeImage(localTag);
      this.d.layerExport.prune(EXPORT_CACHE_TTL_MS, Date.now());
    }
  }

  private async fail(build: Build, message: string): Promise<void> {
    build.state = 'FAILED';
    if (build.abort.signal.aborted && !(await this.d.records.exists(build.workspace, build.target))) return;
    await this.d.records.setStatus(build.workspace, build.target, 'FAILED', message);
  }

  /** The folder's Dockerfile, or one generated for a detected runtime; FAILED says what was looked for. */
  private dockerfileFor(src: string, dir: string, log: BuildLog): string {
    if (existsSync(join(src, 'Dockerfile'))) return join(src, 'Dockerfile');
    const found = detect(src);
    if (found.runtime === 'none')
      throw new BuildFailure(`no Dockerfile and no runtime detected; looked for ${found.lookedFor}`);
    log.add(found.summary);
    for (const line of found.dockerfile.trimEnd().split('\n')) log.add(`  ${line}`);
    const file = join(dir, 'Dockerfile.generated');
    writeFileSync(file, found.dockerfile);
    return file;
  }

  /** `.env.build` leaves the context; each value becomes a `--secret` file (0600, outside the context). */
  private secretsOf(src: string, dir: string, log: BuildLog): Array<{ id: string; file: string }> {
    const envFile = join(src, '.env.build');
    if (!existsSync(envFile)) return [];
    const values = parseEnvFile(readFileSync(envFile, 'utf8'));
    rmSync(envFile, { force: true });
    log.mask(Object.values(values));
    const secretDir = join(dir, 'secrets');
    mkdirSync(secretDir, { mode: 0o700 });
    log.add(
      `Secret build args: ${Object.keys(values).join(', ') || '(none)'} (RUN --mount=type=secret,id=KEY)`,
    );
    return Object.entries(values).map(([id, value]) => {
      const file = join(secretDir, id);
      writeFileSync(file, value, { mode: 0o600 });
      return { id, file };
    });
  }
}

function keyOf(workspace: string, t: BuildTarget): string {
  return `${workspace}\u0000${t.kind}\u0000${t.imageType}\u0000${t.name}`;
}

/** Fails the stream past `max` bytes with a 413 (a chunked body has no length to check first). */
function capped(max: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(
        seen > max
          ? new ApiError('payload_too_large', `body: the archive is larger than ${max} bytes`)
          : null,
        chunk,
      );
    },
  });
}
