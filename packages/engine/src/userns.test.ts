import {
  chmodSync,
  chownSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { idMappings, shiftTree } from './userns.js';

const root = process.getuid?.() === 0;

describe('user namespace ids (issue 19 item 9)', () => {
  const range = { base: 1_000_000_000, size: 65_536 };

  it('maps 0..size-1 inside to base.. outside', () => {
    expect(idMappings(range)).toEqual([{ containerID: 0, hostID: 1_000_000_000, size: 65_536 }]);
  });

  describe.skipIf(!root)(`shiftTree${root ? '' : ' (skipped: chown needs root)'}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'tarmac-shift-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('re-owns a tree by the offset, keeps setuid bits, follows no symlink, and is idempotent', () => {
      const t = join(dir, 'tree');
      mkdirSync(join(t, 'etc'), { recursive: true });
      writeFileSync(join(t, 'etc', 'shadow'), 'x');
      chmodSync(join(t, 'etc', 'shadow'), 0o600);
      writeFileSync(join(t, 'su'), 'x');
      chmodSync(join(t, 'su'), 0o4755);
      writeFileSync(join(t, 'mail'), 'x');
      chownSync(join(t, 'mail'), 8, 8);
      linkSync(join(t, 'mail'), join(t, 'mail-link')); // one inode, two names: shifted once
      const outside = join(dir, 'outside');
      writeFileSync(outside, 'host file');
      symlinkSync(outside, join(t, 'escape'));

      shiftTree(t, range);
      shiftTree(t, range); // a repeat (or a crash part-way, then a repeat) changes nothing more
      const st = (p: string) => lstatSync(join(t, p));
      expect(st('.').uid).toBe(range.base);
      expect([st('etc/shadow').uid, st('etc/shadow').gid]).toEqual([range.base, range.base]);
      expect(st('su').mode & 0o7777).toBe(0o4755);
      expect(st('su').uid).toBe(range.base);
      expect([st('mail').uid, st('mail-link').uid]).toEqual([range.base + 8, range.base + 8]);
      expect(st('escape').uid).toBe(range.base);
      expect(lstatSync(outside).uid).toBe(0); // the link's target is not touched
    });
  });
});
