// The WireGuard tunnel, behind an injected driver (reference sandbox-api.md §1.4). The real
// driver lands later; `unavailableTunnel` is the default: it refuses to apply (500) and is never
// up, so DELETE /network/tunnel answers 400 "no tunnel is running".
import type { TunnelConfig } from '@tarmac/contract';

export interface TunnelDriver {
  /** Brings the tunnel up (or reconfigures it). Throws on failure (→ 500). */
  apply(config: TunnelConfig): Promise<void>;
  /** Tears it down and restores the original network configuration. Throws on failure (→ 500). */
  disconnect(): Promise<void>;
  isUp(): boolean;
}

export const unavailableTunnel: TunnelDriver = {
  apply: () => Promise.reject(new Error('tunnels are not available in this sandbox yet')),
  disconnect: () => Promise.resolve(),
  isUp: () => false,
};

/** An in-memory driver that only records state; for tests and for wiring checks. */
export function recordingTunnel(): TunnelDriver & { applied: TunnelConfig[] } {
  let up = false;
  const applied: TunnelConfig[] = [];
  return {
    applied,
    apply(config) {
      applied.push(config);
      up = true;
      return Promise.resolve();
    },
    disconnect() {
      up = false;
      return Promise.resolve();
    },
    isUp: () => up,
  };
}
