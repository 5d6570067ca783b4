"""Liveness, readiness and startup probes on the simulated runtime (``pkg/kubelet/prober``).

:class:`ProbeWorker` is ``prober/worker.go`` as a pure state machine on one clock
(seconds; ``time.monotonic`` in the kubelet, a ``FakeClock`` in tests): a worker per
(container, probe kind) probes at the container's start and then every ``periodSeconds``
(no start-up jitter, so timings are exact), skips while fewer than
``initialDelaySeconds`` have passed since the container started, keeps liveness and
readiness idle until the startup probe succeeded (and the startup probe idle after),
and changes its result only after ``successThreshold`` successes or
``failureThreshold`` failures in a row. Initial results: readiness Failure, liveness
Success, startup Unknown (``prober/worker.go`` newWorker). A liveness or startup
Failure puts the worker on hold until the container is replaced (``onHold``).

**When a probe fails** (:func:`run_probe`), by handler:

* ``exec``: the command is read by the rules of ``script.py`` against the container's
  files at that moment — ``cat /tmp/healthy`` fails once the container's script ran
  ``rm -f /tmp/healthy`` (with busybox's message ``cat: can't open '/tmp/healthy': No
  such file or directory``), ``false`` / ``exit 1`` fail, a command that takes longer than
  ``timeoutSeconds`` (``sleep 5``, or one that never ends) times out (``command "sleep 5"
  timed out``, ``pkg/probe/exec``);
* ``httpGet`` / ``tcpSocket`` / ``grpc``: succeed, unless the pod annotation
  ``controlplane.io/fail-probes`` names the probe: a comma-separated list of items, each a
  probe kind (``liveness``, ``readiness``, ``startup``), an httpGet path (``/healthz``) or a
  port (``8080`` or its name), optionally ``@N`` — failing only from N seconds after the
  container started (``/healthz@10``, as the docs' liveness-http server turns 500 after 10 s).
  HTTP fails with ``HTTP probe failed with statuscode: 500``, TCP with ``dial tcp IP:PORT:
  connect: connection refused``, gRPC with ``service unhealthy (responded with
  "NOT_SERVING")`` — the prober's messages (``pkg/probe/{http,tcp,grpc}``).

Event wording (``pkg/kubelet/prober/prober.go``): ``Unhealthy`` "<Kind> probe failed:
<output>" on every failed probe; the kubelet's reaction to a liveness or startup Failure
(``kuberuntime_manager.go`` computePodActions) is ``Killing`` "Container <name> failed
<kind> probe, will be restarted" (without the suffix under ``restartPolicy: Never``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from components.kubelet.script import Timeline, run_against
from controlplane import apitime

LIVENESS, READINESS, STARTUP = "liveness", "readiness", "startup"
KINDS = (STARTUP, LIVENESS, READINESS)
SUCCESS, FAILURE, UNKNOWN = "Success", "Failure", "Unknown"
FAIL_PROBES_ANNOTATION = "controlplane.io/fail-probes"
_SPEC_KEY = {LIVENESS: "livenessProbe", READINESS: "readinessProbe", STARTUP: "startupProbe"}


@dataclass
class Probe:
    """One probe of a container spec with the API defaults applied (seconds)."""

    kind: str
    spec: dict
    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3

    @property
    def title(self) -> str:
        """``Liveness`` / ``Readiness`` / ``Startup``: the kind as events print it."""
        return self.kind.capitalize()


def probes_of(container: dict) -> dict[str, Probe]:
    """The container's probes by kind, with ``pkg/apis/core/v1/defaults.go`` defaults
    (period 10 s, timeout 1 s, success 1, failure 3, initial delay 0)."""
    out: dict[str, Probe] = {}
    for kind in KINDS:
        p = container.get(_SPEC_KEY[kind])
        if not isinstance(p, dict):
            continue
        out[kind] = Probe(kind, p, initial_delay=float(p.get("initialDelaySeconds") or 0),
                          period=float(p.get("periodSeconds") or 10),
                          timeout=float(p.get("timeoutSeconds") or 1),
                          success_threshold=int(p.get("successThreshold") or 1),
                          failure_threshold=int(p.get("failureThreshold") or 3))
    return out


def _fail_items(annotations: dict | None) -> list[tuple[str, float]]:
    raw = str((annotations or {}).get(FAIL_PROBES_ANNOTATION) or "")
    out = []
    for item in raw.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, after = item.partition("@")
        try:
            out.append((name.strip(), float(after) if after else 0.0))
        except ValueError:
            out.append((name.strip(), 0.0))
    return out


def _port_names(port: object, container: dict) -> set[str]:
    names = {str(port)}
    for cp in container.get("ports") or []:
        if str(cp.get("name")) == str(port) or str(cp.get("containerPort")) == str(port):
            names |= {str(cp.get("name")), str(cp.get("containerPort"))}
    return names


def run_probe(probe: Probe, container: dict, files: Timeline, elapsed: float,
              pod_ip: str = "", annotations: dict | None = None) -> tuple[bool, str]:
    """Run ``probe`` of ``container`` (its spec) ``elapsed`` seconds after the container
    started; ``files`` is the container's :class:`Timeline`. Returns ``(ok, output)``,
    ``output`` being what the prober reports on failure (the rules in the module docstring)."""
    spec = probe.spec
    if isinstance(spec.get("exec"), dict):
        argv = [str(w) for w in spec["exec"].get("command") or []]
        tl, output = run_against(argv, files, elapsed)
        if tl.end is None or tl.end > probe.timeout:
            # the CRI's TimeoutError text (remote_runtime.go ExecSync), the probe's output
            return False, f"command {apitime.go_quote(' '.join(argv))} timed out"
        return tl.code == 0, "\n".join(output)
    handler = next((k for k in ("httpGet", "tcpSocket", "grpc") if isinstance(spec.get(k), dict)), "")
    if not handler:
        return True, ""
    h = spec[handler]
    keys = {probe.kind} | _port_names(h.get("port", ""), container)
    if handler == "httpGet":
        keys.add(str(h.get("path") or "/"))
    if any(name in keys and elapsed >= after for name, after in _fail_items(annotations)):
        port = h.get("port", "")
        if handler == "httpGet":
            return False, "HTTP probe failed with statuscode: 500"
        if handler == "tcpSocket":
            return False, f"dial tcp {h.get('host') or pod_ip}:{port}: connect: connection refused"
        return False, 'service unhealthy (responded with "NOT_SERVING")'
    return True, ""


#: runs one probe ``elapsed`` seconds after the container started: ``(ok, output)``
RunFn = Callable[[Probe, float], tuple[bool, str]]


@dataclass
class ProbeWorker:
    """``prober/worker.go`` for one probe of one container instance.

    ``started``: the container's start on the probing clock (seconds). :meth:`due` is
    when it probes next; :meth:`record` applies one probe's outcome and returns whether
    :attr:`result` changed."""

    probe: Probe
    started: float
    result: str = ""
    last: str = UNKNOWN
    run: int = 0
    on_hold: bool = False
    next_at: float = field(default=0.0)

    def __post_init__(self) -> None:
        if not self.result:
            self.result = {READINESS: FAILURE, LIVENESS: SUCCESS, STARTUP: UNKNOWN}[self.probe.kind]
        self.next_at = self.started

    def due(self) -> float:
        return self.next_at

    def should_probe(self, now: float, container_started: bool) -> bool:
        """Whether the tick at ``now`` probes (``doProbe``'s early returns), and move
        :meth:`due` to the next tick."""
        while self.next_at <= now:
            self.next_at += self.probe.period
        if self.on_hold:
            return False
        if now - self.started < self.probe.initial_delay:
            return False
        if container_started:
            return self.probe.kind != STARTUP
        return self.probe.kind == STARTUP

    def record(self, ok: bool) -> bool:
        """Count one outcome; True when :attr:`result` changed."""
        outcome = SUCCESS if ok else FAILURE
        if outcome == self.last:
            self.run += 1
        else:
            self.last, self.run = outcome, 1
        if (outcome == FAILURE and self.run < self.probe.failure_threshold) or \
                (outcome == SUCCESS and self.run < self.probe.success_threshold):
            return False
        changed = self.result != outcome
        self.result = outcome
        if self.probe.kind in (LIVENESS, STARTUP) and outcome == FAILURE:
            self.on_hold, self.run = True, 0
        return changed


@dataclass
class ContainerProbes:
    """The probe workers of one running container instance (by kind), and what they
    say: ``started`` (no startup probe, or it succeeded), ``ready`` (started, and no
    readiness probe or it succeeded), ``failed`` (a liveness or startup Failure)."""

    workers: dict[str, ProbeWorker]

    @classmethod
    def for_container(cls, container: dict, started: float) -> ContainerProbes:
        return cls({k: ProbeWorker(p, started) for k, p in probes_of(container).items()})

    @property
    def started(self) -> bool:
        w = self.workers.get(STARTUP)
        return w is None or w.result == SUCCESS

    @property
    def ready(self) -> bool:
        w = self.workers.get(READINESS)
        return self.started and (w is None or w.result == SUCCESS)

    def failed(self) -> str:
        """The kind whose Failure asks for a restart (``liveness`` / ``startup``) or ""."""
        for kind in (STARTUP, LIVENESS):
            w = self.workers.get(kind)
            if w is not None and w.result == FAILURE:
                return kind
        return ""

    def due(self) -> float | None:
        """The next tick of any worker not on hold (None: nothing to probe)."""
        times = [w.due() for w in self.workers.values() if not w.on_hold]
        return min(times) if times else None

    def tick(self, now: float, run: RunFn) -> list[tuple[Probe, bool, str]]:
        """Probe every worker due at ``now`` (startup first, so a success lets liveness and
        readiness start on the same tick); ``run(probe, elapsed)`` gives ``(ok, output)``.
        Returns the probes run with their outcomes."""
        done = []
        for kind in KINDS:
            w = self.workers.get(kind)
            if w is None or w.due() > now:
                continue
            if not w.should_probe(now, self.started):
                continue
            ok, output = run(w.probe, now - w.started)
            w.record(ok)
            done.append((w.probe, ok, output))
        return done


def unhealthy(probe: Probe, output: str) -> str:
    """The ``Unhealthy`` event message."""
    return f"{probe.title} probe failed: {output}"


def killing(name: str, kind: str, restart: bool) -> str:
    """The ``Killing`` message after a liveness / startup Failure."""
    msg = f"Container {name} failed {kind} probe"
    return msg + ", will be restarted" if restart else msg
