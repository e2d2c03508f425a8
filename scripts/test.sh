#!/usr/bin/env bash
# Installs everything the whole test suite needs (Debian packages, a running PostgreSQL, npm
# packages), then runs format check, lint, typecheck and every test (unit and end-to-end).
# Needs root (or sudo) for apt-get, runc sandboxes and network namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian packages the tests use beyond the engine's: PostgreSQL (store tests run on both
# dialects), tmux (the CLI's interactive terminal test), curl and openssl (egress tests: a client
# in a namespace, certificates of the fake outside), sqlite3 (platform-faults: a record deleted
# behind the platform's back); wireguard-* come with scripts/engine-install.sh.
TEST_PACKAGES="postgresql tmux curl openssl sqlite3"
missing=""
for p in $TEST_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi

# The base image goes into the tests' shared image cache (tests/e2e/support), not ~/.tarmac.
TARMAC_IMAGE_DIR="${TARMAC_TEST_IMAGE_DIR:-/var/cache/tarmac-test/images}" bash scripts/install.sh
TARMAC_TEST_DATABASE_URL="$(as_root sh scripts/test-postgres.sh)"
export TARMAC_TEST_DATABASE_URL
npm run check
