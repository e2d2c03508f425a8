// Image reference normalisation and the vendor names that resolve to our base image.

export const BASE_IMAGE = 'tarmac/base:latest';

/** Hub names with an equivalent here. Others (e.g. blaxel/python-data-science) are not aliased. */
const ALIASES: Record<string, string> = {
  'blaxel/base-image:latest': BASE_IMAGE,
  'blaxel/base:latest': BASE_IMAGE,
};

/** Adds ":latest" when there is no tag and drops a Docker Hub registry prefix. */
export function normalizeRef(ref: string): string {
  let r = ref.trim();
  for (const prefix of ['docker.io/', 'index.docker.io/']) {
    if (r.startsWith(prefix)) r = r.slice(prefix.length);
  }
  // [registry[:port]/]path[:tag]; digests (@sha256:) are not supported yet.
  if (!/^([a-z0-9.-]+:\d+\/)?[a-z0-9][a-z0-9._\-/]*(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127})?$/.test(r)) {
    throw new Error(`invalid image reference: ${ref}`);
  }
  const lastSlash = r.lastIndexOf('/');
  if (!r.slice(lastSlash + 1).includes(':')) r = `${r}:latest`;
  return r;
}

/** The canonical reference an image is stored under. */
export function resolveRef(ref: string): string {
  const n = normalizeRef(ref);
  return ALIASES[n] ?? n;
}

/** A directory name for a reference: no slashes, reversible. */
export function refDirName(ref: string): string {
  return encodeURIComponent(ref);
}
