/**
 * One ready member per shape kept thawed — "hot" — with its sandboxd connection open in the
 * gateway's keep-alive agent (issue 20 item 1: first command from the pool < 20 ms). A claim of
 * the hot member waits for no thaw: a frozen sandboxd, thawed, answers the claim only after its
 * scheduler, overdue timers and cold pages catch up (~9 ms on a quiet host, more under load);
 * a running one answers like any warm request (~2 ms).
 *
 * Nothing else changes for the member: it is still nobody's, out of the live map (the gateway
 * answers 404 for it), and only the platform's own `GET /health` reaches its sandboxd before
 * the claim. The pings keep the member's connection open (the agent drops a socket idle for
 * 60 s) and tell a broken member from a ready one before a create depends on it. The other
 * members stay frozen: a thawed sandboxd costs nothing while idle, but only one per shape is
 * needed to serve a create without a thaw, and frozen ones cannot run anything meanwhile.
 */
import type { Logger } from 'pino';
import type { PoolMember } from './pool-member.js';

/** Between two pings of a hot member: well under the agent's 60 s idle timeout. */
export const KEEP_WARM_MS = 20_000;

export interface HotMembersDeps {
  thaw: (engineId: string) => void;
  /** `GET /health` of the member's sandboxd through the gateway's agent; rejects unless 200. */
  ping: (member: PoolMember) => Promise<void>;
  /** The member did not answer: the pool takes it out and destroys it. */
  broken: (member: PoolMember) => void;
  logger: Logger;
  keepWarmMs?: number;
}

export class HotMembers {
  /** Engine ids of the members thawed and answering; at most one per shape. */
  private readonly thawed = new Set<string>();
  private readonly promoting = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly d: HotMembersDeps) {}

  isHot(member: PoolMember): boolean {
    return this.thawed.has(member.engineId);
  }

  /** Hot, or being made hot (thawed, its ping under way): not to be frozen. */
  keepsThawed(member: PoolMember): boolean {
    return this.thawed.has(member.engineId) || this.promoting.has(member.engineId);
  }

  /**
   * Makes the shape's first ready member hot unless one is (or is becoming) hot already: the
   * member goes to the front of `list`, where a claim takes from. `list` is the pool's own array.
   */
  async promote(list: PoolMember[]): Promise<void> {
    if (list.some((m) => this.thawed.has(m.engineId) || this.promoting.has(m.engineId))) return;
    const member = list[0];
    if (!member) return;
    this.promoting.add(member.engineId);
    try {
      this.d.thaw(member.engineId);
      await this.d.ping(member);
      // Claimed or removed meanwhile: it is not the pool's to mark.
      if (list.includes(member)) this.thawed.add(member.engineId);
    } catch (err) {
      this.d.logger.warn({ err, sandbox: member.engineId }, 'a pooled sandbox did not answer once thawed');
      this.d.broken(member);
    } finally {
      this.promoting.delete(member.engineId);
    }
  }

  /** A member booted just now, never frozen: it is hot unless its shape has a hot one. */
  adopt(list: PoolMember[], member: PoolMember): boolean {
    if (list.some((m) => this.thawed.has(m.engineId) || this.promoting.has(m.engineId))) return false;
    this.thawed.add(member.engineId);
    return true;
  }

  /** The member left the pool (claimed, released, destroyed). */
  forget(member: PoolMember): void {
    this.thawed.delete(member.engineId);
  }

  /** Pings every hot member every KEEP_WARM_MS; `members` lists the pool's ready members now. */
  start(members: () => PoolMember[]): void {
    this.timer = setInterval(() => {
      for (const m of members()) {
        if (!this.thawed.has(m.engineId)) continue;
        this.d.ping(m).catch((err: unknown) => {
          if (!this.thawed.has(m.engineId)) return; // claimed meanwhile: not the pool's any more
          this.d.logger.warn({ err, sandbox: m.engineId }, 'a hot pooled sandbox stopped answering');
          this.thawed.delete(m.engineId);
          this.d.broken(m);
        });
      }
    }, this.d.keepWarmMs ?? KEEP_WARM_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
