// Builds the sandboxes' base image (tarmac/base:latest, from Debian packages with mmdebstrap)
// into the image store the platform will use, so the first `tarmac sandbox create` does not wait
// ~45 s for it (issue 14 item 9). scripts/install.sh runs it after the build; it is a no-op when
// the image is there. The store is the platform's own: TARMAC_IMAGE_DIR, else
// $TARMAC_HOME/images (~/.tarmac/images), resolved by the platform's config. Needs root.
import { homedir } from 'node:os';
import { clearInterval, setInterval } from 'node:timers';
import { BASE_IMAGE, LocalEngine } from '@tarmac/engine';
import { resolveConfig } from '../apps/platform/dist/config.js';

const config = resolveConfig({ flags: {}, env: process.env, homedir: homedir() });
const engine = new LocalEngine({
  home: config.home,
  ...(config.engine.imageDir ? { imageDir: config.engine.imageDir } : {}),
  // Not used to build an image; the engine wants them to run sandboxes.
  runtime: { nodeBinary: process.execPath, tiniBinary: config.engine.tiniBinary, sandboxdBundle: '' },
});
if (engine.hasImage(BASE_IMAGE)) {
  process.stdout.write(`install: base image ${BASE_IMAGE} already built\n`);
} else {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  process.stdout.write(
    `install: building the base image ${BASE_IMAGE} (Debian packages; about a minute, once)\n`,
  );
  const ticker = setInterval(
    () => process.stdout.write(`install: still building the base image (${seconds()} s)\n`),
    10_000,
  );
  try {
    await engine.ensureImage(BASE_IMAGE);
  } finally {
    clearInterval(ticker);
  }
  process.stdout.write(`install: base image ${BASE_IMAGE} built in ${seconds()} s\n`);
}
