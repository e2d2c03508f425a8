// The environment sandboxd's own node process starts with. Node 20 builds its whole root
// certificate store (~140 bundled roots parsed) at start-up whenever NODE_EXTRA_CA_CERTS is set,
// which the platform sets in every sandbox (egress CA): +25 ms of CPU per start measured on the
// host, more under a sandbox's CPU quota — before a line of sandboxd runs. sandboxd never needs the
// extra CA itself (node 20's fetch ignores HTTPS_PROXY, so it never talks through the egress proxy
// that the CA is for), but the processes it starts do: the variable goes under another name in
// the container's env and sandboxd puts it back for its children (packages/sandboxd main.ts).
// `runc exec` copies the container's env, so exec() puts it back too (execEnvArgs).

/** Must match packages/sandboxd/src/main.ts. */
export const HIDDEN_PREFIX = 'TARMAC_SANDBOXD_HIDDEN_';
/**
 * Variables node reads at start-up that sandboxd's process must not see. NODE_OPTIONS too: the
 * image's or the user's (V8 flags such as --max-old-space-size make V8 reject sandboxd's code
 * cache; --inspect or a --require would run in sandboxd), and the platform's own preload
 * (--require node-proxy.cjs) leaves sandboxd alone anyway.
 */
export const HIDDEN_FROM_SANDBOXD = ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS'] as const;

/** KEY=VALUE list → the same with the hidden variables renamed. */
export function sandboxdProcessEnv(env: readonly string[]): string[] {
  return env.map((kv) => {
    const name = kv.slice(0, kv.indexOf('='));
    return (HIDDEN_FROM_SANDBOXD as readonly string[]).includes(name) ? `${HIDDEN_PREFIX}${kv}` : kv;
  });
}

/**
 * sandboxd's own secrets (issue 19 item 3: the gateway's per-sandbox token): in the container env
 * for sandboxd, which removes them before it starts anything. `runc exec` copies the container
 * env and cannot unset a variable, so exec() blanks them. (Root in the sandbox can still read
 * /proc/1/environ: the token opens only this sandbox's own sandboxd, which that root controls.)
 */
export const SANDBOXD_ONLY = [
  'TARMAC_SANDBOXD_TOKEN',
  'TARMAC_SANDBOXD_POOLED',
  'TARMAC_SANDBOXD_MCP_HOSTS',
] as const;

/** `--env` arguments for `runc exec` that restore the hidden variables and blank sandboxd's own. */
export function execEnvArgs(containerEnv: readonly string[]): string[] {
  const args: string[] = [];
  for (const kv of containerEnv) {
    if (kv.startsWith(HIDDEN_PREFIX)) args.push('--env', kv.slice(HIDDEN_PREFIX.length));
    const name = kv.slice(0, kv.indexOf('='));
    if ((SANDBOXD_ONLY as readonly string[]).includes(name)) args.push('--env', `${name}=`);
  }
  return args;
}
