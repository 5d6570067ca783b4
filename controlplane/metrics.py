"""Metrics and health endpoints shared by every component, on ``prometheus-client``.

* :data:`REGISTRY`: the process's ``CollectorRegistry`` (component-base's ``legacyregistry``):
  the families every process has — ``kubernetes_build_info``, the RestClient's
  ``rest_client_*`` and the work queues' ``workqueue_*`` — and each component's own, declared once
  at import in its ``metrics.py``. A component that may be built several times in one process
  (the apiserver, the embedded etcd: tests do) keeps its own registry beside it and serves both.
* :func:`exposition`: the text exposition format 0.0.4 written as Go's ``expfmt`` writes it
  (``prometheus/common/expfmt/text_create.go``): label names in declared order, values with
  ``strconv.FormatFloat(v, 'g', -1, 64)`` (``1`` not ``1.0``, ``1e+06``), no ``_created`` series.
* :class:`HealthChecks`: ``/healthz``, ``/livez``, ``/readyz`` as component-base's and
  k8s.io/apiserver's ``healthz`` package answer them: ``ok``, or with ``?verbose`` (or on failure)
  one ``[+]name ok`` / ``[-]name failed: reason withheld`` line per check and ``<path> check
  passed|failed``; ``?exclude=name`` skips a check; a failing check answers 500.
* :func:`serve`: an aiohttp server for ``/metrics`` and the health paths on ``host:port``
  (kube-scheduler's / kube-controller-manager's / the kubelet's endpoints).
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import logging
import math
import platform
import sys
from decimal import Decimal
from typing import Any, Awaitable, Callable, Iterable, Union

import prometheus_client
from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from controlplane import KUBE_VERSION, __version__
from controlplane.log import event

log = logging.getLogger("metrics")

#: what /metrics answers with (Prometheus' text format; scrapers check the version)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Go's client never writes <name>_created series; nor do we (also saves a clock read per child)
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

#: the process's registry (component-base ``legacyregistry``)
REGISTRY = CollectorRegistry(auto_describe=True)

BUILD_INFO = Gauge(
    "kubernetes_build_info",
    "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, "
    "build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
    ("build_date", "compiler", "git_commit", "git_tree_state", "git_version", "go_version", "major", "minor",
     "platform"), registry=REGISTRY)
_major, _minor = KUBE_VERSION.lstrip("v").split(".")[:2]
BUILD_INFO.labels("1970-01-01T00:00:00Z", "cpython", f"controlplane-{__version__}", "clean", KUBE_VERSION,
                  f"python{platform.python_version()}", _major, _minor,
                  f"{sys.platform}/{platform.machine().replace('x86_64', 'amd64')}").set(1)


def counter(name: str, help_: str, labels: Iterable[str] = (), registry: CollectorRegistry = REGISTRY) -> Counter:
    """A Counter named exactly ``name`` (``..._total``) with ``labels`` on ``registry``."""
    return Counter(name, help_, tuple(labels), registry=registry)


def gauge(name: str, help_: str, labels: Iterable[str] = (), registry: CollectorRegistry = REGISTRY) -> Gauge:
    """A Gauge named ``name`` with ``labels`` on ``registry``."""
    return Gauge(name, help_, tuple(labels), registry=registry)


def histogram(name: str, help_: str, labels: Iterable[str] = (), buckets: Iterable[float] = (),
              registry: CollectorRegistry = REGISTRY) -> Histogram:
    """A Histogram named ``name`` (seconds unless the name says otherwise) with the upper bounds
    ``buckets`` (+Inf added) on ``registry``."""
    return Histogram(name, help_, tuple(labels), buckets=tuple(buckets) or Histogram.DEFAULT_BUCKETS,
                     registry=registry)


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """component-base ``metrics.ExponentialBuckets``: ``start * factor**i`` for ``i < count``."""
    return tuple(start * factor ** i for i in range(count))


class Children:
    """The labelled children of one metric, looked up once per label tuple: ``get(values)`` is a
    dict hit after the first call (``labels()`` builds and checks the label tuple every time), so a
    hot path pays one dict lookup and one in-place increment."""

    __slots__ = ("metric", "children")

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.children: dict[tuple[str, ...], Any] = {}

    def get(self, values: tuple[str, ...]) -> Any:
        """The child for ``values`` (label values in declared order)."""
        c = self.children.get(values)
        if c is None:
            c = self.children[values] = self.metric.labels(*values)
        return c


# ---------------------------------------------------------------- the text format, as Go writes it
def go_float(v: float) -> str:
    """``v`` as Go's ``strconv.FormatFloat(v, 'g', -1, 64)`` (expfmt ``writeFloat``): the shortest
    digits, in ``%e`` form (``1.5e+06``, ``1e-05``) when the decimal exponent is < -4 or >= 6
    (Go's shortest ``%g``); ``+Inf``, ``-Inf``, ``NaN``."""
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "0"
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    d = Decimal(repr(float(v)))
    sign, digits, exp10 = d.as_tuple()
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exp10, int)
    x = len(digits) + exp10 - 1  # the decimal exponent of the first digit
    s = "-" if sign else ""
    if x < -4 or x >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{s}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if x < 0:
        return f"{s}0.{'0' * (-x - 1)}{ds}"
    if len(ds) <= x + 1:
        return s + ds + "0" * (x + 1 - len(ds))
    return f"{s}{ds[:x + 1]}.{ds[x + 1:]}"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _sample_value(name: str, v: str) -> str:
    if name in ("le", "quantile"):
        try:
            return go_float(float(v))
        except ValueError:
            return v
    return _escape(v)


