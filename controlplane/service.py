"""What every service's command line shares (kube-scheduler, kube-controller-manager,
kubelet, kube-apiserver, etcd): how to reach the apiserver, finite-seconds and Go-duration
flag values, the ``--leader-elect*`` flags, ``--gc-sweep-interval``, and how to run until SIGTERM/SIGINT.

Services import this module, never the application shell (``controlplane.cli``; an
import-linter contract in pyproject.toml keeps it so).

Flags follow the kube-* binaries: ``--kubeconfig PATH`` and ``--master URL``
(``--master`` wins). Each is also read from the environment
(``CONTROLPLANE_<SUBCOMMAND>_KUBECONFIG`` / ``..._MASTER``, or ``KUBECONFIG``).
"""

from __future__ import annotations

import asyncio
import functools
import math
import os
import re
import signal
import sys
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, TypeVar

import click

from controlplane import aio, apitime
from controlplane.client.config import ClientConfig, load_config
from controlplane.client.rest import resolve_server
from controlplane.gcpolicy import DEFAULT_SWEEP_INTERVAL

#: a click command function
F = TypeVar("F", bound=Callable[..., Any])


def client_options(fn: F) -> F:
    """Add ``--kubeconfig`` and ``--master`` to a click command."""
    fn = click.option("--master", default=None, metavar="URL",
                      help="apiserver URL (overrides the kubeconfig), e.g. http://127.0.0.1:6443")(fn)
    fn = click.option("--kubeconfig", default=None, metavar="PATH",
                      help="kubeconfig naming the apiserver, its CA and this client's credentials "
                           "(default: $KUBECONFIG, else ./.controlplane/kubeconfig if present, "
                           "else http://127.0.0.1:6443)")(fn)
    return fn


def server_or_exit(master: str | None, kubeconfig: str | None) -> str:
    """The apiserver URL, or a one-line error and exit 2."""
    try:
        return resolve_server(master, kubeconfig)
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def config_or_exit(master: str | None, kubeconfig: str | None) -> ClientConfig:
    """How to reach the apiserver and who to be there (client-go's ``BuildConfigFromFlags``:
    :func:`controlplane.client.config.load_config` — the kubeconfig's CA and credentials,
    ``--master`` overriding its server), its certificates checked now; a one-line error and
    exit 2 when it cannot be used."""
    try:
        cfg = load_config(master, kubeconfig)
        cfg.ssl_context()
        return cfg
    except ValueError as e:
        raise click.UsageError(str(e)) from None


class Seconds(click.FloatRange):
    """A click FloatRange of finite numbers: ``nan``, ``inf`` and ``-inf`` are rejected (click's
    FloatRange lets nan through, as every comparison with it is false). Usage errors name the
    flag: ``Invalid value for '--lease-renew-seconds': 0.0 is not in the range x>0.``"""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(rv, param, ctx)


def parse_duration(value: str, flag: str) -> float:
    """A duration flag's value in seconds (float): Go's ``time.ParseDuration``
    (:func:`controlplane.apitime.parse_duration`: ``40s``, ``500ms``, ``1m30s``, ``1.5h``,
    ``0``) or, as kubectl's ``--request-timeout`` also takes it, a bare number of seconds
    (``2``, ``0.5``). No flag of ours means anything by a negative duration: ``-1s`` is a
    usage error too. Raises click.UsageError ``invalid value '4x' for --flag: time: unknown
    unit "x" in duration "4x"`` otherwise."""
    text = value.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    try:
        seconds = apitime.parse_duration(text)
    except apitime.DurationError as e:
        raise click.UsageError(f"invalid value {value!r} for {flag}: {e}") from None
    if seconds < 0:
        raise click.UsageError(f"invalid value {value!r} for {flag}: must not be negative")
    return seconds


