// A streaming tar reader that yields each member's header (name, type, size, link, device) and
// lets the caller consume or skip its data. Used to vet untrusted image archives before anything
// is written (issue 19 item 1): the outer archive is extracted by this reader itself (plain files
// and directories only, so no parser differential with another tar), and each layer is scanned
// here (limits, device nodes, names) before umoci unpacks it. Understands what GNU tar and Go's
// archive/tar write: ustar prefix, GNU long names (L/K), pax extended headers (path, linkpath,
// size) and base-256 sizes. Sparse files, multi-volume and global pax overrides are refused,
// since a reader that skips them differently from umoci's could fall out of step.
import { InvalidImageError } from '../errors.js';

export type TarEntryType = 'file' | 'hardlink' | 'symlink' | 'char' | 'block' | 'dir' | 'fifo';

export interface TarEntry {
  name: string;
  type: TarEntryType;
  size: number;
  linkname: string;
  devmajor: number;
  devminor: number;
  /** Extended attribute names the member carries (pax SCHILY.xattr.* / LIBARCHIVE.xattr.*). */
  xattrs: string[];
}

const TYPES: Record<string, TarEntryType> = {
  '0': 'file',
  '\0': 'file',
  '7': 'file',
  '1': 'hardlink',
  '2': 'symlink',
  '3': 'char',
  '4': 'block',
  '5': 'dir',
  '6': 'fifo',
};

/** Long names and pax headers are metadata; anything larger is not a real image. */
const MAX_META_BYTES = 1 << 20;
const MAX_TRAILING_BYTES = 1 << 20;

/** Pulls exact byte counts out of a chunked stream. */
class ByteReader {
  private chunks: Buffer[] = [];
  private have = 0;
  private ended = false;

  constructor(private readonly source: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<void> {
    while (this.have < n && !this.ended) {
      const r = await this.source.next();
      if (r.done) this.ended = true;
      else {
        this.chunks.push(r.value);
        this.have += r.value.length;
      }
    }
  }

  /** Exactly n bytes, or null at a clean end of stream (nothing left). */
  async take(n: number): Promise<Buffer | null> {
    await this.fill(n);
    if (this.have === 0) return null;
    if (this.have < n) throw new InvalidImageError('bad image archive: truncated tar stream');
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.have = rest.length;
    return out;
  }

  /** Reads to the end of the stream, discarding; refuses more than max bytes. */
  async drain(max: number): Promise<void> {
    let seen = this.have;
    this.chunks = [];
    this.have = 0;
    while (!this.ended) {
      const r = await this.source.next();
      if (r.done) this.ended = true;
      else seen += r.value.length;
      if (seen > max) throw new InvalidImageError('bad image archive: data after the end of the tar stream');
    }
  }

  /** Hands n bytes to sink piece by piece (never buffering a whole member). */
  async pass(n: number, sink?: (piece: Buffer) => void | Promise<void>): Promise<void> {
    let left = n;
    while (left > 0) {
      if (this.have === 0) await this.fill(1);
      const chunk = this.chunks.shift();
      if (!chunk) throw new InvalidImageError('bad image archive: truncated tar stream');
      const piece = chunk.subarray(0, left);
      if (chunk.length > left) this.chunks.unshift(chunk.subarray(left));
      this.have -= piece.length;
      left -= piece.length;
      await sink?.(piece);
    }
  }
}

function cstring(b: Buffer, start: number, len: number): string {
  const field = b.subarray(start, start + len);
  const nul = field.indexOf(0);
  return field.subarray(0, nul < 0 ? len : nul).toString('utf8');
}

function numeric(b: Buffer, start: number, len: number): number {
  const field = b.subarray(start, start + len);
  if ((field[0]! & 0x80) !== 0) {
    // GNU base-256: big-endian two's complement with the top bit as the flag.
    let v = field[0]! & 0x7f;
    for (let i = 1; i < len; i++) v = v * 256 + field[i]!;
    if (!Number.isSafeInteger(v)) throw new InvalidImageError('bad image archive: member size out of range');
    return v;
  }
  const text = cstring(b, start, len).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new InvalidImageError('bad image archive: not a tar file (bad header)');
  return parseInt(text, 8);
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
  const text = cstring(h, 148, 8).trim();
  return /^[0-7]+$/.test(text) && parseInt(text, 8) === sum;
}

function paxRecords(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    const len = Number(data.subarray(pos, space).toString());
    if (space < 0 || !Number.isInteger(len) || len <= 0 || pos + len > data.length) {
      throw new InvalidImageError('bad image archive: malformed pax header');
    }
    const record = data.subarray(space + 1, pos + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    pos += len;
  }
  return out;
}

/**
 * Walks the archive on `source` (already decompressed). For each member, `visit` gets its header
 * and a `data` function to receive its bytes; bytes not taken are skipped.
 */
export async function walkTar(
  source: AsyncIterable<Buffer>,
  visit: (
    entry: TarEntry,
    data: (sink: (piece: Buffer) => void | Promise<void>) => Promise<void>,
  ) => Promise<void> | void,
): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    await walk(new ByteReader(iterator), visit);
  } finally {
    // Ends the source (a file stream: its descriptor closes) also when a member was refused.
    await iterator.return?.();
  }
}

