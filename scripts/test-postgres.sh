#!/bin/sh
# Starts the machine's PostgreSQL cluster (installing it with apt-get when missing) and creates the
# role and database the tests use. Prints the URL to export as TARMAC_TEST_DATABASE_URL.
# Idempotent; needs root (Debian/Ubuntu).
set -eu
export DEBIAN_FRONTEND=noninteractive
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2
fi
cluster=$(pg_lsclusters --no-header | awk 'NR==1 {print $1" "$2}')
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -n | tail -1)
  pg_createcluster "$version" main >&2
  cluster="$version main"
fi
# shellcheck disable=SC2086
pg_ctlcluster $cluster start >&2 2>/dev/null || true
port=$(pg_lsclusters --no-header | awk 'NR==1 {print $3}')
for _ in $(seq 1 50); do
  su postgres -c "psql -p $port -qtAc 'select 1'" >/dev/null 2>&1 && break
  sleep 0.2
done
su postgres -c "psql -p $port -qtAc \"select 1 from pg_roles where rolname='tarmac'\"" | grep -q 1 ||
  su postgres -c "psql -p $port -qc \"create role tarmac login superuser password 'tarmac'\"" >&2
su postgres -c "psql -p $port -qtAc \"select 1 from pg_database where datname='tarmac_test'\"" | grep -q 1 ||
  su postgres -c "createdb -p $port -O tarmac tarmac_test" >&2
echo "postgres://tarmac:tarmac@127.0.0.1:$port/tarmac_test"
