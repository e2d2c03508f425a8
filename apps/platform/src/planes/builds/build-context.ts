import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BuildFailure } from './buildah.js';
import { parseEnvFile } from './build-inputs.js';
import type { BuildLog } from './build-log.js';
import { detect } from './dockerfile-detect.js';

// What a build's folder gives the builder besides its source: the Dockerfile and the secret build args.
/** The folder's Dockerfile, or one generated for a detected runtime; FAILED says what was looked for. */
export function dockerfileFor(src: string, dir: string, log: BuildLog): string {
  if (existsSync(join(src, 'Dockerfile'))) return join(src, 'Dockerfile');
  const found = detect(src);
  if (found.runtime === 'none')
    throw new BuildFailure(`no Dockerfile and no runtime detected; looked for ${found.lookedFor}`);
  log.add(found.summary);
  for (const line of found.dockerfile.trimEnd().split('\n')) log.add(`  ${line}`);
  const file = join(dir, 'Dockerfile.generated');
  writeFileSync(file, found.dockerfile);
  return file;
}

/** `.env.build` leaves the context; each value becomes a `--secret` file (0600, outside the context). */
export function secretsOf(src: string, dir: string, log: BuildLog): Array<{ id: string; file: string }> {
  // Out of the context at once; kept beside it (0600) until the build ends, for a resume.
  const envFile = join(src, '.env.build');
  const kept = join(dir, 'env.build');
  if (existsSync(envFile)) renameSync(envFile, kept);
  if (!existsSync(kept)) return [];
  const values = parseEnvFile(readFileSync(kept, 'utf8'));
  log.mask(Object.values(values));
  const secretDir = join(dir, 'secrets');
  rmSync(secretDir, { recursive: true, force: true });
  mkdirSync(secretDir, { mode: 0o700 });
  log.add(
    `Secret build args: ${Object.keys(values).join(', ') || '(none)'} (RUN --mount=type=secret,id=KEY)`,
  );
  return Object.entries(values).map(([id, value]) => {
    const file = join(secretDir, id);
    writeFileSync(file, value, { mode: 0o600 });
    return { id, file };
  });
}
