/**
 * The network a build's RUN steps get (issue 15 "Builds": `RUN apt-get install`/`npm ci`/`pip
 * install` may reach the package registries this machine reaches). Declared here, provided by the
 * egress side (planes/sandbox/egress/build-egress.ts) through compose.ts.
 *
 * - `egress` (default): each build gets a network namespace of its own on the sandbox bridge, with
 *   no route anywhere but the bridge gateway, where a proxy for builds listens; the steps are
 *   pointed at it with the proxy variables. The proxy connects to the public internet only: never
 *   to loopback, the platform's ports, link-local (metadata), the sandbox bridge, the host's own
 *   addresses or private ranges — unless the operator's TARMAC_EGRESS_ALLOW_CIDRS opens them.
 * - `none`: no network at all (a project whose dependencies must be downloaded fails).
 * - `host`: the host's network namespace: steps reach everything the host reaches, its loopback
 *   services (database, the platform's own ports) included. Only where every tenant is trusted.
 */
export type BuildNetworkMode = 'egress' | 'none' | 'host';

export const BUILD_NETWORK_MODES: readonly BuildNetworkMode[] = ['egress', 'none', 'host'];

/** One build's network, held for the duration of `buildah build`. */
export interface BuildNetworkLease {
  /** The namespace RUN steps join (`buildah build --network ns:<path>`). */
  netnsPath: string;
  /** The proxy URL with this build's own credentials in it (they open nothing but this build's way out). */
  proxyUrl: string;
  /** Removes the namespace and revokes the credentials; idempotent. */
  release(): Promise<void>;
}

export interface BuildNetworkProvider {
  open(): Promise<BuildNetworkLease>;
}

/**
 * The build-time proxy environment. Given to the `buildah` process, whose `--http-proxy` (on by
 * default) passes these names, and only these, into RUN steps: they are not build args, so they
 * are in no layer, no image config, no history entry, and not in the layer cache's key (a rebuild
 * with other credentials reuses the cache). Both spellings: apt reads `http_proxy`, curl prefers
 * lower case, npm and pip read either.
 */
export function buildProxyEnv(proxyUrl: string): Record<string, string> {
  const noProxy = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: proxyUrl,
    HTTPS_PROXY: proxyUrl,
    http_proxy: proxyUrl,
    https_proxy: proxyUrl,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
  };
}

/**
 * Whether a build of `dockerfile` can need the network at all. Only RUN steps and the builder
 * itself fetching for `ADD <url>` reach out, and ONBUILD triggers can hide either in an image a
 * FROM names; so a Dockerfile that says none of RUN, ADD or ONBUILD and builds FROM nothing but
 * `baseImage` (the platform's own, which has no triggers) or its own earlier stages is built with
 * `--network=none` and no namespace (issue 15 bench: opening and removing a build's namespace
 * cost ~0.1 s of a ~1 s warm rebuild). Anything unclear (a variable in FROM, another escape
 * character) counts as needing it: the cost of a wrong "yes" is 0.1 s, of a wrong "no" a RUN
 * without network (it fails) or an `ADD <url>` fetched past the build proxy, which cannot happen
 * here as ADD always counts.
 */
export function needsNetwork(dockerfile: string, baseImage: string): boolean {
  if (/\b(RUN|ADD|ONBUILD)\b/i.test(dockerfile)) return true;
  const bases = new Set([baseImage, `docker.io/${baseImage}`, `docker.io/library/${baseImage}`]);
  const stages = new Set<string>();
  let froms = 0;
  const logical = dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const line of logical) {
    const words = line.trim().split(/\s+/);
    if (words[0]?.toUpperCase() !== 'FROM') continue;
    froms++;
    const args = words.slice(1).filter((w) => !w.startsWith('--'));
    const image = args[0] ?? '';
    if (!bases.has(image) && !stages.has(image.toLowerCase())) return true;
    if (args[1]?.toUpperCase() === 'AS' && args[2]) stages.add(args[2].toLowerCase());
  }
  return froms === 0;
}
