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

describe('SandboxFiles.writeAsync', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the record whole, leaves no temp file, and concurrent writes do not collide', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sandbox-files-'));
    const files = new SandboxFiles(dir);
    mkdirSync(files.path('sb-1'));
    files.write(record({ pool: 'x' }));
    await Promise.all([files.writeAsync(record({ n: '1' })), files.writeAsync(record({ n: '2' }))]);
    expect(['1', '2']).toContain(files.read('sb-1').labels.n);
    await files.writeAsync(record({ workspace: 'w', sandbox: 's' }));
    expect(files.read('sb-1').labels).toEqual({ workspace: 'w', sandbox: 's' });
    expect(readdirSync(files.path('sb-1'))).toEqual(['sandbox.json']);
  });
});
