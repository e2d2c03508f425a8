import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxFiles, type SandboxRecord } from './sandbox-files.js';

const record = (labels: Record<string, string>): SandboxRecord => ({
  id: 'sb-1',
  image: 'img',
  layerDirs: [],
  ip: '10.0.0.2',
  createdAt: '2026-11-29T00:00:00.000Z',
  memoryMB: 512,
  pidsLimit: 256,
  ports: [],
  volumes: [],
  labels,
  cgroup: '/tarmac/sb-1',
});

describe('SandboxFiles.write', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the record whole (the claim relabels a pooled sandbox) and leaves no temp file', () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-files-'));
    const files = new SandboxFiles(dir);
    mkdirSync(files.path('sb-1'));
    files.write(record({ pool: 'x', record: 'r' }));
    files.write(record({ workspace: 'w', sandbox: 's', record: 'r' }));
    expect(files.read('sb-1').labels).toEqual({ workspace: 'w', sandbox: 's', record: 'r' });
    expect(readdirSync(files.path('sb-1'))).toEqual(['sandbox.json']);
  });
});