@dataclass(frozen=True)
class LeaderElection:
    """The ``--leader-elect*`` settings (componentbaseconfig.LeaderElectionConfiguration,
    ``staging/src/k8s.io/component-base/config/types.go``): durations in seconds, the
    Lease's name and namespace. Defaults are client-go's 15 s / 10 s / 2 s."""

    enabled: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = ""
    resource_namespace: str = "kube-system"

    def check(self) -> None:
        """When enabled, raise click.UsageError unless ``lease_duration > renew_deadline >
        retry_period * JitterFactor`` (client-go's NewLeaderElector checks)."""
        if self.enabled:
            try:
                self.elector(None, identity="check")
            except ValueError as e:
                raise click.UsageError(str(e)) from None

    def elector(self, client: Any, identity: str | None = None) -> Any:
        """A :class:`controlplane.client.leaderelection.LeaderElector` for these settings
        on ``client`` (ValueError on inconsistent durations)."""
        from controlplane.client.leaderelection import LeaderElector
        return LeaderElector(client, self.resource_namespace, self.resource_name, identity,
                             lease_duration=self.lease_duration, renew_deadline=self.renew_deadline,
                             retry_period=self.retry_period)


_LEADER_ELECT_FLAGS = ("leader_elect", "leader_elect_lease_duration", "leader_elect_renew_deadline",
                       "leader_elect_retry_period", "leader_elect_resource_name",
                       "leader_elect_resource_namespace")


