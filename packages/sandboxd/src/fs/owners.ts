// uid/gid → names for File.owner/group (§1.2 "Data shapes"), from /etc/passwd and /etc/group of
// the sandbox. Read once per file mtime; falls back to the number when a name is unknown.
import { readFileSync, statSync } from 'node:fs';

interface Table {
  mtimeMs: number;
  names: Map<number, string>;
}

const tables = new Map<string, Table>();

function load(file: string): Map<number, string> {
  let mtimeMs = -1;
  try {
    mtimeMs = statSync(file).mtimeMs;
  } catch {
    return new Map();
  }
  const cached = tables.get(file);
  if (cached?.mtimeMs === mtimeMs) return cached.names;
  const names = new Map<number, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [name, , id] = line.split(':');
    if (name && id && /^\d+$/.test(id)) names.set(Number(id), name);
  }
  tables.set(file, { mtimeMs, names });
  return names;
}

export const userName = (uid: number): string => load('/etc/passwd').get(uid) ?? String(uid);
export const groupName = (gid: number): string => load('/etc/group').get(gid) ?? String(gid);
