// What one client can make sandboxd hold (issue 19 item 6), in one place. sandboxd serves the
// platform's gateway and, on 0.0.0.0:8080, anything running inside the sandbox: neither may grow
// it without bound or run it out of descriptors (an EMFILE on accept used to be a crash).
export const LIMITS = {
  /** JSON bodies (file writes with `content`, trees, exec, MCP) are read whole: 413 above this. */
  jsonBodyBytes: 32 * 1024 * 1024,
  /** One POST /process/{id}/stdin body (the vendor SDK's documented 413 above 8 MiB). */
  stdinBodyBytes: 8 * 1024 * 1024,
  /** A stdin write the process does not take up within this is a 503 (it stopped reading). */
  stdinDrainMs: 10_000,
  /** Open connections; more are closed at accept (below the container's 1024 open files). */
  connections: 512,
  /** Request line and headers must arrive within this (slow-header clients). */
  headersTimeoutMs: 20_000,
  /**
   * An idle keep-alive connection is closed after this. Node's default (5 s) made the gateway's
   * first request after a pause open a new connection into the sandbox (issue 20 item 2); the
   * gateway's agent drops its idle sockets at 60 s, before this, so it never reuses one sandboxd
   * is closing. Idle connections stay bounded by `connections`.
   */
  keepAliveTimeoutMs: 65_000,
  /** Header bytes per request (node's default, made explicit): 431 above it. */
  maxHeaderBytes: 16 * 1024,
  /**
   * A request body that stalls this long is dropped. Whole-request timeouts would cut off large
   * uploads on slow links, so only idleness is bounded.
   */
  bodyIdleMs: 60_000,
  /** Concurrent long-lived streams (log follow, watch, streamed exec): 429 beyond it. */
  streams: 128,
  /** Bytes queued for a stream's slow reader before that stream is ended. */
  streamBacklogBytes: 4 * 1024 * 1024,
  /** Directories watched at once across all watch streams (one inotify watch each). */
  watchedDirs: 8192,
  /** Terminal sessions (one PTY and shell each), and one WebSocket message. */
  terminalSessions: 32,
  terminalMessageBytes: 1024 * 1024,
} as const;
