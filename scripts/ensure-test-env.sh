#!/usr/bin/env bash
# Runs before `npm test` and `npm run soak` (their pre-scripts): finds or installs what the suites need on a
# fresh machine, so that the README's test command works as it stands.
#   - PostgreSQL on 127.0.0.1:5432 with trust auth and a database `test` (the PostgreSQL pass and the replica
#     suites), started if installed and down, installed from Debian's packages if missing;
#   - bubblewrap (the command sandbox suites);
#   - Debian's Chromium at /usr/bin/chromium (the admin console suite; playwright-core never downloads one).
# As root it installs with apt-get; otherwise it stops at once with the exact command to run.
# OAM_SKIP_ENV_CHECK=1 skips it (for a machine set up some other way).
set -euo pipefail
[ "${OAM_SKIP_ENV_CHECK:-}" = 1 ] && exit 0

say() { printf 'test environment: %s\n' "$*" >&2; }

packages=()
command -v bwrap >/dev/null 2>&1 || packages+=(bubblewrap)
[ -x /usr/bin/chromium ] || packages+=(chromium)
command -v pg_ctlcluster >/dev/null 2>&1 || packages+=(postgresql)

if [ ${#packages[@]} -gt 0 ]; then
  install="apt-get update && apt-get install -y ${packages[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    say "missing ${packages[*]}; run as root: sudo sh -c '$install', then npm test again"
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    say "missing ${packages[*]} and there is no apt-get here; install them with this system's package manager"
    exit 1
  fi
  say "installing ${packages[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi

postgres_ready() { pg_isready -h 127.0.0.1 -p 5432 >/dev/null 2>&1; }

if ! postgres_ready; then
  version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
  start="pg_ctlcluster --skip-systemctl-redirect $version main start"
  if [ -z "$version" ]; then
    say "PostgreSQL is installed but has no cluster; run as root: pg_createcluster --start 15 main"
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    say "PostgreSQL is not running on 127.0.0.1:5432; run as root: $start"
    exit 1
  fi
  say "starting PostgreSQL $version"
  $start >/dev/null 2>&1 || true
  for _ in $(seq 1 30); do postgres_ready && break; sleep 1; done
  postgres_ready || { say "PostgreSQL did not start; see /var/log/postgresql/"; exit 1; }
fi

# The suites connect as postgres without a password to the database `test` (trust auth on loopback).
if ! psql -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1; then
    hba=$(runuser -u postgres -- psql -Atc 'SHOW hba_file' 2>/dev/null || true)
    if [ -n "$hba" ] && ! grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
      say "allowing trust auth on 127.0.0.1 for the test cluster ($hba)"
      sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
      runuser -u postgres -- psql -Atc 'SELECT pg_reload_conf()' >/dev/null
    fi
    runuser -u postgres -- createdb test 2>/dev/null || true
  fi
  psql -h 127.0.0.1 -U postgres -d test -Atc 'SELECT 1' >/dev/null 2>&1 || {
    say "cannot connect to postgres://postgres@127.0.0.1:5432/test (trust auth, database test); create it:"
    say "  sudo -u postgres createdb test, and a pg_hba.conf line: host all all 127.0.0.1/32 trust"
    exit 1
  }
fi
