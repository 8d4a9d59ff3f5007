#!/usr/bin/env bash
# Builds the base images that the Dockerfile and docker-compose.yml need from Debian's packages
# alone, for machines that reach Debian's archive and PyPI but no container registry (air-gapped
# sites, build machines). Sites with a registry do not need this: the defaults are the public images
# python:3.11-slim-bookworm, redis:7 and postgres:15.
#
#   1. debootstrap makes a minimal Debian root file system, imported as  $PREFIX/debian:$SUITE
#   2. from it, with apt (deploy/base-images/*.Dockerfile):
#        $PREFIX/python:3.11-$SUITE   python3.11 + venv      (QSG_BASE_IMAGE: the Dockerfile's base)
#        $PREFIX/redis:7-$SUITE       Debian's redis-server  (REDIS_IMAGE)
#        $PREFIX/postgres:15-$SUITE   Debian's postgresql-15 (POSTGRES_IMAGE)
#   3. prints the variables that make docker-compose use them; with --env-file FILE it also writes
#      them there (compose reads a file named .env beside docker-compose.yml by itself).
#
# Usage (as root, with debootstrap installed and a Docker engine running):
#   deploy/build-base-images.sh [--env-file .env]
#   docker compose build && docker compose up -d        (or docker-compose with a hyphen)
# Settings (environment): SUITE (bookworm), DEBIAN_MIRROR (http://deb.debian.org/debian),
# DEBIAN_SECURITY_MIRROR (http://deb.debian.org/debian-security), IMAGE_PREFIX (qsg-local).
# A site behind an intercepting proxy passes its CA certificates to the project's own build with
# QSG_EXTRA_CA_CERTS (see the Dockerfile); apt fetches over http and needs none.
set -euo pipefail

SUITE=${SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PREFIX=${IMAGE_PREFIX:-qsg-local}
HERE=$(cd "$(dirname "$0")" && pwd)
ENV_FILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --env-file) ENV_FILE=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

[ "$(id -u)" = 0 ] || { echo "debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "no Docker engine answers (start dockerd)" >&2; exit 1; }

DEBIAN_IMAGE=$PREFIX/debian:$SUITE
if docker image inspect "$DEBIAN_IMAGE" >/dev/null 2>&1 && [ -z "${REBUILD:-}" ]; then
  echo "== $DEBIAN_IMAGE exists (REBUILD=1 to make it again)"
else
  root=$(mktemp -d /var/tmp/qsg-rootfs.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "== debootstrap $SUITE from $MIRROR"
  debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$root" "$MIRROR"
  cat > "$root/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
SOURCES
  # As in Debian's own container images: services are not started by package installs inside a
  # container build, and apt keeps no downloaded packages.
  printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };\n' > "$root/etc/apt/apt.conf.d/docker-clean"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb
  echo "== import $DEBIAN_IMAGE"
  tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' --change 'CMD ["bash"]' - "$DEBIAN_IMAGE"
  rm -rf "$root"
  trap - EXIT
fi

build() {  # build <name> <tag>
  echo "== build $2"
  DOCKER_BUILDKIT=0 docker build -q --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" -t "$2" \
    -f "$HERE/base-images/$1.Dockerfile" "$HERE/base-images"
}
build python "$PREFIX/python:3.11-$SUITE"
build redis "$PREFIX/redis:7-$SUITE"
build postgres "$PREFIX/postgres:15-$SUITE"

vars="QSG_BASE_IMAGE=$PREFIX/python:3.11-$SUITE
REDIS_IMAGE=$PREFIX/redis:7-$SUITE
POSTGRES_IMAGE=$PREFIX/postgres:15-$SUITE"
if [ -n "$ENV_FILE" ]; then
  printf '%s\n' "$vars" > "$ENV_FILE"
  echo "== written to $ENV_FILE"
fi
echo "== done; for docker compose:"
printf 'export %s\n' $vars