async function walk(reader: ByteReader, visit: Parameters<typeof walkTar>[1]): Promise<void> {
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  let first = true;
  for (;;) {
    const h = await reader.take(512);
    if (h === null) {
      if (first) throw new InvalidImageError('bad image archive: not a tar file (empty)');
      return;
    }
    if (h.every((b) => b === 0)) {
      // End-of-archive marker; what follows is padding (tar writes whole 10 KiB records). Read to
      // the end, so a caller hashing the raw stream sees all of it.
      await reader.drain(MAX_TRAILING_BYTES);
      return;
    }
    if (!checksumOk(h))
      throw new InvalidImageError('bad image archive: not a tar file (bad header checksum)');
    first = false;
    const flag = String.fromCharCode(h[156]!);
    const paxSize = pax.get('size');
    const size = paxSize !== undefined ? Number(paxSize) : numeric(h, 124, 12);
    if (!Number.isSafeInteger(size) || size < 0)
      throw new InvalidImageError('bad image archive: bad member size');
    const padded = Math.ceil(size / 512) * 512;
    if (flag === 'L' || flag === 'K' || flag === 'x' || flag === 'g') {
      if (size > MAX_META_BYTES) throw new InvalidImageError('bad image archive: oversized tar metadata');
      const data = (await reader.take(padded)) ?? Buffer.alloc(0);
      const body = data.subarray(0, size);
      if (flag === 'g') {
        // Global headers (git archive writes a comment): harmless unless they change names or sizes.
        const keys = [...paxRecords(body).keys()];
        if (keys.some((k) => ['path', 'linkpath', 'size'].includes(k) || k.startsWith('GNU.sparse'))) {
          throw new InvalidImageError('bad image archive: global pax header overrides member fields');
        }
      } else if (flag === 'x') pax = paxRecords(body);
      else if (flag === 'L') longName = cstring(body, 0, body.length);
      else longLink = cstring(body, 0, body.length);
      continue;
    }
    const type = TYPES[flag];
    if (!type || [...pax.keys()].some((k) => k.startsWith('GNU.sparse'))) {
      throw new InvalidImageError(
        `bad image archive: unsupported tar member type "${flag.replace(/\W/g, '?')}"`,
      );
    }
    const ustar = h.subarray(257, 263).toString('latin1') === 'ustar\0';
    const prefix = ustar ? cstring(h, 345, 155) : '';
    const short = cstring(h, 0, 100);
    const entry: TarEntry = {
      name: pax.get('path') ?? longName ?? (prefix ? `${prefix}/${short}` : short),
      type,
      size: type === 'file' ? size : 0,
      linkname: pax.get('linkpath') ?? longLink ?? cstring(h, 157, 100),
      devmajor: type === 'char' || type === 'block' ? numeric(h, 329, 8) : 0,
      devminor: type === 'char' || type === 'block' ? numeric(h, 337, 8) : 0,
      xattrs: [...pax.keys()]
        .filter((k) => k.startsWith('SCHILY.xattr.') || k.startsWith('LIBARCHIVE.xattr.'))
        .map((k) => k.slice(k.indexOf('xattr.') + 'xattr.'.length)),
    };
    longName = longLink = undefined;
    pax = new Map();
    let taken = false;
    await visit(entry, async (sink) => {
      taken = true;
      await reader.pass(size, sink);
    });
    await reader.pass(taken ? padded - size : padded);
  }
}

/**
 * A member name as a clean relative path ("" for the root itself), or an error: absolute names,
 * `..` components and NUL bytes do not belong in an image (issue 19 item 1).
 */
export function memberPath(name: string): string {
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (name.startsWith('/') || parts.includes('..') || name.includes('\0')) {
    throw new InvalidImageError(
      `bad image archive: member name leaves the image: ${JSON.stringify(name.slice(0, 200))}`,
    );
  }
  return parts.join('/');
}
