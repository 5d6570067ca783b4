"""OpenTelemetry traces across the components (KEP-647 apiserver tracing, KEP-2831 kubelet tracing).

Off unless a component is given a tracing endpoint: then :func:`setup` imports the OpenTelemetry
SDK (never imported otherwise, so start-up time does not grow), builds a ``TracerProvider`` whose
resource names the service (``kube-apiserver``, ``kube-scheduler``, ``kubelet``...), samples as
component-base's ``tracing.NewProvider``: ``ParentBased(TraceIDRatioBased(samplingRatePerMillion /
1e6))`` — a sampled parent makes a sampled child, new roots at the configured rate — and exports in
batches over OTLP/HTTP protobuf to ``http://ENDPOINT/v1/traces`` (Kubernetes exports OTLP/gRPC to
``localhost:4317``; an OpenTelemetry collector accepts both, OTLP/HTTP on 4318).

One pod's flow is one trace, across processes and watch hops:

* the RestClient sends the W3C ``traceparent`` header of the current span with every request
  (:func:`inject`);
* the apiserver's request span is a child of that header (Kubernetes parents it only for
  ``system:masters`` / ``system:monitoring`` users; every caller is trusted here) and, on a create,
  the apiserver writes that span's traceparent into the object's :data:`ANNOTATION`
  (``controlplane.io/traceparent``);
* a component acting on an object from a watch (the scheduler on a pending pod, the kubelet on a
  bound one, the controller-manager on a Deployment or ReplicaSet) starts its span as a child of the
  object's annotation (:func:`span` with ``parent=traceparent_of(obj)``), and its writes carry that
  span on to the apiserver; the controller-manager also copies the annotation from an owner to
  the ReplicaSets and pods it creates (so the chain holds when the apiserver does not trace).

The annotation is documented API surface of this emulator; no Kubernetes component writes it.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any, Iterator

from controlplane.log import event

log = logging.getLogger("tracing")

#: the annotation carrying the W3C traceparent of the request that created the object
ANNOTATION = "controlplane.io/traceparent"
#: the OTLP/HTTP port an OpenTelemetry collector listens on by default
DEFAULT_OTLP_HTTP_PORT = 4318

_tracer: Any = None
_provider: Any = None
_propagator: Any = None


def enabled() -> bool:
    """Whether :func:`setup` configured tracing in this process."""
    return _tracer is not None


def setup(service: str, endpoint: str, sampling_rate_per_million: int = 0,
          export_delay: float = 0.5) -> None:
    """Configure tracing for this process: spans of ``service`` exported to ``endpoint``
    (``host:port`` or a URL; ``/v1/traces`` appended unless a path is given) every ``export_delay``
    seconds. ``sampling_rate_per_million``: new root spans sampled per million (0–1,000,000).
    Raises ValueError for a rate out of range."""
    global _tracer, _provider, _propagator
    if not 0 <= sampling_rate_per_million <= 1_000_000:
        raise ValueError(f"samplingRatePerMillion {sampling_rate_per_million} must be between 0 and 1000000")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    url = endpoint if "://" in endpoint else f"http://{endpoint}"
    if url.count("/") < 3:
        url += "/v1/traces"
    _provider = TracerProvider(resource=Resource.create({"service.name": service}),
                               sampler=ParentBased(TraceIdRatioBased(sampling_rate_per_million / 1e6)))
    _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url),
                                                    schedule_delay_millis=int(export_delay * 1000)))
    _tracer = _provider.get_tracer("controlplane")
    _propagator = TraceContextTextMapPropagator()
    event(log, "tracing.enabled", service=service, endpoint=url, sampling_rate_per_million=sampling_rate_per_million)


def shutdown() -> None:
    """Export what is buffered and stop (idempotent; a no-op when tracing is off)."""
    global _tracer, _provider
    if _provider is not None:
        provider, _provider, _tracer = _provider, None, None
        provider.shutdown()


def _context(traceparent: str | None) -> Any:
    return _propagator.extract({"traceparent": traceparent}) if traceparent else None


@contextlib.contextmanager
def span(name: str, parent: str | None = None, attributes: dict[str, Any] | None = None,
         server: bool = False) -> Iterator[Any]:
    """A span named ``name``, current inside the block; its parent is ``parent`` (a traceparent)
    when given, else the current span. ``server``: SpanKind.SERVER (an incoming request). Yields the
    span, or None when tracing is off (then nothing is done)."""
    if _tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind
    kind = SpanKind.SERVER if server else SpanKind.INTERNAL
    with _tracer.start_as_current_span(name, context=_context(parent), kind=kind,
                                       attributes=attributes or {}) as s:
        yield s


def current_traceparent() -> str | None:
    """The traceparent of the current span when it is sampled, else None."""
    if _tracer is None:
        return None
    carrier: dict[str, str] = {}
    _propagator.inject(carrier)
    tp = carrier.get("traceparent")
    return tp if tp and tp.endswith("-01") else None


def inject(headers: dict[str, str]) -> None:
    """Add the current span's ``traceparent`` to ``headers`` (nothing when tracing is off)."""
    if _tracer is not None:
        _propagator.inject(headers)


