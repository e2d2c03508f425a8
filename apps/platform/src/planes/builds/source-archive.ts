import { closeSync, createReadStream, mkdirSync, openSync, readSync, symlinkSync, writeSync } from 'node:fs';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { walkTar } from '@tarmac/engine';
import yauzl from 'yauzl';

/**
 * Safe extraction of an uploaded source archive (issue 15: "a zip with `..` or absolute paths or
 * symlinks escaping the root is refused (400) and nothing is written outside the build
 * directory"). A zip or a tar.gz (sniffed by magic bytes). Every member name must be a clean
 * relative path; files are created with O_EXCL|O_NOFOLLOW (a duplicate member cannot overwrite
 * what an earlier one made); symlinks must point inside the root and are made only after every
 * file is written, so no member is ever written through a link; other member types are refused.
 * Totals are bounded (bytes and members) while reading, not trusted from headers.
 */
export class SourceArchiveError extends Error {}

export interface SourceLimits {
  /** Uncompressed bytes of all files together. */
  maxBytes: number;
  maxEntries: number;
}

interface Extraction {
  root: string;
  limits: SourceLimits;
  bytes: number;
  entries: number;
  links: Array<{ path: string; target: string }>;
}

const MODE_TYPE = 0o170000;
const MODE_LINK = 0o120000;
const MODE_DIR = 0o040000;

export async function extractSource(archive: string, root: string, limits: SourceLimits): Promise<void> {
  mkdirSync(root, { recursive: true });
  const x: Extraction = { root, limits, bytes: 0, entries: 0, links: [] };
  const magic = Buffer.alloc(4);
  const fd = openSync(archive, 'r');
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (magic[0] === 0x50 && magic[1] === 0x4b) await extractZip(archive, x);
  else if (magic[0] === 0x1f && magic[1] === 0x8b) await extractTarGz(archive, x);
  else throw new SourceArchiveError('the upload is neither a zip nor a tar.gz archive');
  const linkPaths = new Set(x.links.map((l) => l.path));
  for (const link of x.links) checkLink(link.path, link.target, linkPaths);
  for (const link of x.links) {
    try {
      symlinkSync(link.target, join(root, link.path));
    } catch (err) {
      throw new SourceArchiveError(
        `archive member ${JSON.stringify(link.path.slice(0, 200))} cannot be linked (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
}

/** A member name as a clean relative path; refuses absolute names, `..`, backslashes and NUL. */
export function cleanMemberPath(name: string): string {
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.includes('\\') || name.includes('\0')) {
    throw new SourceArchiveError(`archive member ${JSON.stringify(name.slice(0, 200))} is an absolute path`);
  }
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) {
    throw new SourceArchiveError(
      `archive member ${JSON.stringify(name.slice(0, 200))} leaves the folder (..)`,
    );
  }
  return parts.join('/');
}

/**
 * Refuses a link whose target, walked from the link's own folder, leaves the root, including by
 * walking through another link of the archive (`d/up -> ..` then `x -> d/up/..` escapes although
 * each looks inside on its own): a path through a link is refused outright.
 */
function checkLink(path: string, target: string, links: ReadonlySet<string>): void {
  const escape = () =>
    new SourceArchiveError(
      `archive member ${JSON.stringify(path.slice(0, 200))} is a symlink escaping the folder`,
    );
  if (target === '' || target.startsWith('/') || target.includes('\0') || target.includes('\\'))
    throw escape();
  const at = path.split('/').slice(0, -1);
  // A link inside a linked folder would be created through the other link.
  if (at.some((_, i) => links.has(at.slice(0, i + 1).join('/')))) throw escape();
  const parts = target.split('/').filter((p) => p !== '' && p !== '.');
  parts.forEach((part, i) => {
    if (part === '..') {
      if (at.length === 0) throw escape();
      at.pop();
    } else {
      at.push(part);
      if (i < parts.length - 1 && links.has(at.join('/'))) throw escape();
    }
  });
}

function count(x: Extraction): void {
  if (++x.entries > x.limits.maxEntries) {
    throw new SourceArchiveError(`the archive has more than ${x.limits.maxEntries} members`);
  }
}

function addDir(x: Extraction, path: string): void {
  if (path !== '') mkdirSync(join(x.root, path), { recursive: true });
}

/** Opens one file for writing; its bytes count against the limit as they arrive. */
function openFile(x: Extraction, path: string, executable: boolean) {
  if (path === '') throw new SourceArchiveError('archive member names the folder itself as a file');
  mkdirSync(dirname(join(x.root, path)), { recursive: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  let fd: number;
  try {
    fd = openSync(join(x.root, path), flags, executable ? 0o755 : 0o644);
  } catch (err) {
    throw new SourceArchiveError(
      `archive member ${JSON.stringify(path.slice(0, 200))} cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'}: duplicate or under a file)`,
    );
  }
  return {
    write(chunk: Buffer): void {
      x.bytes += chunk.length;
      if (x.bytes > x.limits.maxBytes) {
        throw new SourceArchiveError(`the archive unpacks to more than ${x.limits.maxBytes} bytes`);
      }
      writeSync(fd, chunk);
    },
    close: () => closeSync(fd),
  };
}

async function collect(chunks: AsyncIterable<Buffer>, max: number): Promise<string> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of chunks) {
    n += c.length;
    if (n > max) throw new SourceArchiveError('a symlink target is too long');
    parts.push(c);
  }
  return Buffer.concat(parts).toString('utf8');
}