def leader_election_options(resource_name: str, help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add kube-scheduler's / kube-controller-manager's ``--leader-elect``,
    ``--leader-elect-lease-duration``, ``--leader-elect-renew-deadline``,
    ``--leader-elect-retry-period``, ``--leader-elect-resource-name`` (default
    ``resource_name``) and ``--leader-elect-resource-namespace`` to a click command.

    The command receives them as one keyword ``leader_election`` (a
    :class:`LeaderElection`); bad durations, or inconsistent ones with
    ``--leader-elect``, are click.UsageError (one line, exit 2)."""
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            flags = {k: kwargs.pop(k) for k in _LEADER_ELECT_FLAGS}
            le = LeaderElection(
                flags["leader_elect"],
                parse_duration(flags["leader_elect_lease_duration"], "--leader-elect-lease-duration"),
                parse_duration(flags["leader_elect_renew_deadline"], "--leader-elect-renew-deadline"),
                parse_duration(flags["leader_elect_retry_period"], "--leader-elect-retry-period"),
                flags["leader_elect_resource_name"], flags["leader_elect_resource_namespace"])
            le.check()
            return fn(leader_election=le, **kwargs)

        for decorator in reversed((
            click.option("--leader-elect/--no-leader-elect", default=False, show_default=True, help=help),
            click.option("--leader-elect-lease-duration", default="15s", show_default=True,
                         metavar="DURATION", help="how long a non-leader waits after the last "
                         "observed renewal before taking the Lease over"),
            click.option("--leader-elect-renew-deadline", default="10s", show_default=True,
                         metavar="DURATION", help="how long the leader keeps trying to renew "
                         "before it stops leading"),
            click.option("--leader-elect-retry-period", default="2s", show_default=True,
                         metavar="DURATION", help="how often candidates try to acquire or renew"),
            click.option("--leader-elect-resource-name", default=resource_name, show_default=True,
                         help="name of the Lease"),
            click.option("--leader-elect-resource-namespace", default="kube-system", show_default=True,
                         help="namespace of the Lease"),
        )):
            wrapper = decorator(wrapper)
        return wrapper
    return decorate


#: kube-scheduler's and kube-controller-manager's deprecated insecure ports (``--port``), which we
#: serve; their HTTPS ``--secure-port`` (10259 / 10257) waits for TLS on these components
INSECURE_PORTS = {"scheduler": 10251, "controller-manager": 10252}


def insecure_serving_options(component: str) -> Callable[[F], F]:
    """Add kube-scheduler's / kube-controller-manager's ``--port`` (default 10251 / 10252, ``0``
    disables) and ``--address`` (default ``0.0.0.0``): plain HTTP serving ``/metrics``,
    ``/healthz``, ``/livez`` and ``/readyz`` — Kubernetes' deprecated insecure serving flags
    (``cmd/kube-scheduler/app/options/deprecated.go``, ``insecure_serving.go``). Kubernetes
    serves these paths over HTTPS on ``--secure-port`` with delegated authentication; until these
    components have TLS, the insecure flags are the honest names. The command receives ``port`` and
    ``address``."""
    def decorate(fn: F) -> F:
        fn = click.option("--address", default="0.0.0.0", show_default=True, metavar="IP",
                          help="address to serve /metrics and the health checks on (plain HTTP)")(fn)
        fn = click.option("--port", default=INSECURE_PORTS[component], show_default=True,
                          type=click.IntRange(0, 65535), help="port for /metrics, /healthz, /livez, /readyz "
                          "over plain HTTP (0 disables; Kubernetes' deprecated insecure port)")(fn)
        return fn
    return decorate


def gc_options(fn: F) -> F:
    """Add ``--gc-sweep-interval SECONDS`` (default
    :data:`controlplane.gcpolicy.DEFAULT_SWEEP_INTERVAL`, 600; ``0`` leaves CPython's collector
    as it is) to a component's command: once the component's caches are filled, the survivors of
    every full collection leave the cyclic GC and all are swept once per interval
    (:class:`controlplane.gcpolicy.GCFreezer`). Not a Kubernetes flag: Go's collector needs none.
    The command receives ``gc_sweep_interval`` (float seconds); a negative, nan or infinite value
    is a usage error (exit 2)."""
    return click.option("--gc-sweep-interval", default=DEFAULT_SWEEP_INTERVAL, show_default=True,
                        type=Seconds(min=0), metavar="SECONDS",
                        help="keep long-lived objects out of the cyclic GC (gc.freeze after each full "
                             "collection), unfreezing and collecting everything every SECONDS "
                             "(0: CPython's default GC)")(fn)


#: the OpenTelemetry service name of each component (its Kubernetes counterpart's)
TRACING_SERVICE_NAMES = {"apiserver": "apiserver", "scheduler": "kube-scheduler",
                         "controller-manager": "kube-controller-manager", "kubelet": "kubelet"}


def tracing_options(component: str, config_file: bool = False) -> Callable[[F], F]:
    """Add ``--tracing-endpoint HOST:PORT`` (OTLP/HTTP; none: tracing off) and
    ``--tracing-sampling-rate-per-million N`` (new root spans per million, default 0 as Kubernetes:
    only requests with a sampled parent are traced) to a component's command — and, with
    ``config_file``, kube-apiserver's ``--tracing-config-file`` (a ``TracingConfiguration``,
    ``apiserver.config.k8s.io/v1beta1``: ``endpoint``, ``samplingRatePerMillion``; the flags win).
    The kubelet's ``tracing`` section of its configuration maps to the same flags. When an endpoint
    is given, :func:`controlplane.otel.setup` runs before the command; bad values are a one-line
    usage error. The command does not receive these keywords."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(**kwargs: Any) -> Any:
            endpoint = kwargs.pop("tracing_endpoint")
            rate = kwargs.pop("tracing_sampling_rate_per_million")
            path = kwargs.pop("tracing_config_file", None)
            from controlplane import otel
            if path:
                try:
                    file_endpoint, file_rate = otel.load_tracing_configuration(path)
                except ValueError as e:
                    raise click.UsageError(f"--tracing-config-file: {e}") from None
                endpoint = endpoint or file_endpoint
                rate = file_rate if rate is None else rate
            if endpoint:
                otel.setup(TRACING_SERVICE_NAMES.get(component, component), endpoint, rate or 0)
            return fn(**kwargs)

        opts = [click.option("--tracing-endpoint", default=None, metavar="HOST:PORT",
                             help="send OpenTelemetry spans over OTLP/HTTP to this collector (default: no tracing)"),
                click.option("--tracing-sampling-rate-per-million", default=None, type=click.IntRange(0, 1_000_000),
                             help="new root spans sampled per million (default 0: only requests whose caller "
                                  "is traced)")]
        if config_file:
            opts.append(click.option("--tracing-config-file", default=None, metavar="FILE",
                                     help="TracingConfiguration (apiserver.config.k8s.io/v1beta1): endpoint, "
                                          "samplingRatePerMillion"))
        out: Any = wrapper
        for o in opts:
            out = o(out)
        return out  # type: ignore[no-any-return]
    return decorate


def run_until_signalled(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main()`` in a fresh event loop (uvloop's when installed: :func:`controlplane.aio.run`);
    SIGTERM/SIGINT cancel it cleanly.

    Exit status 0 on a signal or normal return; 1 with a one-line message on an
    error that escaped ``main`` (never a traceback).
    """
    async def runner() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        await main()

    try:
        aio.run(runner())
    except (asyncio.CancelledError, KeyboardInterrupt):
        pass
    except click.ClickException:
        raise
    except BrokenPipeError:
        # the reader went away (``controlplane trace | head``): not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    except Exception as e:  # one line, no traceback
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
