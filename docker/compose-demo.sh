#!/usr/bin/env bash
# The compose demo from a fresh clone, in one command: build the image when it is missing,
# run `compose up --exit-code-from demo demo` (seed 000's 13 steps, one container per
# component), then `compose down -v` so that nothing is left running or on disk.
#
# Usage: docker/compose-demo.sh [--build] [--build-only] [--keep] [--offline | --pypi]
#   --build     rebuild the image even when it exists
#   --build-only  build the image when it is missing (or with --build), then exit without the demo
#   --keep      leave the cluster running afterwards (for kubectl); stop it with
#               `docker-compose down -v` (or `docker compose down -v`)
#   --offline   build the base with debootstrap, install only from the wheelhouse
#   --pypi      let pip inside the build use the package index
#   By default the build uses python:3.11-slim when it is present or can be pulled, and
#   otherwise (no registry answers) `docker/build-image.sh --offline`.
# Env:  CP_COMPOSE picks the compose command (default: `docker compose` when that plugin
#       exists, else `docker-compose`); CP_ETCD_PORT, CP_APISERVER_PORT as in docker-compose.yml.
# Exit: the demo's exit status (0 after the 13 steps); 1 with a one-line reason when docker,
#       compose or the build is missing or fails.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(dirname "$HERE")"
BUILD=0
BUILD_ONLY=0
KEEP=0
BUILD_ARGS=()
for arg in "$@"; do
  case "$arg" in
    --build) BUILD=1 ;;
    --build-only) BUILD_ONLY=1 ;;
    --keep) KEEP=1 ;;
    --offline|--pypi) BUILD_ARGS+=("$arg") ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "compose-demo.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done
say() { echo "compose-demo.sh: $*"; }
die() { echo "compose-demo.sh: $*" >&2; exit 1; }

command -v docker >/dev/null || die "no docker CLI: apt-get install -y docker.io docker-compose debootstrap"
# A daemon started just before (`dockerd ... &`) gets 30 s to answer.
for waited in $(seq 0 30); do
  docker info >/dev/null 2>&1 && break
  [ "$waited" = 30 ] && die "docker daemon unreachable: start it (systemctl start docker, or: dockerd >/tmp/dockerd.log 2>&1 &)"
  [ "$waited" = 0 ] && say "waiting for the docker daemon (up to 30 s)"
  sleep 1
done
if [ -n "${CP_COMPOSE:-}" ]; then
  read -r -a COMPOSE <<<"$CP_COMPOSE"
elif docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
elif command -v docker-compose >/dev/null; then
  COMPOSE=(docker-compose)
else
  die "neither \`docker compose\` nor \`docker-compose\` is installed: apt-get install -y docker-compose"
fi
cd "$ROOT"

# The image every service runs: built here when missing (or with --build).
IMAGE="controlplane:local"
if [ "$BUILD" = 1 ] || ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
  if [ "${#BUILD_ARGS[@]}" = 0 ]; then
    if docker image inspect python:3.11-slim >/dev/null 2>&1; then
      :
    elif docker image inspect controlplane-base:local >/dev/null 2>&1; then
      BUILD_ARGS=(--offline)
    elif timeout 120 docker pull --quiet python:3.11-slim >/dev/null 2>&1; then
      say "pulled python:3.11-slim"
    else
      say "no image registry answers: building the base offline (debootstrap from this machine's apt mirror)"
      BUILD_ARGS=(--offline)
    fi
  fi
  say "building $IMAGE: docker/build-image.sh ${BUILD_ARGS[*]:-}"
  started=$SECONDS
  "$HERE/build-image.sh" "${BUILD_ARGS[@]}" || die "the image build failed (output above)"
  say "built $IMAGE in $((SECONDS - started)) s"
fi
if [ "$BUILD_ONLY" = 1 ]; then
  say "$IMAGE is ready (--build-only: no demo)"
  exit 0
fi
# Compose reads CP_IMAGE from the .env that build-image.sh writes; an image built earlier by
# other means is used as it is.
export CP_IMAGE="${CP_IMAGE:-$IMAGE}"

# Every service uses the host network, so a port already taken on this machine (a cluster left
# running, a distribution's etcd on 2379) would make that service exit and restart on-failure
# forever while compose waits on its health: say so on one line instead, naming the listener.
ETCD_PORT="${CP_ETCD_PORT:-2379}"
APISERVER_PORT="${CP_APISERVER_PORT:-6443}"
# etcd, apiserver, scheduler and controller-manager metrics, node01's and node02's healthz / read-only
for port in "$ETCD_PORT" "$APISERVER_PORT" 10251 10252 10248 10255 10249 10256; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    holder="$(ss -Hltnp "sport = :$port" 2>/dev/null | grep -o 'users:(([^)]*' | head -1 | sed 's/users:((//')"
    die "port $port on 127.0.0.1 is already in use${holder:+ by $holder}: stop it, or pick other ports (CP_ETCD_PORT, CP_APISERVER_PORT)"
  fi
done

# On failure (a service that never became healthy, the demo's timeout), what each service did.
diagnose() {
  say "the demo did not finish: service states and the last log lines of each"
  "${COMPOSE[@]}" ps || true
  "${COMPOSE[@]}" logs --no-color --tail 15 || true
}

cleanup() {
  local rc=$?
  [ "$rc" = 0 ] || diagnose
  if [ "$KEEP" = 1 ]; then
    say "cluster left running (--keep): ${COMPOSE[*]} exec -T apiserver cat /data/pki/kubeconfig > kubeconfig;" \
        "kubectl --kubeconfig kubeconfig get pods -o wide (HTTPS, the admin's certificate);" \
        "stop it with: ${COMPOSE[*]} down -v"
  else
    say "${COMPOSE[*]} down -v (stops every service, removes the etcd and pki volumes)"
    "${COMPOSE[@]}" down -v --timeout 10 || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# With a service named, --exit-code-from (which implies --abort-on-container-exit) stops only
# that service when it ends, in compose v1 and v2 alike: the ones it depends on keep running
# until `down`, which the EXIT trap above runs.
say "${COMPOSE[*]} up --exit-code-from demo demo"
set +e
"${COMPOSE[@]}" up --no-build --exit-code-from demo demo
rc=$?
set -e
say "demo exited with status $rc"
exit "$rc"