def exposition(*registries: Any) -> bytes:
    """Every family of ``registries`` (CollectorRegistry or anything with ``collect()``) in the
    text format 0.0.4 as Go's expfmt writes it; a family name seen twice is written once (the
    first registry wins)."""
    out: list[str] = []
    seen: set[str] = set()
    for reg in registries:
        for fam in reg.collect():
            name = fam.name + "_total" if fam.type == "counter" else fam.name
            if name in seen:
                continue
            seen.add(name)
            typ = fam.type if fam.type in ("counter", "gauge", "histogram", "summary") else "untyped"
            out.append(f"# HELP {name} {fam.documentation.replace(chr(92), chr(92) * 2).replace(chr(10), '')}")
            out.append(f"# TYPE {name} {typ}")
            for s in fam.samples:
                if s.name.endswith("_created"):
                    continue
                if s.labels:
                    lab = ",".join(f'{k}="{_sample_value(k, str(v))}"' for k, v in s.labels.items())
                    out.append(f"{s.name}{{{lab}}} {go_float(s.value)}")
                else:
                    out.append(f"{s.name} {go_float(s.value)}")
    return ("\n".join(out) + "\n").encode() if out else b""


def metrics_response(*registries: Any, extra: str = "") -> web.Response:
    """``/metrics``: :func:`exposition` of ``registries`` (plus ``extra``, text already in the
    format) with Prometheus' content type."""
    return web.Response(body=exposition(*registries) + extra.encode(),
                        headers={"Content-Type": CONTENT_TYPE, "X-Content-Type-Options": "nosniff"})


# ---------------------------------------------------------------- health
#: a health check: () -> ok, or an awaitable of it; an exception is a failure
Check = Callable[[], Union[bool, Awaitable[bool]]]


