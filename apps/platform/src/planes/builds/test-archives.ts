import { crc32, gzipSync } from 'node:zlib';

/**
 * Hand-made archives for the extraction tests (and the e2e attack tests): a zip writer that puts
 * any name, mode and symlink in (real zip tools refuse to write `../x`), and a ustar writer.
 * Stored (uncompressed) zip members; enough for yauzl, which is what reads them.
 */
export interface Member {
  name: string;
  data?: string;
  /** A symlink to this target. */
  link?: string;
  dir?: boolean;
}

export function zipOf(members: Member[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const m of members) {
    const name = Buffer.from(m.name);
    const data = Buffer.from(m.link ?? m.data ?? '');
    const mode = m.link !== undefined ? 0o120777 : m.dir ? 0o40755 : 0o100644;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix: the mode is in the external attributes
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export function tarGzOf(members: Member[]): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const data = Buffer.from(m.data ?? '');
    const h = Buffer.alloc(512);
    h.write(m.name, 0, 100);
    h.write(m.dir ? '0000755\0' : '0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${(m.link !== undefined || m.dir ? 0 : data.length).toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write(m.link !== undefined ? '2' : m.dir ? '5' : '0', 156);
    if (m.link !== undefined) h.write(m.link, 157, 100);
    h.write('ustar\x0000', 257);
    h.write('        ', 148);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h);
    if (m.link === undefined && !m.dir) {
      blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
