#!/bin/sh
# Install controlplane into the image's venv ($VIRTUAL_ENV), in two layers so that
# a code change does not reinstall the dependencies.
#
# Usage (inside the Docker build, from /src):
#   sh docker/pip-install.sh deps      runtime dependencies from pyproject.toml (+ setuptools, wheel)
#   sh docker/pip-install.sh project   the project itself (--no-deps, no build isolation)
# Env:  PIP_SOURCE = auto (default: docker/wheelhouse when it holds wheels, else PyPI)
#                  | offline (wheelhouse only; fail if it is empty)
#                  | pypi (ignore the wheelhouse)
# Exit: non-zero with a one-line reason when pip fails or the wheelhouse is required but empty.
set -eu

MODE="${1:-}"
WHEELHOUSE=/src/docker/wheelhouse
SOURCE="${PIP_SOURCE:-auto}"
die() { echo "pip-install.sh: $*" >&2; exit 1; }

have_wheels=no
if ls "$WHEELHOUSE"/*.whl >/dev/null 2>&1; then have_wheels=yes; fi

case "$SOURCE" in
  auto)    if [ "$have_wheels" = yes ]; then offline=yes; else offline=no; fi ;;
  offline) [ "$have_wheels" = yes ] || die "PIP_SOURCE=offline but $WHEELHOUSE has no wheels (run docker/build-image.sh)"; offline=yes ;;
  pypi)    offline=no ;;
  *)       die "PIP_SOURCE must be auto, offline or pypi, not '$SOURCE'" ;;
esac

if [ "$offline" = yes ]; then
  INDEX="--no-index --find-links $WHEELHOUSE"
  echo "pip-install.sh: $MODE from the wheelhouse only ($WHEELHOUSE)"
else
  INDEX=""
  echo "pip-install.sh: $MODE from the package index"
fi

case "$MODE" in
  deps)
    # The dependency list is read from pyproject.toml, the single place it is kept.
    python3 -c 'import tomllib; print("\n".join(tomllib.load(open("/src/pyproject.toml", "rb"))["project"]["dependencies"]))' >/tmp/requirements.txt
    # shellcheck disable=SC2086
    pip install $INDEX -r /tmp/requirements.txt "setuptools>=68" wheel || die "installing dependencies failed"
    ;;
  project)
    # shellcheck disable=SC2086
    pip install $INDEX --no-deps --no-build-isolation /src || die "installing the project failed"
    pip check || die "dependency check failed"
    ;;
  *) die "usage: pip-install.sh deps|project" ;;
esac
