/** The warm pool's claim (WarmPool.claim): what a create asks for, and the member it is handed. */
import type { PoolMember } from './pool-member.js';

export interface ClaimRequest {
  workspace: string;
  name: string;
  /** The engine ref the create's image resolves to in its workspace. */
  engineImage: string;
  memoryMB: number;
  /** The sandbox's envs, secret ones opened, in spec order (later wins, as at a boot). */
  env: Record<string, string>;
  /** Hostnames the sandbox's /mcp accepts (issue 14 item 7); a pooled one booted without them. */
  mcpHosts?: string[];
}

export interface ClaimedSandbox extends PoolMember {
  /**
   * Settles once the sandbox has its hostname (the engine's claim) and sandboxd has answered a
   * wake-up ping; rejects when it could not be given its hostname. The caller writes the record
   * meanwhile and makes the sandbox live only after this (issue 20 item 1: the hostname's and the
   * ping's round trips run beside the record's write, not before it).
   */
  ready: Promise<void>;
  /** The record now exists: the member is the sandbox's for good (the reaper may judge it). */
  settle(): void;
  /** The record could not be written: the member is destroyed (never back to the pool). */
  discard(): Promise<void>;
}
