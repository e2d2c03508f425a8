/**
 * The warm pool (issue 20; ARCHITECTURE.md here): sandboxes booted ahead of demand, frozen, one
 * list per shape (image + memory). A create that a member satisfies claims it (`claim`): the
 * member leaves the pool for good, the engine gives it the sandbox's hostname and labels, sandboxd
 * the sandbox's environment, and the caller writes the record under the member's record id — the
 * id every per-sandbox secret and the engine id are derived from, so the claimed sandbox is, from
 * inside, the sandbox that record would have booted. Refills run one boot at a time in the
 * background; a member is never handed back, reused or shared.
 */
import { randomUUID } from 'node:crypto';
import { FreezeAbortedError, SandboxNotFoundError } from '@tarmac/engine';
import { sandboxEngineId } from '../controllers/engine-ids.js';
import { STANDBY_MIN_AGE_MS } from '../controllers/standby.js';
import { SANDBOXD_MCP_HOSTS_ENV as MCP_HOSTS_ENV } from '../sandbox-credentials.js';
import { shapeKey, type PoolShape } from './pool-shapes.js';
import { HotMembers } from './hot-members.js';
import type { PoolMember } from './pool-member.js';
import { poolStatus, type PoolShapeStatus } from './pool-status.js';
import { callSandboxd, HEALTH_PATH, WARM_PATH } from './sandboxd-post.js';
import type { WarmPoolDeps } from './warm-pool-deps.js';
import type { ClaimedSandbox, ClaimRequest } from './claimed-sandbox.js';

export type { PoolShapeStatus } from './pool-status.js';
export type { PoolMember } from './pool-member.js';

const POOL_LABEL = 'pool';
/** On a member once it is ready to be claimed (frozen, or hot): benches and tests wait for it. */
const READY_LABEL = 'pool-ready';
const CLAIM_TIMEOUT_MS = 5000;
const REFILL_DELAY_MS = 500;

export class WarmPool {
  private readonly ready = new Map<string, PoolMember[]>();
  private readonly booting = new Set<string>();
  private readonly claiming = new Set<string>();
  private readonly engineImages = new Map<string, string>();
  private filling: Promise<void> | undefined;
  private pausedUntil = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly hot: HotMembers;

  constructor(private readonly d: WarmPoolDeps) {
    this.now = d.now ?? Date.now;
    for (const s of d.shapes) this.ready.set(shapeKey(s), []);
    this.hot = new HotMembers({
      thaw: (id) => d.engine.thawSync(id),
      ping: (m) => this.call(m.ip, m.recordId, HEALTH_PATH, undefined),
      broken: (m) => this.drop(m),
      logger: d.logger,
      ...(d.keepWarmMs !== undefined ? { keepWarmMs: d.keepWarmMs } : {}),
    });
  }

  /** Removes members a previous process left (unclaimed: nobody's), then fills the pool. */
  async start(): Promise<void> {
    for (const info of await this.d.engine.list()) {
      if (info.labels[POOL_LABEL] === undefined || this.owns(info.labels.record ?? '')) continue;
      await this.remove(info.id);
    }
    this.fill();
    this.timer = setInterval(() => this.fill(), 5000);
    this.timer.unref();
    this.hot.start(() => [...this.ready.values()].flat());
  }

  /** Whether a container with this record label is the pool's (the orphan reaper leaves it). */
  owns(recordId: string): boolean {
    if (this.booting.has(recordId) || this.claiming.has(recordId)) return true;
    for (const list of this.ready.values()) if (list.some((m) => m.recordId === recordId)) return true;
    return false;
  }

