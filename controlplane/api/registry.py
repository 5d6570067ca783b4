"""The registry's types: one :class:`Resource` entry per served kind, with every fact about it.

An entry says how to address the resource (group, version, plural, kind, scope, short
names, subresources) and, as data, what the apiserver does with its objects:

* :class:`Printer` — the server-side Table columns and the row function
  (``pkg/printers/internalversion/printers.go``, wired per resource in
  ``pkg/registry/<group>/<kind>/storage/storage.go`` as ``TableConvertor``);
* :class:`KindSchema` — the OpenAPI description and top-level fields, referring to the
  shared named types of :mod:`controlplane.api.schemas`;
* ``validate`` / ``name_rule`` — the kind's validation beyond ObjectMeta and its name rule
  (the strategy's ``Validate``, ``pkg/apis/<group>/validation``);
* ``default`` — the defaulting function (``pkg/apis/<group>/v1/defaults.go``);
* ``selectable_fields`` — the selectable fields besides ``metadata.name`` / ``metadata.namespace``,
  label → extractor (the strategy's ``GetAttrs`` / ``ToSelectableFields``);
* :class:`Strategy` — create/update/delete rules (``pkg/registry/<group>/<kind>/strategy.go``);
* ``openapi_schema`` — a kind's OpenAPI v3 schema as raw JSON (a CRD version's
  ``openAPIV3Schema``), published as is instead of one built from ``schema``;
* ``prune`` — for a kind without Go types (a custom resource): drops the fields its schema
  does not know, in place, and returns their paths (the structural pruning of
  ``apiextensions-apiserver/pkg/apiserver/schema/pruning``, run by the CR decoder).

An entry without a fact gets the generic behaviour (NAME/AGE table, ObjectMeta
validation only, no defaults, name/namespace fields, no generation, immediate deletion),
which is what a kind added at run time (a CRD) gets. This module imports no per-kind
code: :mod:`controlplane.api.builtin` declares the built-in entries,
:mod:`controlplane.api.resources` holds the process's :class:`Registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from controlplane.api import listfields

#: a JSON object (a decoded API object or part of one)
JSON = dict[str, Any]
#: a row function: ``(object, now epoch seconds) -> (cells, row conditions or None)``
RowFn = Callable[[JSON, float], tuple[list[Any], list[JSON] | None]]
#: a kind's validator: ``(object, stored object on update or None, field error list)``;
#: the third argument is a :class:`controlplane.api.validators.ErrorList`
Validator = Callable[[JSON, JSON | None, Any], None]
#: a name rule: the problems of a name (empty when valid), e.g. ``is_dns1123_label``
NameRule = Callable[[str], list[str]]
#: a defaulter: fills in the defaults of an object in place
Defaulter = Callable[[JSON], None]
#: a pruner: drops unknown fields of an object in place, returns their dotted paths
Pruner = Callable[[JSON], list[str]]
#: a selectable field's extractor: the field's value of an object, as a string
FieldFn = Callable[[JSON], str]
#: ``(field, (type, description))`` pairs of a schema (types as in :mod:`controlplane.api.schemas`)
Fields = Mapping[str, tuple[str, str]]
#: named struct types a kind brings to the schema table: name → (description, fields)
NamedTypes = Mapping[str, tuple[str, Fields]]
#: a review's answer: ``(request object, requesting user) -> response object``; the user is
#: ``{"username": str, "groups": [str], "uid": str, "extra": {str: [str]}}``
Reviewer = Callable[[JSON, JSON], JSON]
#: a conversion between a served version and the storage version: a new object from ``obj``
Converter = Callable[[JSON], JSON]
#: what a computed resource reads: ``(plural of a stored core or group resource, e.g. "pods")
#: -> its current objects`` (the apiserver answers from its watch caches; read-only)
SourceLister = Callable[[str], Iterable[JSON]]
#: a computed resource's objects: ``(source lister, namespace or None for all, now epoch seconds)
#: -> objects`` (each a complete API object with apiVersion, kind and metadata)
Computer = Callable[[SourceLister, str | None, float], list[JSON]]


@dataclass(frozen=True, eq=False)
class Printer:
    """Server-side printing of a kind: TableColumnDefinitions and the row function.

    ``columns`` are ``meta.k8s.io/v1`` TableColumnDefinition dicts (name, type, format,
    description, priority); ``row(obj, now)`` returns as many cells as there are columns
    and the row's conditions (or None). ``order``: a sort key for the rows of a list, for
    the kinds whose list printer sorts (FlowSchemas by matchingPrecedence); None keeps the
    list's order.
    """

    columns: tuple[JSON, ...]
    row: RowFn
    order: Callable[[JSON], Any] | None = None


@dataclass(frozen=True, eq=False)
class KindSchema:
    """A kind's OpenAPI schema: its description and its top-level fields besides
    apiVersion/kind/metadata, each ``(type, description)`` with types as
    :mod:`controlplane.api.schemas` defines them (shared named types by name). ``types``:
    named struct types the kind brings (``name -> (description, fields)``, as
    :data:`controlplane.api.schemas.TYPES`; an API group module declares its structs here,
    :mod:`controlplane.api.schemas` adds them to the shared table). Compared and hashed by
    identity (compiled decoders are cached per schema object)."""

    description: str
    fields: Fields
    #: the named struct types this kind's fields refer to, besides the shared ones of
    #: :data:`controlplane.api.schemas.TYPES` (an API group module declares its own)
    types: NamedTypes = field(default_factory=dict)


def _no_extra_condition(obj: JSON) -> bool:
    return True


def _spec(obj: JSON) -> Any:
    return obj.get("spec")


@dataclass(frozen=True)
class Strategy:
    """A kind's create/update/delete rules (``pkg/registry/<group>/<kind>/strategy.go``).

    * ``tracks_generation``: ``metadata.generation`` is 1 on create and bumped when spec
      changes (the apps workloads and RCs in v1.32);
    * ``prepare_create``: PrepareForCreate's status reset and server-set fields (mutates
      the object); None keeps what the client sent;
    * ``prepare_update``: the kind's own PrepareForUpdate, ``(new, old, subresource)``, run
      after the generic rules (mutates ``new``; e.g. the CSR ``approval`` subresource keeps
      everything but ``status.conditions``); None: the generic rules only;
    * ``grace_period``: CheckGracefulDelete, ``(object, requested seconds or None) ->
      seconds``; None: deleted at once (the generic store's default);
    * ``may_delete_during_update``: the kind's extra condition for an update of an object
      being deleted to delete it (``ShouldDeleteDuringUpdate``; namespaces also need an
      empty ``spec.finalizers``);
    * ``delete_forbidden``: ``(object) -> reason or None``: a reason answers the DELETE 403
      Forbidden (the system PriorityClasses, ``pkg/registry/scheduling/priorityclass/storage``).
    * ``warnings``: ``(object, stored object on update or None) -> messages`` sent as
      ``Warning`` headers after a write (the strategy's WarningsOnCreate / WarningsOnUpdate);
    * ``generation_of``: the part of an object whose change bumps the generation (``spec``;
      a custom resource: everything but metadata and status, ``customresource/strategy.go``
      PrepareForUpdate).

    Whether status is reset on main-resource updates and spec on status updates follows
    from the resource serving a ``status`` subresource (:attr:`Resource.status_subresource`).
    """

    tracks_generation: bool = False
    prepare_create: Callable[[JSON], None] | None = None
    #: PrepareForCreate's use of the requesting user (``genericapirequest.UserFrom(ctx)``):
    #: ``(object, user)``, user ``{"username", "uid", "groups", "extra"}`` (the CSR's requestor)
    set_requestor: Callable[[JSON, JSON], None] | None = None
    prepare_update: Callable[[JSON, JSON, str], None] | None = None
    grace_period: Callable[[JSON, int | None], int] | None = None
    may_delete_during_update: Callable[[JSON], bool] = _no_extra_condition
    delete_forbidden: Callable[[JSON], str | None] | None = None
    generation_of: Callable[[JSON], Any] = _spec
    warnings: Callable[[JSON, JSON | None], list[str]] | None = None


#: the strategy of a kind that declares none (and of every kind added at run time)
DEFAULT_STRATEGY = Strategy()


@dataclass(frozen=True)
class Resource:
    """One REST resource, e.g. ``pods`` in the core group ``v1``, with its kind's facts.

    ``group`` is ``""`` for the core (legacy) group. ``subresources`` lists the
    subresource names served under an item (``status``, ``binding``, ``scale``). How its
    list fields merge (strategic-merge keys, server-side-apply list-map keys) is
    :attr:`list_fields`, declared in :mod:`controlplane.api.listfields`. The keyword-only
    facts (module docstring) are None / empty for the generic behaviour.

    Served and storage versions (``k8s.io/apiserver/pkg/server/storage``): an entry whose
    ``storage_version`` names another version of its group keeps no objects of its own; its
    objects are those of the storage entry, converted by ``from_storage`` (stored → this
    version) and ``to_storage`` (this version → stored), as ``autoscaling/v1``
    HorizontalPodAutoscalers are ``autoscaling/v2`` ones in Kubernetes. ``review``: a
    create-only resource never stored (:attr:`stored`). ``compute``: a read-only resource
    never stored, whose objects are computed on each GET from other resources (:attr:`computed`).
    """

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = (
        "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
    )
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    printer: Printer | None = field(default=None, kw_only=True, compare=False, hash=False)
    schema: KindSchema | None = field(default=None, kw_only=True, compare=False, hash=False)
    validate: Validator | None = field(default=None, kw_only=True, compare=False, hash=False)
    name_rule: NameRule | None = field(default=None, kw_only=True, compare=False, hash=False)
    default: Defaulter | None = field(default=None, kw_only=True, compare=False, hash=False)
    selectable_fields: Mapping[str, FieldFn] = field(default_factory=dict, kw_only=True, compare=False, hash=False)
    strategy: Strategy = field(default=DEFAULT_STRATEGY, kw_only=True, compare=False, hash=False)
    review: Reviewer | None = field(default=None, kw_only=True, compare=False, hash=False)
    compute: Computer | None = field(default=None, kw_only=True, compare=False, hash=False)
    storage_version: str = field(default="", kw_only=True, compare=False, hash=False)
    to_storage: Converter | None = field(default=None, kw_only=True, compare=False, hash=False)
    from_storage: Converter | None = field(default=None, kw_only=True, compare=False, hash=False)

    @property
    def stored(self) -> bool:
        """False for a create-only resource that is never stored (the review APIs: a
        ``review`` function computes the answer to a POST, as the ``rest.Creater`` storages
        of ``pkg/registry/authorization/*`` and ``pkg/registry/authentication/*`` do), and for a
        computed read-only resource (:attr:`computed`)."""
        return self.review is None and self.compute is None

    @property
    def computed(self) -> bool:
        """True for a read-only resource whose objects a ``compute`` function derives, on each
        GET, from the objects of stored resources (the ``metrics.k8s.io`` NodeMetrics and
        PodMetrics, which metrics-server serves from its own storage behind the aggregator:
        ``rest.Getter`` / ``rest.Lister`` storages with no etcd, ``sigs.k8s.io/metrics-server/pkg/api``)."""
        return self.compute is not None

    @property
    def converted(self) -> bool:
        """Whether objects of this entry are stored at another version of the group
        (:attr:`storage_version`) and converted on the way in and out."""
        return bool(self.storage_version) and self.storage_version != self.version
    openapi_schema: JSON | None = field(default=None, kw_only=True, compare=False, hash=False)
    prune: Pruner | None = field(default=None, kw_only=True, compare=False, hash=False)

    @property
    def lists_key(self) -> str:
        """The key its list fields are declared under in :mod:`controlplane.api.listfields`:
        the kind, or for a custom resource version ``extra["lists_key"]`` (registered from
        its schema by :func:`controlplane.api.listfields.register_kind`)."""
        return str(self.extra.get("lists_key") or self.kind)

    @property
    def list_fields(self) -> dict[str, listfields.ListField]:
        """Every declared list field of this kind by dotted path (:func:`controlplane.api.listfields.for_kind`)."""
        return listfields.for_kind(self.lists_key)

    @property
    def facts_key(self) -> str | Resource:
        """What the kind-keyed entry points (validation, defaults, tables, selectors, the
        decoder, the apiserver's strategy) are given for this resource: the kind for the
        built-in entries, the entry itself for a custom resource (``extra["crd"]``), whose kind
        may repeat in other groups."""
        return self if self.extra.get("crd") else self.kind

    @property
    def status_subresource(self) -> bool:
        """Whether status is written only through ``/status``: a main-resource update keeps
        the stored status, a status update keeps the stored spec (the status strategies of
        ``pkg/registry/*/*/strategy.go``; a CRD with ``subresources.status`` alike)."""
        return "status" in self.subresources

    @property
    def api_version(self) -> str:
        """``v1`` for core, ``apps/v1`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        """URL prefix of the group-version: ``/api/v1`` or ``/apis/apps/v1``."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def etcd_dir(self) -> str:
        """Storage directory under ``/registry`` (``pods``, ``deployments``...).

        Kubernetes keeps most resources at ``/registry/<plural>``; core events
        and events.k8s.io share ``/registry/events``; nodes are ``/registry/minions``
        in real clusters but we keep the plural for readability.
        """
        return str(self.extra.get("etcd_dir", self.plural))

    def path(self, namespace: str | None = None, name: str | None = None,
             subresource: str | None = None) -> str:
        """The REST path of the collection, an item or an item's subresource.

        Raises ValueError when a namespaced item is addressed without a namespace.
        """
        p = self.prefix
        if self.namespaced and namespace:
            p += f"/namespaces/{namespace}"
        elif self.namespaced and name:
            raise ValueError(f"{self.plural} {name!r}: a namespace is required")
        p += f"/{self.plural}"
        if name:
            p += f"/{name}"
            if subresource:
                p += f"/{subresource}"
        return p


#: what the kind-keyed entry points take: a kind, or a registry entry (:attr:`Resource.facts_key`)
KindKey = str | Resource


def kind_name(kind: KindKey) -> str:
    """The kind of a :data:`KindKey`."""
    return kind.kind if isinstance(kind, Resource) else kind


class Registry:
    """The served resources: built-in entries plus those added at run time (CRDs).

    Iterating gives the entries in registration order. :meth:`add` and :meth:`remove`
    change the set and tell every subscriber (:meth:`subscribe`) with
    ``callback("ADDED" | "DELETED", resource)``, so the apiserver can add or drop
    routes, discovery documents, OpenAPI and watch caches. :attr:`generation` grows by
    one per change (discovery and OpenAPI caches key on it). Lookups raise KeyError
    for what is not served (:meth:`of_kind` answers None). The shape follows
    kube-apiserver's ``k8s.io/apiserver/pkg/server`` (``InstallAPIGroup``) plus the
    apiextensions ``DynamicServingInfo`` that serves custom resources as they are established.
    """

    def __init__(self, resources: tuple[Resource, ...] = ()) -> None:
        self._entries: dict[tuple[str, str, str], Resource] = {}
        self._subscribers: list[Callable[[str, Resource], None]] = []
        self._kinds: dict[str, Resource] | None = None
        self.generation = 0
        for r in resources:
            self._entries[(r.group, r.version, r.plural)] = r

    def __iter__(self) -> Iterator[Resource]:
        return iter(tuple(self._entries.values()))

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, r: object) -> bool:
        return isinstance(r, Resource) and self._entries.get((r.group, r.version, r.plural)) is r

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        """The resource served at ``/apis/<group>/<version>/<plural>``, or None."""
        return self._entries.get((group, version, plural))

    def get(self, plural: str, group: str = "") -> Resource:
        """The first served version of ``group``/``plural``; raises KeyError if not served."""
        for r in self._entries.values():
            if r.plural == plural and r.group == group:
                return r
        raise KeyError(f"{plural}.{group}" if group else plural)

    def by_kind(self, kind: str, api_version: str | None = None) -> Resource:
        """The resource of ``kind`` (at ``api_version``, if given); raises KeyError."""
        if api_version is None:
            r = self.of_kind(kind)
            if r is not None:
                return r
            raise KeyError(kind)
        for r in self._entries.values():
            if r.kind == kind and r.api_version == api_version:
                return r
        raise KeyError(kind)

    def of_kind(self, kind: KindKey) -> Resource | None:
        """The first registered resource of ``kind``, or None: where the kind-keyed
        semantics (tables, validation, defaults, field selectors, strategy) find its facts.
        Given a Resource (:attr:`Resource.facts_key` of a custom resource), that entry."""
        if isinstance(kind, Resource):
            return kind
        kinds = self._kinds
        if kinds is None:
            kinds = {}
            for r in self._entries.values():
                kinds.setdefault(r.kind, r)
            self._kinds = kinds
        return kinds.get(kind)

    def storage_of(self, resource: Resource) -> Resource:
        """The entry whose objects ``resource`` serves: itself, or the entry at its
        :attr:`~Resource.storage_version` (itself when that is not served)."""
        if not resource.converted:
            return resource
        return self._entries.get((resource.group, resource.storage_version, resource.plural), resource)

    def add(self, resource: Resource) -> None:
        """Serve ``resource`` (replacing an entry at the same group/version/plural)."""
        key = (resource.group, resource.version, resource.plural)
        self._entries[key] = resource
        self._changed("ADDED", resource)

    def remove(self, group: str, version: str, plural: str) -> Resource | None:
        """Stop serving ``group/version/plural``; returns the removed entry or None."""
        r = self._entries.pop((group, version, plural), None)
        if r is not None:
            self._changed("DELETED", r)
        return r

    def subscribe(self, callback: Callable[[str, Resource], None]) -> Callable[[], None]:
        """Call ``callback(type, resource)`` on every change; returns the unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)
        return unsubscribe

    def _changed(self, type_: str, resource: Resource) -> None:
        self.generation += 1
        self._kinds = None
        for cb in list(self._subscribers):
            cb(type_, resource)
