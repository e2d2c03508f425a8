// The sandboxd program (the bundle's entry): reads argv and the environment (reference
// sandbox-api.md §1.11), builds the daemon and listens on 0.0.0.0:<--port>.
import { existsSync, readFileSync } from 'node:fs';
import { cwd } from 'node:process';
import { homedir, tmpdir } from 'node:os';
import { createSandboxd, defaultConfig, parseFlag, parsePort } from './sandboxd.js';

/** The runtime's static busybox (packages/engine runtime-dir.ts), which also supervises sandboxd. */
const RUNTIME_BUSYBOX = '/.tarmac/bin/busybox';

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v);
}

// The engine starts this process with NODE_EXTRA_CA_CERTS and NODE_OPTIONS renamed (node 20 builds
// its whole root certificate store at start-up when the first is set: +25 ms per sandbox start; V8
// flags in the second make V8 reject sandboxd's code cache; packages/engine sandboxd-env.ts). The
// processes sandboxd starts get them back under their own names.
const HIDDEN_PREFIX = 'TARMAC_SANDBOXD_HIDDEN_';

function unhide(env: Record<string, string>): void {
  for (const [k, v] of Object.entries(env)) {
    if (!k.startsWith(HIDDEN_PREFIX)) continue;
    delete env[k];
    env[k.slice(HIDDEN_PREFIX.length)] ??= v;
  }
}

/**
 * The gateway's per-sandbox secret (http/gateway-token.ts): sandboxd keeps it, nothing it starts
 * inherits it (removed from process.env too, which the terminal and node itself read).
 */
const TOKEN_VAR = 'TARMAC_SANDBOXD_TOKEN';
/** Set by the engine on a warm-pool sandbox (claim.ts); like the token, nothing inherits it. */
const POOLED_VAR = 'TARMAC_SANDBOXD_POOLED';

/** Hostnames /mcp accepts in Host and Origin, comma-separated (mcp/host-guard.ts); sandboxd's own. */
const MCP_HOSTS_VAR = 'TARMAC_SANDBOXD_MCP_HOSTS';

/**
 * The sandbox's own env (packages/engine boot-env.ts): a JSON file the engine mounts, not this
 * process's env, so the container's init carries nothing of the sandbox (issue 20). A sandbox made
 * before boot files has none: its env is the process env.
 */
function readBootEnv(path: string | undefined): Record<string, string> {
  if (!path) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

function main(): void {
  const argv = process.argv.slice(2);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  unhide(env);
  const bootEnvFile = parseFlag(argv, '--boot-env');
  Object.assign(env, readBootEnv(bootEnvFile));
  const gatewayToken = env[TOKEN_VAR] || undefined;
  const mcpAllowedHosts = (env[MCP_HOSTS_VAR] ?? '').split(',').filter(Boolean);
  const pooled = truthy(env[POOLED_VAR]);
  for (const own of [TOKEN_VAR, MCP_HOSTS_VAR, POOLED_VAR]) {
    delete env[own];
    delete process.env[own];
  }
  const stateDir = parseFlag(argv, '--state-dir');
  const config = defaultConfig({
    workingDir: cwd(),
    home: env.HOME ?? homedir(),
    logDir: env.SANDBOX_LOG_DIR ?? '/var/log/sandbox-api',
    tmpDir: env.TMPDIR ?? tmpdir(),
    env,
    shell: env.SHELL ?? 'sh',
    shellArgs: env.SHELL_ARGS ? env.SHELL_ARGS.split(' ').filter(Boolean) : ['-c'],
    keepAliveDisabled: truthy(env.BL_DISABLE_KEEPALIVE),
    terminalDisabled: truthy(env.DISABLE_TERMINAL),
    ...(stateDir
      ? { stateDir, mkfifo: existsSync(RUNTIME_BUSYBOX) ? [RUNTIME_BUSYBOX, 'mkfifo'] : ['mkfifo'] }
      : {}),
    ...(gatewayToken ? { gatewayToken } : {}),
    mcpAllowedHosts,
    pooled,
    ...(pooled && bootEnvFile ? { bootEnvFile } : {}),
  });
  // A failure in one request must not end every process of the sandbox (issue 19 item 6): log a
  // stray rejection and carry on. An uncaught exception still exits (the state may be broken);
  // the supervisor restarts sandboxd, which re-adopts its processes.
  process.on('unhandledRejection', (err) => console.error('sandboxd: unhandled rejection:', err));
  const d = createSandboxd(config);
  d.server.listen(parsePort(argv), '0.0.0.0', () => {
    // FIFOs for the first execs, made once start-up is over (it competes with the first /health).
    setTimeout(() => d.processes.prepare(), 1000).unref();
  });
  // SIGTERM from the engine's stop: let the processes end (the engine SIGKILLs after its grace
  // period), then exit 0 so a graceful stop is told apart from a kill.
  const stop = (): void => void d.shutdown().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