  /**
   * Hands a ready member of the request's shape to the sandbox it becomes, or undefined when none
   * is ready (or the claim failed: the member is destroyed and the caller boots the normal way).
   */
  async claim(req: ClaimRequest): Promise<ClaimedSandbox | undefined> {
    const list = this.ready.get(
      shapeKey({ image: this.shapeImageOf(req.engineImage) ?? '', memoryMB: req.memoryMB }),
    );
    // The hot member, when there is one, is first (hot-members.ts): no thaw to wait for.
    const member = list?.shift();
    if (!member) return undefined;
    const hot = this.hot.isHot(member);
    this.hot.forget(member);
    this.claiming.add(member.recordId);
    this.refillSoon();
    const discard = () => {
      this.claiming.delete(member.recordId);
      return this.remove(member.engineId);
    };
    let named: Promise<void>;
    try {
      if (!hot) this.d.engine.thawSync(member.engineId);
      const mcpHosts = req.mcpHosts ?? [];
      // The engine rewrites the member's boot env file to a boot's for the name (boot-env.ts)
      // and its labels before its first await; sandboxd reads the file before it serves the next
      // request (packages/sandboxd claim.ts): nothing goes into the sandbox on the create's path
      // but the hostname, which `named` waits for.
      named = this.d.engine.claim(member.engineId, {
        hostname: req.name,
        labels: { workspace: req.workspace, sandbox: req.name, record: member.recordId },
        env: { ...req.env, ...(mcpHosts.length > 0 ? { [MCP_HOSTS_ENV]: mcpHosts.join(',') } : {}) },
      });
    } catch (err) {
      this.failedClaim(err, req.name);
      void discard();
      return undefined;
    }
    // Wakes sandboxd (idle since its last ping or thaw) while the hostname is set and the record
    // written, so that the first exec does not pay its wake-up (without this ping the first exec
    // was ~1 ms slower here), and has it read the claim the engine just wrote into its boot env
    // file (packages/sandboxd claim.ts: /health too), off the first exec's path. For a member
    // thawed just now `ready` waits for the answer, which leaves its connection free in the agent
    // for that exec; the hot member's answer is not waited for, it comes within the create's own
    // time (in about 1 claim in 3 here it does not, and the first exec opens a second connection).
    const ping = this.call(member.ip, member.recordId, HEALTH_PATH, undefined).then(
      () => undefined,
      () => undefined,
    );
    const pinged = hot ? undefined : ping;
    // Logged here, once; the caller sees the rejection when it waits for it (it then discards).
    const ready = Promise.all([
      named.catch((err: unknown) => {
        this.failedClaim(err, req.name);
        throw err;
      }),
      pinged,
    ]).then(() => undefined);
    ready.catch(() => undefined); // a caller that lost its record's race never waits for it
    return {
      ...member,
      ready,
      settle: () => this.claiming.delete(member.recordId),
      discard,
    };
  }

  private failedClaim(err: unknown, name: string): void {
    this.d.logger.warn({ err, sandbox: name }, 'claiming a pooled sandbox failed; booting one instead');
  }

  /**
   * Memory pressure (issue 20: pool members go first): destroys ready members until `memoryMB`
   * of the ledger is free again or none is left, and pauses refills. Resolves with the MB freed.
   */
  async release(memoryMB: number): Promise<number> {
    this.pausedUntil = this.now() + (this.d.backoffMs ?? 30_000);
    let freed = 0;
    const victims: PoolMember[] = [];
    for (const list of this.ready.values()) {
      while (freed < memoryMB && list.length > 0) {
        const m = list.pop()!;
        victims.push(m);
        freed += m.memoryMB;
      }
    }
    for (const m of victims) this.hot.forget(m);
    await Promise.all(victims.map((m) => this.remove(m.engineId)));
    if (freed > 0) this.d.logger.info({ freedMB: freed }, 'released pooled sandboxes under memory pressure');
    return freed;
  }

  /** The pool per shape and the host memory its members use (ops: what the pool costs). */
  status(): Promise<PoolShapeStatus[]> {
    return poolStatus({
      shapes: this.d.shapes,
      ready: this.ready,
      bootingShapes: [...this.booting].map((id) => this.bootingShape.get(id)),
      isHot: (m) => this.hot.isHot(m),
      stats: (id) => this.d.engine.stats(id),
    });
  }

