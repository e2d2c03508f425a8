import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A Dockerfile for a folder that has none (issue 15 "Without a Dockerfile"). The generated images
 * are FROM the platform's base image `tarmac/base:latest` (Debian 12 "bookworm"), which already
 * carries Debian's `nodejs` (18.x, package 18.20.4+dfsg-1~deb12u3 at the time of writing) and
 * `python3` (3.11); the package managers a project needs (`npm`, `python3-pip`/`python3-venv`)
 * are installed from Debian's bookworm archive during the build, only when there are dependencies
 * to install. Dependency manifests are copied and installed before the rest of the source, so a
 * rebuild with unchanged dependencies reuses that layer (buildah --layers).
 */
export type Detection =
  | { runtime: 'node' | 'python'; dockerfile: string; summary: string }
  | { runtime: 'none'; lookedFor: string };

export const LOOKED_FOR =
  'a Dockerfile; or package.json with a "start" script or "main" (Node); or requirements.txt / ' +
  'pyproject.toml with main.py, app.py or server.py or a [project.scripts] entry (Python)';

const APT = 'apt-get update && apt-get install -y --no-install-recommends';

export function detect(dir: string): Detection {
  return detectNode(dir) ?? detectPython(dir) ?? { runtime: 'none', lookedFor: LOOKED_FOR };
}

interface PackageJson {
  main?: unknown;
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
}

function detectNode(dir: string): Detection | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
  const start = typeof pkg.scripts?.start === 'string' ? pkg.scripts.start : undefined;
  const main = typeof pkg.main === 'string' ? pkg.main : undefined;
  if (!start && !main) return undefined;
  const hasDeps = Object.keys(pkg.dependencies ?? {}).length > 0;
  const lock = existsSync(join(dir, 'package-lock.json'));
  const install = lock ? 'npm ci --omit=dev' : 'npm install --omit=dev';
  // `npm start` needs npm; a plain `node file` start script or `main` runs on node alone.
  const plain = start === undefined ? main : /^node\s+([\w./-]+)$/.exec(start.trim())?.[1];
  const needsNpm = hasDeps || plain === undefined;
  const cmd = plain !== undefined ? JSON.stringify(['node', plain]) : '["npm", "start"]';
  const lines = [
    'FROM tarmac/base:latest',
    'WORKDIR /app',
    'ENV NODE_ENV=production',
    ...(needsNpm ? [`RUN ${APT} npm && rm -rf /var/lib/apt/lists/*`] : []),
    // The manifests alone first only for the install layer's cache key; with nothing to install,
    // that step would cost every build a cache check (~0.1 s of buildah's time) for no layer.
    ...(hasDeps
      ? [
          `COPY package.json ${lock ? 'package-lock.json ' : ''}./`,
          `RUN NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt ${install}`,
        ]
      : []),
    'COPY . .',
    `CMD ${cmd}`,
    '',
  ];
  return {
    runtime: 'node',
    dockerfile: lines.join('\n'),
    summary: `Detected Node (package.json ${start ? '"start" script' : `"main" ${main}`}); Debian nodejs 18 from tarmac/base`,
  };
}

function detectPython(dir: string): Detection | undefined {
  const reqs = existsSync(join(dir, 'requirements.txt'));
  const pyproject = existsSync(join(dir, 'pyproject.toml'));
  if (!reqs && !pyproject) return undefined;
  const entry = ['main.py', 'app.py', 'server.py'].find((f) => existsSync(join(dir, f)));
  const script = pyproject ? firstScript(readFileSync(join(dir, 'pyproject.toml'), 'utf8')) : undefined;
  if (!entry && !script) return undefined;
  const reqText = reqs ? readFileSync(join(dir, 'requirements.txt'), 'utf8') : '';
  const hasReqs = reqText.split('\n').some((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  const needsPip = hasReqs || script !== undefined;
  const pip = 'PIP_CERT=/etc/ssl/certs/ca-certificates.crt /opt/venv/bin/pip install --no-cache-dir';
  const lines = [
    'FROM tarmac/base:latest',
    'WORKDIR /app',
    'ENV PYTHONUNBUFFERED=1',
    ...(needsPip
      ? [
          `RUN ${APT} python3-pip python3-venv && rm -rf /var/lib/apt/lists/* && python3 -m venv /opt/venv`,
          'ENV PATH=/opt/venv/bin:$PATH',
        ]
      : []),
    ...(hasReqs ? ['COPY requirements.txt ./', `RUN ${pip} -r requirements.txt`] : []),
    'COPY . .',
    ...(script && !entry ? [`RUN ${pip} .`] : []),
    `CMD ${JSON.stringify(entry ? ['python3', entry] : [script])}`,
    '',
  ];
  return {
    runtime: 'python',
    dockerfile: lines.join('\n'),
    summary: `Detected Python (${entry ?? `[project.scripts] ${script}`}); Debian python3 3.11 from tarmac/base`,
  };
}

/** The first name under `[project.scripts]` (a line scan: only that table's keys are needed). */
function firstScript(toml: string): string | undefined {
  let inScripts = false;
  for (const raw of toml.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) inScripts = line === '[project.scripts]';
    else if (inScripts) {
      const m = /^([A-Za-z0-9_.-]+)\s*=/.exec(line);
      if (m) return m[1];
    }
  }
  return undefined;
}
