import { describe, expect, it } from 'vitest';
import { selectFiles } from './pack.js';
import { manifestOf, parseEnvLines, readProject } from './project.js';

describe('readProject', () => {
  it('reads tarmac.toml, and blaxel.toml when that is what the folder has', () => {
    const t = readProject({ tarmac: 'type = "function"\nname = "Fn_1"\n[env]\nA = "1"\n' }, 'dir', {});
    expect(t).toMatchObject({ file: 'tarmac.toml', type: 'function', name: 'fn-1', env: { A: '1' } });
    const b = readProject({ blaxel: 'type = "job"\n[runtime]\nmemory = 512\n' }, 'my-folder', {});
    expect(b).toMatchObject({
      file: 'blaxel.toml',
      type: 'job',
      name: 'my-folder',
      runtime: { memory: 512 },
    });
  });

  it('lets flags win and refuses a type that cannot be built here', () => {
    expect(readProject({ tarmac: 'type = "agent"' }, 'd', { type: 'job', name: 'x' })).toMatchObject({
      type: 'job',
      name: 'x',
    });
    expect(() => readProject({}, 'd', { type: 'sandbox' })).toThrow(/cannot be deployed/);
  });

  it('an application: a flat spec (envs, memory, port from [runtime]), no image, no runtime block', () => {
    const p = readProject(
      { tarmac: 'type = "application"\n[runtime]\nport = 3000\nmemory = 1024\n' },
      'web',
      {},
    );
    expect(p.type).toBe('application');
    const m = manifestOf(p, { A: '1' }, {});
    expect(m.spec).toEqual({ envs: [{ name: 'A', value: '1' }], memory: 1024, port: 3000 });
  });

  it('builds the manifest with env and secret env', () => {
    const p = readProject({ tarmac: 'public = true\npolicies = ["p1"]' }, 'app', {});
    const m = manifestOf(p, { A: '1' }, { S: '2' });
    expect(m.spec).toMatchObject({
      public: true,
      policies: ['p1'],
      runtime: {
        envs: [
          { name: 'A', value: '1' },
          { name: 'S', value: '2', secret: true },
        ],
      },
    });
  });

  it('parses env files', () => {
    expect(parseEnvLines('# c\nA=1\nexport B="two"\n\nC=\n')).toEqual({ A: '1', B: 'two', C: '' });
  });
});

describe('selectFiles', () => {
  it('drops the default excludes and what the ignore file lists', () => {
    const entries = [
      'index.js',
      'node_modules/x/a.js',
      '.git/HEAD',
      '.env',
      'debug.log',
      'src/a.ts',
      '.env.build',
    ];
    const kept = selectFiles(
      entries.map((path) => ({ path, mode: 0o644 })),
      '*.log\n',
    ).map((e) => e.path);
    expect(kept).toEqual(['.env.build', 'index.js', 'src/a.ts']);
  });
});
