// Writes tar archives member by member, header by hand, for tests that need members no archiver
// would write from a real tree: absolute and `..` names, symlinks pointing at the host, hard links
// out of the archive, device nodes, sizes that lie (issue 19 item 1's hostile image archives).
import { gzipSync } from 'node:zlib';

export interface TarMember {
  name: string;
  type?: 'file' | 'hardlink' | 'symlink' | 'char' | 'block' | 'dir';
  data?: string | Buffer;
  linkname?: string;
  mode?: number;
  dev?: [number, number];
  /** Size written in the header (default: the data's length); the data written stays `data`. */
  claimedSize?: number;
  /** pax extended header records written before the member (path, linkpath, SCHILY.xattr.*...). */
  pax?: Record<string, string>;
}

const FLAGS = { file: '0', hardlink: '1', symlink: '2', char: '3', block: '4', dir: '5', pax: 'x' } as const;

function paxData(records: Record<string, string>): Buffer {
  return Buffer.concat(
    Object.entries(records).map(([k, v]) => {
      const body = ` ${k}=${v}\n`;
      let len = Buffer.byteLength(body) + 1;
      while (String(len).length + Buffer.byteLength(body) !== len)
        len = String(len).length + Buffer.byteLength(body);
      return Buffer.from(`${len}${body}`);
    }),
  );
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(m: Omit<TarMember, 'type'> & { type?: keyof typeof FLAGS }, size: number): Buffer {
  const h = Buffer.alloc(512);
  const type = m.type ?? 'file';
  h.write(m.name, 0, 100, 'utf8');
  h.write(octal(m.mode ?? (type === 'dir' ? 0o755 : 0o644), 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(1_700_000_000, 12), 136, 'latin1');
  h.write(FLAGS[type], 156, 'latin1');
  h.write(m.linkname ?? '', 157, 100, 'utf8');
  h.write('ustar\u000000', 257, 'latin1');
  h.write(octal(m.dev?.[0] ?? 0, 8), 329, 'latin1');
  h.write(octal(m.dev?.[1] ?? 0, 8), 337, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

export function tarOf(members: TarMember[], gzip = false): Buffer {
  const parts: Buffer[] = [];
  const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);
  for (const m of members) {
    if (m.pax) {
      const records = paxData(m.pax);
      parts.push(header({ name: 'PaxHeader', type: 'pax' }, records.length), records, pad(records.length));
    }
    const data = Buffer.from(m.data ?? '');
    parts.push(
      header(m, m.claimedSize ?? data.length),
      data,
      Buffer.alloc((512 - (data.length % 512)) % 512),
    );
  }
  parts.push(Buffer.alloc(1024));
  const tar = Buffer.concat(parts);
  return gzip ? gzipSync(tar) : tar;
}

/** A docker-save archive of the given layers, plus any extra members for the outer archive. */
export function dockerSaveOf(layers: TarMember[][], extra: TarMember[] = [], config?: string): Buffer {
  const names = layers.map((_, i) => `l${i}/layer.tar`);
  return tarOf([
    ...layers.map((l, i) => ({ name: names[i]!, data: tarOf(l) })),
    ...(config === undefined ? [{ name: 'config.json', data: '{"config":{"Env":["A=1"]}}' }] : []),
    ...extra,
    ...(extra.some((e) => e.name === 'manifest.json')
      ? []
      : [
          {
            name: 'manifest.json',
            data: JSON.stringify([{ Config: config ?? 'config.json', RepoTags: ['t/x:1'], Layers: names }]),
          },
        ]),
  ]);
}
