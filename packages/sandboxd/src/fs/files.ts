// Filesystem operations behind /filesystem (reference sandbox-api.md §1.2): the File and Directory
// shapes, writes (parents 0755, files 0644 by default), deletes and the recursive tree.
import type { Stats } from 'node:fs';
import { chmod, lstat, mkdir, readdir, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { SandboxDirectory, SandboxFile } from '@tarmac/contract';
import { badRequest, fsError } from '../http/errors.js';
import { groupName, userName } from './owners.js';

export function toFile(path: string, st: Stats): SandboxFile {
  return {
    path,
    name: basename(path),
    permissions: (st.mode & 0o7777).toString(8),
    size: st.size,
    lastModified: st.mtime.toISOString(),
    owner: userName(st.uid),
    group: groupName(st.gid),
  };
}

/** Octal permission string ("644", "0644", "0o644") → mode; 400 when malformed (§1.2 PUT). */
export function parsePermissions(p: string | undefined, fallback: number): number {
  if (p === undefined || p === '') return fallback;
  const m = /^(?:0o?)?([0-7]{3,4})$/.exec(p);
  if (!m?.[1]) throw badRequest(`invalid permissions: ${p}`);
  return parseInt(m[1], 8);
}

/** One level: files and subdirectories of `dir` (GET /filesystem on a directory). */
export async function listDirectory(dir: string): Promise<SandboxDirectory> {
  const out: SandboxDirectory = { name: basename(dir) || '/', path: dir, files: [], subdirectories: [] };
  await collect(dir, out, false);
  return out;
}

/**
 * The whole tree under `dir`, flattened into the spec's shape: `files` holds every file at any
 * depth and `subdirectories` every directory at any depth, each with its absolute path.
 */
export async function tree(dir: string): Promise<SandboxDirectory> {
  let st: Stats;
  try {
    st = await stat(dir);
  } catch (err) {
    throw fsError(err, dir);
  }
  if (!st.isDirectory()) throw badRequest(`not a directory: ${dir}`);
  const out: SandboxDirectory = { name: basename(dir) || '/', path: dir, files: [], subdirectories: [] };
  await collect(dir, out, true);
  return out;
}

async function collect(dir: string, out: SandboxDirectory, recursive: boolean): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw fsError(err, dir);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const subdirs: string[] = [];
  await Promise.all(
    entries.map(async (e) => {
      const path = join(dir, e.name);
      let st: Stats;
      try {
        st = await stat(path); // follows symlinks, like the reference's listing
      } catch {
        return; // dangling symlink or raced delete
      }
      if (st.isDirectory()) subdirs.push(path);
      else out.files.push(toFile(path, st));
    }),
  );
  out.files.sort((a, b) => (a.path < b.path ? -1 : 1));
  subdirs.sort();
  for (const path of subdirs) {
    out.subdirectories.push({ name: basename(path), path });
    // Do not descend through symlinked directories (cycles).
    if (recursive && !(await lstat(path)).isSymbolicLink()) await collect(path, out, true);
  }
}

/** Writes a file, creating missing parents with 0755 (§1.1). */
export async function writeFileAt(path: string, content: string | Uint8Array, mode: number): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o755 });
    await writeFile(path, content, { mode });
    await chmod(path, mode); // mode of writeFile only applies on create, and is masked by umask
  } catch (err) {
    throw fsError(err, path);
  }
}

export async function makeDirectory(path: string, mode: number): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode: 0o755 });
    await chmod(path, mode);
  } catch (err) {
    throw fsError(err, path);
  }
}

/** DELETE /filesystem: 404 when missing, 422 for a non-empty directory without `recursive`. */
export async function remove(path: string, recursive: boolean): Promise<void> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (err) {
    throw fsError(err, path);
  }
  try {
    if (!st.isDirectory()) await unlink(path);
    else if (recursive) await rm(path, { recursive: true, force: true });
    else await rmdir(path);
  } catch (err) {
    throw fsError(err, path);
  }
}