class HealthChecks:
    """Named checks behind ``/healthz``, ``/livez`` and ``/readyz`` (``healthz.InstallHandler``:
    ``staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go``). ``ping`` always passes.
    ``add(name, check, readyz_only=False)``: a check for every path, or only for ``/readyz``.
    """

    def __init__(self) -> None:
        self.checks: list[tuple[str, Check, bool]] = [("ping", lambda: True, False)]

    def add(self, name: str, check: Check, readyz_only: bool = False) -> None:
        """Register ``check`` under ``name`` (``[+]name ok`` in verbose output)."""
        self.checks.append((name, check, readyz_only))

    async def run(self, path: str, exclude: Iterable[str] = ()) -> list[tuple[str, bool]]:
        """``[(name, passed)]`` of the checks of ``path`` (``/healthz``, ``/livez``, ``/readyz``)."""
        skip = set(exclude)
        out = []
        for name, check, readyz_only in self.checks:
            if name in skip or (readyz_only and path != "/readyz"):
                continue
            try:
                ok = check()
                if inspect.isawaitable(ok):
                    ok = await ok
            except Exception:
                ok = False
            out.append((name, bool(ok)))
        return out

    async def handle(self, request: web.Request) -> web.Response:
        """The aiohttp handler of the three paths: 200 ``ok`` or, verbose, the check lines; 500 when
        a check fails (the lines then always, as healthz.go's handleRootHealth)."""
        path = request.path.rstrip("/")
        results = await self.run(path, request.query.getall("exclude", []))
        ok = all(r for _, r in results)
        if "verbose" not in request.query and ok:
            return web.Response(text="ok")
        lines = [f"[+]{n} ok" if r else f"[-]{n} failed: reason withheld" for n, r in results]
        lines.append(f"{path.lstrip('/')} check {'passed' if ok else 'failed'}")
        return web.Response(status=200 if ok else 500, text="\n".join(lines) + "\n")

    def install(self, app: web.Application) -> None:
        """Route ``/healthz``, ``/livez`` and ``/readyz`` of ``app`` to :meth:`handle`."""
        for p in ("/healthz", "/livez", "/readyz"):
            app.router.add_get(p, self.handle)


# ---------------------------------------------------------------- serving
class Endpoint:
    """A running metrics/health server (:func:`serve`): ``url`` (``http://host:port``) or None
    when disabled or its port was taken; :meth:`stop`."""

    def __init__(self, runner: web.AppRunner | None, url: str | None) -> None:
        self.runner = runner
        self.url = url

    async def stop(self) -> None:
        """Close the listener (idempotent)."""
        if self.runner is not None:
            runner, self.runner = self.runner, None
            await runner.cleanup()


def make_app(health: HealthChecks | None = None, registries: Iterable[Any] = (),
             routes: Iterable[tuple[str, Callable[[web.Request], Awaitable[web.StreamResponse]]]] = ()
             ) -> web.Application:
    """An aiohttp app with ``/metrics`` (``registries``, :data:`REGISTRY` by default), the health
    paths of ``health`` (a fresh :class:`HealthChecks` when None) and ``routes`` ``(path, handler)``."""
    regs = tuple(registries) or (REGISTRY,)
    app = web.Application()

    async def metrics(request: web.Request) -> web.Response:
        return metrics_response(*regs)
    app.router.add_get("/metrics", metrics)
    (health or HealthChecks()).install(app)
    for path, handler in routes:
        app.router.add_get(path, handler)
    return app


async def serve(component: str, host: str, port: int, app: web.Application) -> Endpoint:
    """Serve ``app`` over plain HTTP on ``host:port``; ``port`` 0 disables (Kubernetes' ``0``
    for ``--port``, ``--healthz-port``, ``--read-only-port``). A port already taken is logged
    (``metrics.port_in_use``, WARNING) and the component runs on without the endpoint — several
    kubelets on one machine would otherwise die on the default port. Logs ``metrics.serving``
    with the URL."""
    if port == 0:
        return Endpoint(None, None)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host or "0.0.0.0", port, reuse_address=True)
    try:
        await site.start()
    except OSError as e:
        await runner.cleanup()
        if e.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            event(log, "metrics.port_in_use", logging.WARNING, component=component, address=f"{host}:{port}",
                  error=e.strerror or str(e))
            return Endpoint(None, None)
        raise
    url = f"http://{host if host not in ('', '0.0.0.0') else '127.0.0.1'}:{port}"
    event(log, "metrics.serving", component=component, url=url)
    return Endpoint(runner, url)


async def stop_all(endpoints: Iterable[Endpoint]) -> None:
    """Stop every endpoint of ``endpoints``."""
    await asyncio.gather(*(e.stop() for e in endpoints), return_exceptions=True)
