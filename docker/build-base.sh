#!/usr/bin/env bash
# Build the local base image `controlplane-base:local` without an image registry.
#
# On a machine that can pull images, skip this: the Dockerfile's default base is
# python:3.11-slim. Here (no registry) we debootstrap a minimal Debian rootfs with
# python3 + python3-venv from the Debian mirror this machine's apt already uses
# (its sources list, read with `apt-get indextargets`) and `docker import` it.
#
# Usage: docker/build-base.sh [--force]
# Env:   BASE_TAG (controlplane-base:local), SUITE (bookworm), MIRROR (default: the
#        apt source of SUITE, else of any non-security Debian suite); works in a fresh
#        mktemp -d under $TMPDIR
# Needs: root, debootstrap, a running docker daemon.
# Exit:  0 when the image exists afterwards; non-zero with a one-line error.
set -euo pipefail

BASE_TAG="${BASE_TAG:-controlplane-base:local}"
SUITE="${SUITE:-bookworm}"
MIRROR="${MIRROR:-}"
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "build-base.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

die() { echo "build-base.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap needs it)"
command -v debootstrap >/dev/null || die "debootstrap not found: apt-get install -y debootstrap"
docker info >/dev/null 2>&1 || die "docker daemon unreachable: start dockerd first"

if [ "$FORCE" = 0 ] && docker image inspect "$BASE_TAG" >/dev/null 2>&1; then
  echo "build-base.sh: $BASE_TAG already present (use --force to rebuild)"
  exit 0
fi

# The mirror apt is configured with: the repository that serves SUITE itself, else the one
# serving another suite of the Debian archive (Origin: Debian, not the security archive).
# `apt-get indextargets` reads /etc/apt/sources.list and sources.list.d/ (one-line and
# deb822 formats) as apt does; Origin and Label come from the Release files of the last
# `apt-get update`.
apt_mirror() {
  command -v apt-get >/dev/null || return 0
  apt-get indextargets --format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(ORIGIN) $(LABEL)' 'Created-By: Packages' 2>/dev/null \
    | awk -v suite="$SUITE" '
        $1 != "deb" { next }
        $3 == suite { exact = exact ? exact : $2 }
        $4 == "Debian" && $5 == "Debian" { other = other ? other : $2 }
        END { print (exact ? exact : other) }'
}
if [ -z "$MIRROR" ]; then
  MIRROR="$(apt_mirror)"
  [ -n "$MIRROR" ] || die "no Debian mirror in this machine's apt sources (/etc/apt/sources.list*): set MIRROR=URL"
fi
MIRROR="${MIRROR%/}"

WORKDIR="$(mktemp -d "${TMPDIR:-/tmp}/controlplane-base.XXXXXX")"
ROOTFS="$WORKDIR/rootfs"
trap 'rm -rf "$WORKDIR"' EXIT

echo "build-base.sh: debootstrap $SUITE from $MIRROR into $ROOTFS"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
  "$SUITE" "$ROOTFS" "$MIRROR" >"$WORKDIR/debootstrap.log" 2>&1 \
  || { tail -20 "$WORKDIR/debootstrap.log" >&2; die "debootstrap failed (log above)"; }

# Slim the rootfs: package caches, indexes, docs and locales are not needed at run time.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
       "$ROOTFS"/usr/share/doc/* "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* \
       "$ROOTFS"/usr/share/locale/* "$ROOTFS"/var/log/*.log "$ROOTFS"/debootstrap
# Point apt at the same mirror for anyone extending the image.
echo "deb $MIRROR $SUITE main" >"$ROOTFS/etc/apt/sources.list"

echo "build-base.sh: importing as $BASE_TAG"
tar -C "$ROOTFS" --numeric-owner -c . | docker import \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' \
  --message "debootstrap $SUITE minbase + python3, python3-venv" \
  - "$BASE_TAG" >/dev/null
docker run --rm "$BASE_TAG" python3 -c 'import sys, venv, ensurepip; print("build-base.sh: ok, python", sys.version.split()[0])'
