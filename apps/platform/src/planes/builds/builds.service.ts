import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, forbidden, invalidField } from '@tarmac/server-kit';
import { BuildFailure, type Buildah } from './buildah.js';
import { BuildLog } from './build-log.js';
import { buildArgs } from './build-inputs.js';
import type { BuildImageStore, BuildRecords, BuildTarget } from './build-records.js';
import type { BuiltEntry } from './image-gc.js';
import type { LayerExport } from './layer-export.js';
import { extractSource, SourceArchiveError, type SourceLimits } from './source-archive.js';
import type { UploadTickets } from './upload-tickets.js';
import { WorkspaceQueue } from './workspace-queue.js';
import { dockerfileFor, secretsOf } from './build-context.js';
import { leftBuilds, persistBuild, restartFailure } from './build-recovery.js';

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
  /** Fails the build when its upload URL expires unused (no record stays UPLOADING forever). */
  expiry?: NodeJS.Timeout;
  /** When it joined its workspace's queue, and how long receiving its upload took (the log's timings). */
  queuedAt?: number;
  receiveMs?: number;
}

export const UPLOAD_PATH = '/v0/builds/uploads/';
const FAIL_LINES = 15;
const EXPORT_CACHE_TTL_MS = 24 * 3600_000;

export class BuildsService {
  private readonly builds = new Map<string, Build>();
  private readonly latest = new Map<string, string>();
  private readonly queue = new WorkspaceQueue(1);
  /** Set by `stop`: interrupted builds keep their source and resume at the next start. */
  private stopping = false;
  /** Builds start only after a dead run's leftovers are gone (`recover`). */
  private gate: Promise<void> = Promise.resolve();

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
    build.expiry = setTimeout(() => void this.expire(build), expiresAt.getTime() - Date.now() + 1000);
    build.expiry.unref();
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
    if (!build || build.abort.signal.aborted || build.state !== 'UPLOADING')
      throw forbidden('upload URL belongs to a cancelled build');
    clearTimeout(build.expiry);
    const received = Date.now();
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
    // From here the build survives a restart (build-recovery.ts).
    persistBuild(dir, {
      id: build.id,
      workspace: build.workspace,
      actor: build.actor,
      target: build.target,
      receivedAt: Date.now(),
    });
    const ahead = this.queue.ahead(build.workspace);
    build.state = 'BUILDING';
    await this.d.records.setStatus(
      build.workspace,
      build.target,
      'BUILDING',
      ahead > 0 ? `Queued behind ${ahead} build(s) of this workspace` : 'Building',
    );
    build.receiveMs = Date.now() - received;
    build.queuedAt = Date.now();
    void this.queue.run(build.workspace, () => this.runBuild(build, dir));
    return { buildId: build.id };
  }

  /**
   * Shutdown: running and queued builds stop; their records stay BUILDING and their sources stay
   * on disk, so the next start resumes them (`recover`). Builds still waiting for their upload
   * are failed by the next start (their URLs die with this process).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const b of this.builds.values()) clearTimeout(b.expiry);
    for (const id of this.builds.keys()) this.cancelBuild(id, 'the platform is stopping');
    await this.queue.idle();
  }

  /**
   * At start (issue 15: builds survive a restart): a build the last run stopped or crashed in is
   * resumed from its kept source, queued in arrival order, when its record still waits for it;
   * a record left UPLOADING/BUILDING with nothing to resume is FAILED with an event saying why.
   */
  async recover(cleanUp: () => Promise<unknown> = async () => undefined): Promise<{
    resumed: number;
    failed: number;
  }> {
    // The folders of the last run, listed before anything awaits: an upload of this run may be
    // writing its own folder by the time the cleanup is done.
    const { resumable, stale } = leftBuilds(this.d.workDir);
    this.gate = cleanUp().then(
      () => undefined,
      (err: unknown) => this.d.log('builder leftovers not removed', { err: (err as Error).message }),
    );
    await this.gate;
    const pending = await this.d.records.inProgress();
    const waiting = new Map(pending.map((r) => [keyOf(r.workspace, r.target), r]));
    for (const dir of stale) rmSync(dir, { recursive: true, force: true });
    let resumed = 0;
    for (const p of resumable) {
      const key = keyOf(p.workspace, p.target);
      if (!waiting.has(key) || this.latest.has(key)) {
        rmSync(p.dir, { recursive: true, force: true }); // deleted, rebuilt or re-uploaded since
        continue;
      }
      const build: Build = {
        ...p,
        log: new BuildLog(),
        abort: new AbortController(),
        state: 'BUILDING',
        queuedAt: Date.now(),
      };
      this.builds.set(build.id, build);
      this.latest.set(key, build.id);
      build.log.add(`Build ${build.id} resumed after a platform restart`);
      const ahead = this.queue.ahead(build.workspace);
      await this.d.records.setStatus(
        build.workspace,
        build.target,
        'BUILDING',
        `Build resumed after a platform restart${ahead > 0 ? `; queued behind ${ahead} build(s)` : ''}`,
      );
      void this.queue.run(build.workspace, () => this.runBuild(build, p.dir));
      resumed++;
    }
    let failed = 0;
    for (const r of pending) {
      if (this.latest.has(keyOf(r.workspace, r.target))) continue;
      await this.d.records.setStatus(r.workspace, r.target, 'FAILED', restartFailure(r.status));
      failed++;
    }
    return { resumed, failed };
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
    clearTimeout(b.expiry);
    b.log.add(`Build cancelled: ${why}`);
    b.abort.abort();
  }

  /** The upload URL expired unused: FAILED, so the record does not stay UPLOADING. */
  private async expire(build: Build): Promise<void> {
    if (build.state !== 'UPLOADING' || build.abort.signal.aborted) return;
    this.cancelBuild(build.id, 'the upload URL expired');
    await this.fail(
      build,
      'The upload URL expired before the code upload arrived. Ask for a new one (?upload=true).',
    ).catch((err: unknown) => this.d.log('build status not written', { err: (err as Error).message }));
  }

  private async runBuild(build: Build, dir: string): Promise<void> {
    const { log } = build;
    const signal = build.abort.signal;
    const src = join(dir, 'src');
    try {
      await this.gate;
      if (signal.aborted) throw new BuildFailure('build cancelled');
      log.add(`Build ${build.id} of ${build.target.imageType}/${build.target.name} started`);
      await this.d.builder.seed(await this.d.images.baseImage(), (l) => log.add(l), signal);
      const dockerfile = dockerfileFor(src, dir, log);
      const secrets = secretsOf(src, dir, log);
      const tag = `b${Date.now().toString(36)}${build.id.slice(0, 4)}`;
      // Straight into an OCI layout holding the cached layer blobs (layer-export.ts): no separate
      // inspect and push, and a layer the cache has is not written again.
      const layout = join(dir, 'image.oci');
      const offered = this.d.layerExport.prepare(layout);
      const t0 = Date.now();
      await this.d.builder.build({
        contextDir: src,
        dockerfile,
        output: `oci:${layout}:image`,
        buildArgs: buildArgs(src),
        secrets,
        log: (l) => log.add(l),
        signal,
      });
      const t1 = Date.now();
      const { layers, reused } = this.d.layerExport.finish(layout, offered);
      log.add(`Image built in ${secs(t1 - t0)} s; storing it`);
      const ref = `${build.target.imageType}/${build.target.name}:${tag}`;
      const engineRef = await this.d.images.importTarget(build.workspace, ref);
      const info = await this.d.images.importImage(layout, engineRef);
      if (signal.aborted) throw new BuildFailure('build cancelled');
      const t2 = Date.now();
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
      const queued = build.queuedAt === undefined ? 0 : t0 - build.queuedAt;
      log.add(
        `Built ${ref} (${info.sizeBytes} bytes): ${layers - reused} layer(s) written, ${reused} reused; ` +
          `stored in ${secs(t2 - t1)} s`,
      );
      // Where the time went (bench/build.ts prints it): upload received and extracted, wait in
      // the queue (the base image's seeding included), the builder, the vetted import, the record.
      log.add(
        `Timings: upload ${build.receiveMs ?? 0} ms, queued ${queued} ms, build ${t1 - t0} ms, ` +
          `store ${t2 - t1} ms, record ${Date.now() - t2} ms`,
      );
    } catch (err) {
      if (this.stopping && signal.aborted) {
        // Not a failure: the record stays BUILDING and the next start resumes from the kept source.
        log.add('Build interrupted by a platform stop; it resumes when the platform starts again');
        return;
      }
      const reason = err instanceof BuildFailure ? err.message : `internal error: ${(err as Error).message}`;
      if (!(err instanceof BuildFailure))
        this.d.log('build failed', { err: (err as Error).message, build: build.id });
      log.add(`Build failed: ${reason}`);
      await this.fail(build, ['Build failed:', ...log.tail(FAIL_LINES)].join('\n')).catch(() => undefined);
    } finally {
      log.end();
      const keep = this.stopping && signal.aborted && build.state === 'BUILDING';
      // Kept for the resume: src/ and the secret build args (env.build); the rest is remade.
      if (keep) rmSync(join(dir, 'image.oci'), { recursive: true, force: true });
      else rmSync(dir, { recursive: true, force: true });
      // After the log ends (the CLI waits for it): the builder's layer cache stays (intermediate
      // images, the last step's too, untagged); layer blobs no build used for a day leave the
      // export cache.
      this.d.layerExport.prune(EXPORT_CACHE_TTL_MS, Date.now());
    }
  }

  private async fail(build: Build, message: string): Promise<void> {
    build.state = 'FAILED';
    if (build.abort.signal.aborted && !(await this.d.records.exists(build.workspace, build.target))) return;
    await this.d.records.setStatus(build.workspace, build.target, 'FAILED', message);
  }
}

const secs = (ms: number) => (ms / 1000).toFixed(1);

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
