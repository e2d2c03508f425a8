import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { detect } from './dockerfile-detect.js';

let dir: string;
const folder = (files: Record<string, string>) => {
  dir = mkdtempSync(join(tmpdir(), 'i15-detect-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
};
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// Issue 15 "Without a Dockerfile": Node and Python are detected; dependency manifests are copied
// before the source (the cached dependency layer); anything else says what was looked for.
describe('detect', () => {
  it('runs a plain `node file` start script without npm', () => {
    const d = detect(folder({ 'package.json': JSON.stringify({ scripts: { start: 'node index.js' } }) }));
    expect(d.runtime).toBe('node');
    if (d.runtime === 'none') return;
    expect(d.dockerfile).toContain('CMD ["node","index.js"]');
    expect(d.dockerfile).not.toContain('npm');
    // Nothing to install: no manifest-only COPY step (a cache check per build, for no layer).
    expect(d.dockerfile.split('\n').filter((l) => l.startsWith('COPY'))).toEqual(['COPY . .']);
  });

  it('installs dependencies in a layer before the source', () => {
    const d = detect(
      folder({
        'package.json': JSON.stringify({ main: 'a.js', dependencies: { x: '1' } }),
        'package-lock.json': '{}',
      }),
    );
    if (d.runtime === 'none') throw new Error('not detected');
    const lines = d.dockerfile.split('\n');
    const install = lines.findIndex((l) => l.includes('npm ci'));
    expect(install).toBeGreaterThan(lines.indexOf('COPY package.json package-lock.json ./'));
    expect(install).toBeLessThan(lines.indexOf('COPY . .'));
  });

  it('detects Python with requirements and main.py', () => {
    const d = detect(folder({ 'requirements.txt': 'flask==3.0.0\n', 'main.py': 'print(1)' }));
    if (d.runtime === 'none') throw new Error('not detected');
    expect(d.dockerfile).toContain('pip install --no-cache-dir -r requirements.txt');
    expect(d.dockerfile).toContain('CMD ["python3","main.py"]');
  });

  it('detects a pyproject script entrypoint', () => {
    const d = detect(
      folder({ 'pyproject.toml': '[project]\nname="x"\n[project.scripts]\nserve = "x:main"\n' }),
    );
    if (d.runtime === 'none') throw new Error('not detected');
    expect(d.dockerfile).toContain('CMD ["serve"]');
  });

  it('says what it looked for when nothing matches', () => {
    const d = detect(folder({ 'README.md': 'hi', 'package.json': '{"name":"no-start"}' }));
    expect(d.runtime).toBe('none');
    if (d.runtime !== 'none') return;
    expect(d.lookedFor).toMatch(/Dockerfile.*package\.json.*requirements\.txt/);
  });
});
