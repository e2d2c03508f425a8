import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { extractSource, SourceArchiveError } from './source-archive.js';
import { tarGzOf, zipOf, type Member } from './test-archives.js';

// Issue 15: a zip with `..`, absolute names or escaping symlinks is refused and nothing is written
// outside the build folder. Each case performs the attack against a fresh folder whose parent is
// watched for the file the attack would plant.
const LIMITS = { maxBytes: 1 << 20, maxEntries: 100 };
let work: string;

afterEach(() => rmSync(work, { recursive: true, force: true }));

async function extract(kind: 'zip' | 'tgz', members: Member[], limits = LIMITS) {
  work = mkdtempSync(join(tmpdir(), 'i15-src-'));
  const file = join(work, 'upload');
  writeFileSync(file, kind === 'zip' ? zipOf(members) : tarGzOf(members));
  const root = join(work, 'build', 'src');
  await extractSource(file, root, limits);
  return root;
}

describe.each(['zip', 'tgz'] as const)('extractSource (%s)', (kind) => {
  it('extracts files, folders and inside symlinks', async () => {
    const root = await extract(kind, [
      { name: 'app/', dir: true },
      { name: 'app/index.js', data: 'console.log(1)' },
      { name: 'package.json', data: '{}' },
      { name: 'app/link.js', link: 'index.js' },
    ]);
    expect(readFileSync(join(root, 'app/index.js'), 'utf8')).toBe('console.log(1)');
    expect(readlinkSync(join(root, 'app/link.js'))).toBe('index.js');
  });

  const attacks: Array<[string, Member[]]> = [
    ['a ../ member', [{ name: '../../evil.txt', data: 'pwned' }]],
    ['an absolute member', [{ name: `/tmp/i15-evil-${process.pid}.txt`, data: 'pwned' }]],
    ['a symlink to an absolute path', [{ name: 'out', link: '/tmp' }]],
    ['a symlink climbing out', [{ name: 'a/out', link: '../../..' }]],
    [
      'a link through a link',
      [
        { name: 'd/up', link: '..' },
        { name: 'x', link: 'd/up/..' },
      ],
    ],
    [
      'a link inside a linked folder',
      [
        { name: 'd', link: '.' },
        { name: 'd/e', link: '..' },
      ],
    ],
    [
      'a file written through a symlink member',
      [
        { name: 'esc', link: '..' },
        { name: 'esc/evil.txt', data: 'pwned' },
      ],
    ],
  ];
  it.each(attacks)('refuses %s and writes nothing outside', async (_what, members) => {
    await expect(extract(kind, members)).rejects.toBeInstanceOf(SourceArchiveError);
    expect(existsSync(join(work, 'evil.txt'))).toBe(false);
    expect(existsSync(join(work, 'build', 'evil.txt'))).toBe(false);
    expect(existsSync(`/tmp/i15-evil-${process.pid}.txt`)).toBe(false);
  });

  it('refuses an archive over the byte limit', async () => {
    await expect(
      extract(kind, [{ name: 'big', data: 'x'.repeat(2000) }], { maxBytes: 1000, maxEntries: 10 }),
    ).rejects.toThrow(/more than 1000 bytes/);
  });

  it('refuses an archive over the member limit', async () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, data: 'x' }));
    await expect(extract(kind, many, { maxBytes: 1000, maxEntries: 3 })).rejects.toThrow(
      /more than 3 members/,
    );
  });

  it('refuses a duplicate member instead of overwriting', async () => {
    await expect(
      extract(kind, [
        { name: 'a', data: '1' },
        { name: 'a', data: '2' },
      ]),
    ).rejects.toBeInstanceOf(SourceArchiveError);
  });
});

it('refuses what is neither zip nor tar.gz', async () => {
  work = mkdtempSync(join(tmpdir(), 'i15-src-'));
  writeFileSync(join(work, 'upload'), 'plain text');
  await expect(extractSource(join(work, 'upload'), join(work, 'src'), LIMITS)).rejects.toThrow(/neither/);
});