  /** Destroys every unclaimed member: they are nobody's, a restart boots new ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.refillTimer);
    this.hot.stop();
    await this.filling?.catch(() => undefined);
    const members = [...this.ready.values()].flat();
    for (const list of this.ready.values()) list.length = 0;
    await Promise.all(members.map((m) => this.remove(m.engineId)));
  }

  private readonly bootingShape = new Map<string, string>();

  /**
   * Refills a little after a claim, not during it: a boot (runc, sandboxd's start) takes most of
   * this host's CPU for ~100 ms, and the claimed sandbox's first requests come right after the
   * create's response (issue 20 item 1). Another claim meanwhile pushes it on again.
   */
  private refillSoon(): void {
    const delay = this.d.refillDelayMs ?? REFILL_DELAY_MS;
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + delay);
    clearTimeout(this.refillTimer);
    this.refillTimer = setTimeout(() => this.fill(), delay);
    this.refillTimer.unref();
  }

  private refillTimer: NodeJS.Timeout | undefined;

  /** Starts refilling unless a fill is running; boots one member at a time (CPU stays for users). */
  private fill(): void {
    if (this.filling || this.stopped || this.now() < this.pausedUntil) return;
    this.filling = this.fillLoop().finally(() => (this.filling = undefined));
  }

  private async fillLoop(): Promise<void> {
    // A claim took the hot member: the next one is thawed before any boot (it serves sooner).
    if (this.d.hot !== false) for (const list of this.ready.values()) await this.hot.promote(list);
    for (let booted = 0; ; booted++) {
      if (this.stopped || this.now() < this.pausedUntil) return;
      const shape = this.d.shapes.find((s) => (this.ready.get(shapeKey(s))?.length ?? 0) < s.size);
      if (!shape) {
        // What the pool costs the host, for operators (issue 20: "their host cost is reported").
        if (booted > 0) this.d.logger.info({ pool: await this.status() }, 'warm pool full');
        return;
      }
      if (!(await this.boot(shape))) {
        this.pausedUntil = this.now() + (this.d.backoffMs ?? 30_000);
        return;
      }
    }
  }

  private shapeImageOf(engineImage: string): string | undefined {
    for (const [image, ref] of this.engineImages) if (ref === engineImage) return image;
    return undefined;
  }

  private async boot(shape: PoolShape): Promise<boolean> {
    const key = shapeKey(shape);
    const recordId = randomUUID();
    const engineId = sandboxEngineId(recordId);
    this.booting.add(recordId);
    this.bootingShape.set(recordId, key);
    try {
      let engineImage = this.engineImages.get(shape.image);
      if (engineImage === undefined) {
        engineImage = await this.d.resolveImage(shape.image);
        if (engineImage === undefined) throw new Error(`image "${shape.image}" is not available`);
        this.engineImages.set(shape.image, engineImage);
      }
      // The pool never builds an image (the base image's first build takes ~45 s of both cores, and
      // a stop in the middle of it is a stop in the middle of mmdebstrap): it waits for the first
      // create, or install.sh, to have built it, and tries again after the backoff.
      if (!this.d.engine.hasImage(engineImage)) {
        this.d.logger.info({ shape: key }, 'warm pool waits for its image to be built');
        return false;
      }
      const image = await this.d.engine.ensureImage(engineImage);
      // No workspace yet: the claim hands over what depends on the name (its MCP hosts, envs).
      const defaults = await this.d.sandboxDefaults({ id: recordId, workspace: '', name: engineId });
      const info = await this.d.engine.createSandbox({
        id: engineId,
        image: engineImage,
        memoryMB: shape.memoryMB,
        // Booted pooled: sandboxd takes the claim once (packages/sandboxd claim.ts).
        env: { ...defaults.env, TARMAC_SANDBOXD_POOLED: '1' },
        hostname: engineId,
        ports: [],
        volumes: [],
        files: defaults.files ?? [],
        labels: { [POOL_LABEL]: key, record: recordId },
      });
      await this.d.engine.waitReady(engineId, this.d.readyTimeoutMs ?? 30_000);
      // Before the freeze, what the claim and the first exec would otherwise wait for: sandboxd's
      // FIFOs and first process, and a host process in the sandbox's UTS namespace for the
      // hostname (engine hostname-setters.ts). The warm-up's connection stays in the gateway's
      // agent: a claim within 60 s reuses it. Never a closed one: the agent drops an idle socket
      // at 60 s, before sandboxd's 65 s keep-alive timer could fire (overdue) at the claim's thaw.
      // Its body is a process request: read as a first exec's is (packages/sandboxd claim.ts).
      await this.call(info.ip, recordId, WARM_PATH, { command: 'true', waitForCompletion: true });
      const member: PoolMember = {
        recordId,
        engineId,
        ip: info.ip,
        bootedMs: Date.parse(info.createdAt),
        shape: key,
        engineImage,
        memoryMB: shape.memoryMB,
        imageSizeBytes: image.sizeBytes,
      };
      const list = this.ready.get(key) ?? [];
      // The shape's hot member when it has none (hot-members.ts); frozen otherwise, once settled.
      const hot = !this.stopped && this.d.hot !== false && this.hot.adopt(list, member);
      const settleMs = Math.max(0, member.bootedMs + (this.d.minAgeMs ?? STANDBY_MIN_AGE_MS) - this.now());
      if (!hot && settleMs === 0) await this.d.engine.freeze(engineId);
      if (this.stopped) {
        this.hot.forget(member);
        await this.remove(engineId);
        return false;
      }
      // Ready from here: labelled so (READY_LABEL), in the list in the same tick.
      this.d.engine.prepareClaim(engineId, { [POOL_LABEL]: key, record: recordId, [READY_LABEL]: '1' });
      if (hot) list.unshift(member);
      else {
        list.push(member);
        if (settleMs > 0) this.freezeWhenSettled(list, member, settleMs);
      }
      return true;
    } catch (err) {
      this.d.logger.warn({ err, shape: key }, 'could not boot a pooled sandbox; retrying later');
      await this.remove(engineId);
      return false;
    } finally {
      this.booting.delete(recordId);
      this.bootingShape.delete(recordId);
    }
  }

  /**
   * Freezes a ready member in `waitMs`, once it is `minAgeMs` old (controllers/standby.ts): about
   * 8 s after sandboxd starts, V8's memory reducer runs two full collections, and a member frozen
   * before then ran them right after its claim, beside the sandbox's first requests. Until then it
   * is ready unfrozen (a claim's thaw is then a no-op). Claimed, removed or made hot meanwhile,
   * it is left alone; a claim or promotion during the freeze wins (FreezeAbortedError).
   */
  private freezeWhenSettled(list: PoolMember[], member: PoolMember, waitMs: number): void {
    const freeze = async (): Promise<void> => {
      if (this.stopped || !list.includes(member) || this.hot.keepsThawed(member)) return;
      try {
        await this.d.engine.freeze(member.engineId);
      } catch (err) {
        if (err instanceof FreezeAbortedError) return;
        this.d.logger.warn({ err, sandbox: member.engineId }, 'could not freeze a pooled sandbox');
        this.drop(member);
      }
    };
    setTimeout(() => void freeze(), waitMs).unref();
  }

  /**
   * Through the gateway's keep-alive agent: the connection a warm-up or ping leaves is the one
   * the claim uses, and the claim's the one the sandbox's first request uses.
   */
  private call(ip: string, recordId: string, path: string, payload: object | undefined) {
    const headers = { [this.d.tokenHeader]: this.d.token(recordId) };
    return callSandboxd({ ip, path, payload, headers, agent: this.d.agent, timeoutMs: CLAIM_TIMEOUT_MS });
  }

  /** A ready member that stopped answering: out of the pool for good, destroyed. */
  private drop(member: PoolMember): void {
    const list = this.ready.get(member.shape);
    const i = list?.indexOf(member) ?? -1;
    if (i < 0) return; // claimed or removed meanwhile
    list?.splice(i, 1);
    void this.remove(member.engineId);
  }

  private async remove(engineId: string): Promise<void> {
    try {
      await this.d.engine.stopSandbox(engineId, 0);
      await this.d.engine.deleteSandbox(engineId);
    } catch (err) {
      if (err instanceof SandboxNotFoundError) return;
      this.d.logger.warn({ err, sandbox: engineId }, 'could not remove a pooled sandbox');
    }
  }
}
