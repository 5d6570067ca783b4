#!/usr/bin/env bash
# Build the controlplane image (controlplane:local) from this checkout.
#
# Usage: docker/build-image.sh [--offline] [--pypi] [--tag TAG]
#   (default)   BASE=python:3.11-slim (needs a registry); dependencies from the wheelhouse
#               that this script fills on the host (falls back to PyPI inside the build if empty)
#   --offline   no registry: build the base with docker/build-base.sh (controlplane-base:local)
#               and install only from the wheelhouse (PIP_SOURCE=offline)
#   --pypi      skip the wheelhouse; pip inside the build uses PyPI
#   --tag TAG   image tag (default controlplane:local)
# Env:  BASE overrides the base image; PYTHON_VERSION (3.11) and ARCH (uname -m) pick the wheels.
# After a build it records CP_IMAGE, CP_BASE_IMAGE and CP_PIP_SOURCE in the checkout's .env
# (other lines kept; git-ignored): compose reads them, so `docker-compose up demo` (or
# `docker compose up demo`) runs this image and `docker-compose build` rebuilds it the same way.
# Exit: 0 with the image built; non-zero with a one-line reason otherwise.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
TAG="controlplane:local"
OFFLINE=0
PYPI=0
while [ $# -gt 0 ]; do
  case "$1" in
    --offline) OFFLINE=1 ;;
    --pypi) PYPI=1 ;;
    --tag) [ $# -ge 2 ] || { echo "build-image.sh: --tag needs a value" >&2; exit 2; }; TAG="$2"; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "build-image.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
  shift
done
die() { echo "build-image.sh: $*" >&2; exit 1; }
[ "$OFFLINE" = 1 ] && [ "$PYPI" = 1 ] && die "--offline and --pypi exclude each other"
docker info >/dev/null 2>&1 || die "docker daemon unreachable: start dockerd first"

PIP_SOURCE=auto
WHEELHOUSE="$HERE/wheelhouse"
if [ "$PYPI" = 1 ]; then
  PIP_SOURCE=pypi
else
  # Wheels for the image's Python and platform, whatever the host runs. pip on the host
  # reaches the package index (or its local mirror) even when the build container cannot.
  PYTHON_VERSION="${PYTHON_VERSION:-3.11}"
  ARCH="${ARCH:-$(uname -m)}"
  PY="${PYTHON:-python3}"
  mapfile -t DEPS < <("$PY" -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' "$ROOT/pyproject.toml") \
    || die "cannot read dependencies from pyproject.toml (needs python >= 3.11 on the host)"
  mkdir -p "$WHEELHOUSE"
  echo "build-image.sh: filling $WHEELHOUSE (python $PYTHON_VERSION, $ARCH)"
  platforms=()
  for p in manylinux2014 manylinux_2_17 manylinux_2_28 manylinux1 manylinux_2_5; do platforms+=(--platform "${p}_${ARCH}"); done
  "$PY" -m pip download --quiet --only-binary=:all: --dest "$WHEELHOUSE" \
      --python-version "$PYTHON_VERSION" --implementation cp \
      --abi "cp${PYTHON_VERSION/./}" --abi abi3 --abi none "${platforms[@]}" --platform any \
      "${DEPS[@]}" "setuptools>=68" wheel 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2) \
    || die "pip download into $WHEELHOUSE failed (use --pypi to let the build reach PyPI itself)"
  [ "$OFFLINE" = 1 ] && PIP_SOURCE=offline
fi

if [ "$OFFLINE" = 1 ]; then
  "$HERE/build-base.sh"
  BASE="${BASE:-controlplane-base:local}"
fi
BASE="${BASE:-python:3.11-slim}"

# A docker CLI >= 23 without the buildx plugin (BuildKit) falls back to the classic builder,
# which builds this Dockerfile the same, after a multi-line "DEPRECATED: The legacy builder ..."
# notice on stderr. That notice is about the CLI's packaging, not this build: it is left out.
drop_legacy_builder_notice() {
  awk '/^DEPRECATED: The legacy builder is deprecated/ { skip = 1; next }
       skip && /^ +/ { next }
       skip && /^$/ { skip = 0; next }
       { skip = 0; print; fflush() }' >&2
}

echo "build-image.sh: docker build -t $TAG (BASE=$BASE, PIP_SOURCE=$PIP_SOURCE)"
docker build --tag "$TAG" --build-arg "BASE=$BASE" --build-arg "PIP_SOURCE=$PIP_SOURCE" "$ROOT" \
  2> >(drop_legacy_builder_notice) \
  || die "docker build failed"
docker run --rm --network none "$TAG" controlplane --version

# Record the build for compose (the checkout's .env; any other lines in it are kept).
ENV_FILE="$ROOT/.env"
touch "$ENV_FILE"
grep -v -E '^(CP_IMAGE|CP_BASE_IMAGE|CP_PIP_SOURCE)=|^# written by docker/build-image.sh' "$ENV_FILE" >"$ENV_FILE.tmp" || true
{
  echo "# written by docker/build-image.sh: the image compose runs, and how to rebuild it"
  echo "CP_IMAGE=$TAG"
  echo "CP_BASE_IMAGE=$BASE"
  echo "CP_PIP_SOURCE=$PIP_SOURCE"
} >>"$ENV_FILE.tmp"
mv "$ENV_FILE.tmp" "$ENV_FILE"
echo "build-image.sh: $TAG built; compose will run it (CP_IMAGE=$TAG in $ENV_FILE)"
