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
# Put the `tarmac` command on PATH (a link to apps/cli); harmless to repeat.
npm link -w apps/cli --no-audit --no-fund >/dev/null 2>&1 ||
  echo "install: could not link the tarmac command globally; use 'npx tarmac' from this folder" >&2
