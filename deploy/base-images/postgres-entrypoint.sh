#!/bin/sh
# First start (PGDATA empty): a cluster whose superuser is POSTGRES_USER with POSTGRES_PASSWORD,
# password logins from the network, and the database POSTGRES_DB; then (and on every later
# start) the server in the foreground. What the public postgres image does, as far as
# docker-compose.yml uses it.
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
if [ "${1:-postgres}" != postgres ]; then
  exec "$@"
fi
[ $# -gt 0 ] && shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "postgres-entrypoint: POSTGRES_PASSWORD is not set" >&2
    exit 1
  fi
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
  if [ "$db" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
    psql -v ON_ERROR_STOP=1 -U "$user" -d postgres -c "CREATE DATABASE \"$db\""
    pg_ctl -D "$PGDATA" -m fast -w stop
  fi
fi
exec postgres -D "$PGDATA" "$@"
