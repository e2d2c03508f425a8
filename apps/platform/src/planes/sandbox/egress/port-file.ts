// The proxy ports this platform home has handed to sandboxes (in their HTTP_PROXY), kept in
// `egress/ports.json`: a sandbox keeps its environment across platform restarts, so a restarted
// platform listens on those ports again even when it was started with another TARMAC_EGRESS_PORT.
// Only the egress plane's `prepare`/`start` (called by main.ts) use this.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const MAX_REMEMBERED = 16;

function file(root: string): string {
  return join(root, 'egress', 'ports.json');
}

export async function readHandedPorts(root: string): Promise<number[]> {
  try {
    const v: unknown = JSON.parse(await readFile(file(root), 'utf8'));
    return Array.isArray(v) ? v.filter((p): p is number => Number.isInteger(p) && p > 0 && p < 65_536) : [];
  } catch {
    return [];
  }
}

/** Remembers `port` (most recent first, bounded). */
export async function rememberHandedPort(root: string, port: number): Promise<void> {
  const ports = [port, ...(await readHandedPorts(root)).filter((p) => p !== port)].slice(0, MAX_REMEMBERED);
  await mkdir(join(root, 'egress'), { recursive: true });
  const tmp = `${file(root)}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(ports));
  await rename(tmp, file(root));
}
