# One image for every controlplane service: etcd, apiserver, controller-manager,
# scheduler, kubelet, and the demo client. The service is chosen by the command:
#   docker run --network host controlplane:local controlplane apiserver --etcd-servers http://127.0.0.1:2379
#
# Build args:
#   BASE        base image with python3 (>= 3.11) and its venv module.
#               Default python:3.11-slim; offline, docker/build-base.sh makes controlplane-base:local.
#   PIP_SOURCE  auto (default): install from docker/wheelhouse when it holds wheels, else from PyPI;
#               offline: the wheelhouse only; pypi: ignore the wheelhouse.
#               docker/build-image.sh fills the wheelhouse on the host.
# See docs/docker.md.
ARG BASE=python:3.11-slim
FROM ${BASE}

ARG PIP_SOURCE=auto
ENV VIRTUAL_ENV=/opt/controlplane \
    PATH=/opt/controlplane/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# A venv works the same on python:3.11-slim and on Debian's python3 (PEP 668).
RUN python3 -m venv /opt/controlplane

WORKDIR /src
# Dependencies first: this layer is reused until pyproject.toml or the wheelhouse changes.
COPY pyproject.toml ./
COPY docker/ ./docker/
RUN sh docker/pip-install.sh deps

COPY controlplane/ ./controlplane/
COPY components/ ./components/
RUN sh docker/pip-install.sh project \
 && install -m 0755 docker/healthcheck.py /opt/controlplane/bin/controlplane-healthcheck \
 && controlplane --help >/dev/null

# Services run unprivileged from /data; etcd keeps its data in /data/etcd (the compose
# file mounts a named volume there, which takes this directory's owner when first created).
# uid 10001 is an ordinary (non-system) uid, above any the host or base image hands out to
# system users: `--system` with it would warn "uid 10001 is greater than SYS_UID_MAX".
# --no-log-init keeps the sparse lastlog/faillog entries for a high uid out of the layer.
RUN useradd --no-log-init --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin controlplane \
 && mkdir -p /data/etcd /data/pki && chown -R controlplane:controlplane /data
USER controlplane
WORKDIR /data
VOLUME ["/data/etcd"]

CMD ["controlplane", "--help"]