async function extractZip(archive: string, x: Extraction): Promise<void> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(archive, {
      lazyEntries: true,
      validateEntrySizes: true,
      strictFileNames: true,
    });
  } catch (err) {
    throw new SourceArchiveError(`bad zip archive: ${(err as Error).message}`);
  }
  try {
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) return;
      count(x);
      const path = cleanMemberPath(entry.fileName);
      const mode = entry.externalFileAttributes >>> 16;
      if (entry.fileName.endsWith('/') || (mode & MODE_TYPE) === MODE_DIR) {
        addDir(x, path);
        continue;
      }
      const stream = await zip.openReadStreamPromise(entry);
      if ((mode & MODE_TYPE) === MODE_LINK) {
        const target = await collect(stream, 4096);
        x.links.push({ path, target });
      } else {
        const file = openFile(x, path, (mode & 0o100) !== 0);
        try {
          for await (const chunk of stream) file.write(chunk as Buffer);
        } finally {
          file.close();
        }
      }
    }
  } catch (err) {
    if (err instanceof SourceArchiveError) throw err;
    throw new SourceArchiveError(`bad zip archive: ${(err as Error).message}`);
  } finally {
    zip.close();
  }
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: yauzl.Entry) => (cleanup(), resolve(e));
    const onEnd = () => (cleanup(), resolve(undefined));
    const onError = (err: Error) => (cleanup(), reject(err));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });
}

async function extractTarGz(archive: string, x: Extraction): Promise<void> {
  const source = createReadStream(archive).pipe(createGunzip());
  try {
    await walkTar(source, async (entry, data) => {
      count(x);
      const path = cleanMemberPath(entry.name);
      if (entry.type === 'dir') return addDir(x, path);
      if (entry.type === 'symlink') {
        x.links.push({ path, target: entry.linkname });
        return;
      }
      if (entry.type !== 'file') {
        throw new SourceArchiveError(
          `archive member ${JSON.stringify(path)} is a ${entry.type}; only files, folders and symlinks`,
        );
      }
      const file = openFile(x, path, false);
      try {
        await data((piece) => file.write(piece));
      } finally {
        file.close();
      }
    });
  } catch (err) {
    if (err instanceof SourceArchiveError) throw err;
    throw new SourceArchiveError(`bad tar.gz archive: ${(err as Error).message}`);
  }
}
