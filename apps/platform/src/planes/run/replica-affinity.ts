/**
 * Thread stickiness across replicas (issue 16: "requests carrying the same thread id go to the
 * same replica while it lives, so an agent that keeps conversation memory in process sees the
 * whole thread"; MCP "Mcp-Session-Id sessions pinned to one replica"). ARCHITECTURE.md "Thread
 * stickiness".
 *
 * A request's affinity key is its `X-Service-Thread-Id` (or the alias `X-Blaxel-Thread-Id`), else
 * its `Mcp-Session-Id`. Per replica set, a pin table maps key → replica:
 *   - a pinned key goes to its replica while that replica is ready (in the set). Scaling up does
 *     not move it; a replica that goes (scale-down, crash, new revision) re-maps its keys;
 *   - an unpinned key is placed by rendezvous hashing over the set's ready replicas (highest
 *     hash(key, replica) wins) and pinned there. Rendezvous spreads threads evenly and needs no
 *     table to agree with itself: after a platform restart (the table is memory) or an eviction,
 *     a thread lands where it was as long as the replicas are the same ones;
 *   - an MCP server makes its session id in the answer to `initialize`: the gateway pins the id it
 *     sees in a response to the replica that answered (`ThreadPins.pin`).
 * The table is bounded (least recently used evicted first) and entries expire after a day unused:
 * a client making up thread ids cannot grow memory, and at worst pushes out pins that rendezvous
 * then places again on the same replica unless the set changed since.
 */
import type { IncomingHttpHeaders } from 'node:http';
/** What affinity needs of a replica (structural: replica-sets.ts holds the pins, no import loop). */
interface Placed {
  engineId: string;
}

/** Keys kept per replica set. */
export const MAX_PINS = 10_000;
/** A pin unused this long is forgotten (rendezvous still places the key). */
export const PIN_TTL_MS = 24 * 3600_000;
/** Longest key kept: a longer header is hashed down to this (keys are held in memory). */
const MAX_KEY_CHARS = 128;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s && s.length > 0 ? s : undefined;
}

function bounded(prefix: string, value: string): string {
  if (value.length <= MAX_KEY_CHARS) return prefix + value;
  return `${prefix}#${hash32(value).toString(16)}${hash32(value + '\u0001').toString(16)}`;
}

/** The affinity key of a request, undefined when it carries none (then: least busy replica). */
export function affinityKey(headers: IncomingHttpHeaders): string | undefined {
  const thread = header(headers, 'x-service-thread-id') ?? header(headers, 'x-blaxel-thread-id');
  if (thread) return bounded('t:', thread);
  const session = header(headers, 'mcp-session-id');
  return session ? bounded('m:', session) : undefined;
}

/** The key an MCP server's answer names (its new session), if any. */
export function sessionKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const session = header(headers, 'mcp-session-id');
  return session ? bounded('m:', session) : undefined;
}

/** FNV-1a, then murmur3's finaliser for avalanche (the suffix differs only at its end). */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Rendezvous (highest random weight) choice of a replica for a key. */
export function rendezvous<R extends Placed>(key: string, replicas: readonly R[]): R | undefined {
  let best: R | undefined;
  let bestScore = -1;
  for (const r of replicas) {
    const score = hash32(`${key}\u0000${r.engineId}`);
    if (score > bestScore || (score === bestScore && best && r.engineId < best.engineId)) {
      best = r;
      bestScore = score;
    }
  }
  return best;
}

export class ThreadPins {
  /** key → pin, in least recently used first order (a Map keeps insertion order). */
  private readonly pins = new Map<string, { engineId: string; atMs: number }>();

  constructor(
    private readonly max = MAX_PINS,
    private readonly ttlMs = PIN_TTL_MS,
  ) {}

  get size(): number {
    return this.pins.size;
  }

  /** The replica for `key` among `ready` ones: its pinned one while ready, else rendezvous. */
  pick<R extends Placed>(key: string, ready: readonly R[], now: number): R | undefined {
    const pin = this.pins.get(key);
    if (pin && now - pin.atMs < this.ttlMs) {
      const r = ready.find((x) => x.engineId === pin.engineId);
      if (r) {
        this.pin(key, r, now);
        return r;
      }
    }
    const r = rendezvous(key, ready);
    if (r) this.pin(key, r, now);
    else this.pins.delete(key);
    return r;
  }

  pin(key: string, r: Placed, now: number): void {
    this.pins.delete(key);
    this.pins.set(key, { engineId: r.engineId, atMs: now });
    while (this.pins.size > this.max) {
      const oldest = this.pins.keys().next().value;
      if (oldest === undefined) break;
      this.pins.delete(oldest);
    }
  }

  /** Live pins to a replica (scale-down removes the replica holding fewest threads first). */
  countOf(engineId: string, now: number): number {
    let n = 0;
    for (const p of this.pins.values()) if (p.engineId === engineId && now - p.atMs < this.ttlMs) n++;
    return n;
  }

  /** Forgets a replica's pins (it went: its keys re-map on their next request). */
  drop(engineId: string): void {
    for (const [k, p] of this.pins) if (p.engineId === engineId) this.pins.delete(k);
  }
}