def traceparent_of(obj: dict[str, Any] | None) -> str | None:
    """The :data:`ANNOTATION` of ``obj``, or None."""
    if not obj:
        return None
    tp = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    return tp if isinstance(tp, str) and tp else None


def copy_traceparent(owner: dict[str, Any], child: dict[str, Any]) -> None:
    """Put ``owner``'s :data:`ANNOTATION` (if any, and tracing is on) on ``child`` (an object about
    to be created), unless ``child`` has one already."""
    tp = traceparent_of(owner) if _tracer is not None else None
    if tp:
        md = child.setdefault("metadata", {})
        ann = md.get("annotations")
        if ann is None:
            ann = md["annotations"] = {}
        ann.setdefault(ANNOTATION, tp)


def stamp_traceparent(obj: dict[str, Any]) -> None:
    """Set ``obj``'s :data:`ANNOTATION` to the current span's traceparent (an object being created
    by a traced request); nothing when tracing is off or the span is not sampled."""
    tp = current_traceparent()
    if tp:
        md = obj.setdefault("metadata", {})
        ann = md.get("annotations")
        if not isinstance(ann, dict):
            ann = md["annotations"] = {}
        ann[ANNOTATION] = tp


def load_tracing_configuration(path: str) -> tuple[str, int]:
    """Read a ``TracingConfiguration`` file (``apiserver.config.k8s.io/v1beta1`` or ``v1alpha1``;
    ``endpoint`` default ``localhost:4317`` as Kubernetes, ``samplingRatePerMillion`` default 0)
    → (endpoint, rate). Raises ValueError naming the problem."""
    from controlplane.yamlfile import YAMLFileError, load_file
    try:
        docs = load_file(path)
    except YAMLFileError as e:
        raise ValueError(str(e)) from None
    doc = docs[0] if docs else None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a TracingConfiguration object")
    if doc.get("kind") != "TracingConfiguration" or doc.get("apiVersion") not in (
            "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1", "apiserver.config.k8s.io/v1"):
        raise ValueError(f"{path}: expected kind TracingConfiguration of apiserver.config.k8s.io/v1beta1, got "
                         f"{doc.get('kind')!r} of {doc.get('apiVersion')!r}")
    endpoint = doc.get("endpoint") or "localhost:4317"
    rate = doc.get("samplingRatePerMillion", 0)
    if not isinstance(endpoint, str) or not isinstance(rate, int) or isinstance(rate, bool):
        raise ValueError(f"{path}: endpoint must be a string and samplingRatePerMillion an integer")
    if not 0 <= rate <= 1_000_000:
        raise ValueError(f"{path}: samplingRatePerMillion: Invalid value: {rate}: "
                         "samplingRatePerMillion must be between 0 and 1000000")
    return endpoint, rate
