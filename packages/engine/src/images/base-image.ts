// The default base image, built from Debian packages with mmdebstrap (no registry needed).
import type { CommandRunner } from '../runner.js';

export interface BaseImageOptions {
  suite?: string;
  /** apt source lines; default: deb.debian.org main, updates and security for the suite. */
  mirrors?: string[];
  packages?: string[];
}

export const BASE_PACKAGES = [
  'bash',
  'coreutils',
  'ca-certificates',
  'curl',
  'git',
  'python3',
  'nodejs',
  'procps',
];

export async function buildBaseImage(
  target: string,
  runner: CommandRunner,
  opts: BaseImageOptions = {},
): Promise<void> {
  const suite = opts.suite ?? 'bookworm';
  const mirrors = opts.mirrors ?? [
    `deb http://deb.debian.org/debian ${suite} main`,
    `deb http://deb.debian.org/debian ${suite}-updates main`,
    `deb http://deb.debian.org/debian-security ${suite}-security main`,
  ];
  const packages = opts.packages ?? BASE_PACKAGES;
  await runner.run(
    'mmdebstrap',
    [
      '--quiet',
      '--mode=root',
      '--variant=minbase',
      '--format=directory',
      `--include=${packages.join(',')}`,
      // No docs or man pages: smaller image, and nothing in a sandbox reads them.
      '--dpkgopt=path-exclude=/usr/share/man/*',
      '--dpkgopt=path-exclude=/usr/share/doc/*',
      suite,
      target,
      ...mirrors,
    ],
    { timeoutMs: 30 * 60_000 },
  );
}
