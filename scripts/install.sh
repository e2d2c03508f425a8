#!/usr/bin/env bash
# Installs what the platform needs on a Debian/Ubuntu machine, then the npm packages, then builds.
# Idempotent. The Debian part (runc, iproute2, iptables, tini, mmdebstrap, e2fsprogs) needs root:
# run as root, or have sudo; without either it is skipped with a warning (the API still works,
# sandboxes will not start).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then
  sh scripts/engine-install.sh
elif command -v sudo >/dev/null 2>&1; then
  sudo sh scripts/engine-install.sh
else
  echo "install: not root and no sudo: skipping the sandbox engine's Debian packages" >&2
fi

npm ci --no-audit --no-fund
npm run build
# The sandboxes' base image, built now rather than by the first sandbox (~45 s; issue 14 item 9).
# Into the store the platform will use (TARMAC_HOME / TARMAC_IMAGE_DIR as set now); needs root.
# Not fatal: without it (no root, no Debian mirror reachable) the first sandbox builds it.
if [ "$(id -u)" -eq 0 ]; then
  node scripts/build-base-image.mjs || echo "install: base image not built now; the first sandbox will build it" >&2
elif command -v sudo >/dev/null 2>&1; then
  sudo --preserve-env=HOME,TARMAC_HOME,TARMAC_IMAGE_DIR,PATH node scripts/build-base-image.mjs ||
    echo "install: base image not built now; the first sandbox will build it" >&2
else
  echo "install: not root and no sudo: the first sandbox will build the base image" >&2
fi
# Put the `tarmac` command on PATH (a link to apps/cli); harmless to repeat.
npm link -w apps/cli --no-audit --no-fund >/dev/null 2>&1 ||
  echo "install: could not link the tarmac command globally; use 'npx tarmac' from this folder" >&2
