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
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
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

echo "build-image.sh: docker build -t $TAG (BASE=$BASE, PIP_SOURCE=$PIP_SOURCE)"
docker build --tag "$TAG" --build-arg "BASE=$BASE" --build-arg "PIP_SOURCE=$PIP_SOURCE" "$ROOT" \
  || die "docker build failed"
docker run --rm --network none "$TAG" controlplane --version
