"""``controlplane up --prometheus FILE``: a Prometheus scrape configuration for every endpoint.

One job per component kind with Kubernetes' usual job names (``etcd``, ``apiserver``,
``kube-scheduler``, ``kube-controller-manager``, ``kubelet``), static targets ``127.0.0.1:PORT``
over each endpoint's scheme (the apiserver's is HTTPS: ``tls_config`` names the cluster CA and a
client certificate, Prometheus' ``ca_file`` / ``cert_file`` / ``key_file``), ``metrics_path: /metrics``; each kubelet target labelled ``service`` with the
process's name. The format is Prometheus' ``prometheus.yml`` (``promtool check config`` accepts it).
"""

from __future__ import annotations

import os
from typing import Iterable
from urllib.parse import urlsplit

import yaml

from controlplane.cli.cluster import MetricsEndpoint


def scrape_config(endpoints: Iterable[MetricsEndpoint], interval: str = "15s",
                  tls: dict[str, str] | None = None) -> str:
    """The YAML text of a ``prometheus.yml`` scraping ``endpoints`` every ``interval``; ``tls``
    (``{"ca_file", "cert_file", "key_file"}``) is the ``tls_config`` of the https jobs."""
    jobs: dict[str, list[MetricsEndpoint]] = {}
    for e in endpoints:
        jobs.setdefault(e.job, []).append(e)
    configs = []
    for job, eps in jobs.items():
        scheme = urlsplit(eps[0].url).scheme or "http"
        cfg: dict[str, object] = {"job_name": job, "scheme": scheme, "metrics_path": "/metrics"}
        if scheme == "https" and tls:
            cfg["tls_config"] = dict(tls)
        cfg["static_configs"] = [{"targets": [urlsplit(e.url).netloc], "labels": {"service": e.service}}
                                 for e in eps]
        configs.append(cfg)
    doc = {"global": {"scrape_interval": interval, "evaluation_interval": interval}, "scrape_configs": configs}
    return "# written by `controlplane up --prometheus`\n" + yaml.safe_dump(doc, sort_keys=False)


def write_scrape_config(path: str, endpoints: Iterable[MetricsEndpoint], tls: dict[str, str] | None = None) -> None:
    """Write :func:`scrape_config` to ``path`` atomically. Raises OSError."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(scrape_config(endpoints, tls=tls))
    os.replace(tmp, path)
