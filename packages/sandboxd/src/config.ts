// Everything sandboxd depends on, passed in by main (sandboxd.ts) or by tests. Nothing below reads
// the environment, argv or the clock directly.
import type { TunnelDriver } from './network/tunnel.js';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface SandboxdConfig {
  /** The daemon's working directory: relative `{path}`s resolve against it (§1.1). */
  workingDir: string;
  /** `~` expands to this (§1.1). */
  home: string;
  /** Process log files (`<name>.stdout.log`, …), §1.3 "Log files". */
  logDir: string;
  /** Multipart upload state lives in `<tmpDir>/multipart-uploads` (§1.2). */
  tmpDir: string;
  /** Environment of spawned processes (request `env` merged on top). */
  env: Record<string, string>;
  /** `$SHELL $SHELL_ARGS <command>` (§1.3), defaults `sh` and `-c`. */
  shell: string;
  shellArgs: string[];
  /** `BL_DISABLE_KEEPALIVE`: refuse keepAlive with 400. */
  keepAliveDisabled: boolean;
  /** `DISABLE_TERMINAL`: no /terminal routes. */
  terminalDisabled: boolean;
  /** Per log file cap (32 MiB upstream; §1.3). */
  logFileMaxBytes: number;
  /** The `/proc` to read sockets from (tests may point elsewhere). */
  procRoot: string;
  version: string;
  clock: Clock;
  tunnel: TunnelDriver;
  /**
   * Private state that must outlive sandboxd but not the container (the process table, output
   * FIFOs): a tmpfs path in a sandbox (issue 19 item 6). Unset: processes die with sandboxd.
   */
  stateDir?: string;
  /** Command making FIFOs (`mkfifo`, or `/.tarmac/bin/busybox mkfifo`); unset: plain pipes. */
  mkfifo?: string[];
  /** The per-sandbox secret the platform gateway sends (http/gateway-token.ts); unset = open. */
  gatewayToken?: string;
  /**
   * Hostnames (besides loopback) a request to /mcp may name in Host and Origin: the platform's
   * and this sandbox's own (TARMAC_SANDBOXD_MCP_HOSTS; mcp/host-guard.ts, issue 14 item 7).
   */
  mcpAllowedHosts?: string[];
  /** Booted for the warm pool: `POST /_tarmac/claim` exists until it is used (claim.ts). */
  pooled?: boolean;
  /** The boot env file (`--boot-env`, packages/engine boot-env.ts): a pooled sandbox's claim. */
  bootEnvFile?: string;
  /** Interval of `[keepalive]` lines on streams; 30 s upstream, 5 s on streamed exec. */
  keepaliveMs: { logs: number; watch: number; exec: number };
}

export const LOG_FILE_MAX_BYTES = 32 * 1024 * 1024;
