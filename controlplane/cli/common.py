"""What every service's command line shares: how to reach the apiserver, Go
durations, the ``--leader-elect*`` flags, and how to run until SIGTERM/SIGINT.

Flags follow the kube-* binaries: ``--kubeconfig PATH`` and ``--master URL``
(``--master`` wins). Each is also read from the environment
(``CONTROLPLANE_<SUBCOMMAND>_KUBECONFIG`` / ``..._MASTER``, or ``KUBECONFIG``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import re
import signal
import sys
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import click

from controlplane import aio
from controlplane.client.rest import ApiError, RequestTimeout, resolve_server


def client_options(fn: Callable) -> Callable:
    """Add ``--kubeconfig`` and ``--master`` to a click command."""
    fn = click.option("--master", default=None, metavar="URL",
                      help="apiserver URL (overrides the kubeconfig), e.g. http://127.0.0.1:6443")(fn)
    fn = click.option("--kubeconfig", default=None, metavar="PATH",
                      help="kubeconfig naming the apiserver (default: $KUBECONFIG, else "
                           "./.controlplane/kubeconfig if present, else http://127.0.0.1:6443)")(fn)
    return fn


def server_or_exit(master: str | None, kubeconfig: str | None) -> str:
    """The apiserver URL, or a one-line error and exit 2."""
    try:
        return resolve_server(master, kubeconfig)
    except ValueError as e:
        raise click.UsageError(str(e)) from None


class Seconds(click.FloatRange):
    """A click FloatRange of finite numbers: ``nan``, ``inf`` and ``-inf`` are rejected (click's
    FloatRange lets nan through, as every comparison with it is false). Usage errors name the
    flag: ``Invalid value for '--lease-renew-seconds': 0.0 is not in the range x>0.``"""

    name = "float"

    def convert(self, value, param, ctx):
        rv = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(rv, param, ctx)


_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str, flag: str) -> float:
    """A Go duration (``40s``, ``500ms``, ``1m``, ``1.5s``, ``1m30s``) or a bare number
    of seconds (``2``), in seconds (float), as ``time.ParseDuration`` for the kube-*
    binaries' duration flags. Raises click.UsageError naming ``flag`` otherwise."""
    text = value.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise click.UsageError(f"invalid value {value!r} for {flag}: want a duration like 40s")
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def request_timeout_option(fn: Callable) -> Callable:
    """Add kubectl's ``--request-timeout`` (a Go duration or seconds; 0 = none) to a click
    command; it receives ``request_timeout`` in seconds (float, 0.0 = none). Our default is
    30 s (kubectl's is 0): a hung apiserver ends the command with one line instead of a hang."""
    def convert(ctx: click.Context, param: click.Parameter, value: str) -> float:
        return parse_duration(value, "--request-timeout")
    return click.option("--request-timeout", default="30s", show_default=True, metavar="DURATION",
                        callback=convert, help="how long to wait for each answer of the apiserver "
                        "(e.g. 5s, 2m; 0 = no timeout)")(fn)


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


def leader_election_options(resource_name: str, help: str) -> Callable[[Callable], Callable]:
    """Add kube-scheduler's / kube-controller-manager's ``--leader-elect``,
    ``--leader-elect-lease-duration``, ``--leader-elect-renew-deadline``,
    ``--leader-elect-retry-period``, ``--leader-elect-resource-name`` (default
    ``resource_name``) and ``--leader-elect-resource-namespace`` to a click command.

    The command receives them as one keyword ``leader_election`` (a
    :class:`LeaderElection`); bad durations, or inconsistent ones with
    ``--leader-elect``, are click.UsageError (one line, exit 2)."""
    def decorate(fn: Callable) -> Callable:
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


@contextlib.contextmanager
def apiserver_errors(server: str, error: type[click.ClickException] = click.ClickException):
    """Inside: an :class:`ApiError` becomes ``error("apiserver said CODE REASON: MESSAGE")``, a
    :class:`RequestTimeout` ``error("the apiserver at SERVER did not answer within Ns
    (--request-timeout)")`` and a transport ``OSError`` ``error("cannot reach the apiserver at
    SERVER: ...")`` — one line, exit 1, no traceback. A BrokenPipeError (the reader of our
    output left) passes through."""
    try:
        yield
    except ApiError as e:
        raise error(f"apiserver said {e.code} {e.reason}: {e.message}") from None
    except BrokenPipeError:
        raise
    except RequestTimeout as e:
        raise error(f"the apiserver at {server} did not answer within {e.timeout:g}s "
                    f"(--request-timeout)") from None
    except OSError as e:
        raise error(f"cannot reach the apiserver at {server}: {e or type(e).__name__}") from None


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
