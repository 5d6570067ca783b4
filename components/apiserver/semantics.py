"""The apiserver's single door to the object-semantics library.

Defaulting, validation, tables, patches and selectors live in ``controlplane.api``
and ``controlplane.selectors`` as pure functions (see those modules for the
Kubernetes sources); the apiserver's handlers import them from here only:

* ``apply_defaults(kind, obj) -> None``
* ``validate(kind, obj, old=None) -> list[{reason, message, field}]``, ``invalid_message(kind, name, causes)``,
  ``go_repr(value)`` (a value as field errors print it)
* ``table(kind, objects, resource_version, now=None) -> dict`` (meta.k8s.io/v1 Table)
* ``json_merge_patch(t, p)``, ``json_patch(t, ops)``, ``strategic_merge_patch(t, p, kind)``, ``PatchError``
* ``parse_label_selector(s)``, ``parse_field_selector(s)``, ``object_fields(kind, obj)``
* ``decoder``: decoding bodies into the kinds' Go types (``decoder.decode``, ``DecodeError``,
  ``check_depth``, ``depth``, ``go_format``, ``json_kind``)

* ``openapi_for_kind(schema, group, version, kind)``: a CRD version's schema as OpenAPI v3
  publishes it, referring to :data:`OBJECT_META_SCHEMA`

``kind`` is a kind name, or a registry entry: the apiserver passes ``Resource.facts_key``,
which is the entry itself for a custom resource (kinds may repeat across CRD groups).
"""

from controlplane.api import decoder  # noqa: F401
from controlplane.api.defaults import apply_defaults  # noqa: F401
from controlplane.api.patch import PatchError, json_merge_patch, json_patch, strategic_merge_patch  # noqa: F401
from controlplane.api.structural import openapi_for_kind  # noqa: F401
from controlplane.api.structural.openapi import OBJECT_META_REF
from controlplane.api.tables import table  # noqa: F401
from controlplane.api.validation import go_repr, invalid_message, validate  # noqa: F401
from controlplane.selectors import object_fields, parse_field_selector, parse_label_selector  # noqa: F401

#: the components.schemas name of ObjectMeta that custom resource schemas refer to
OBJECT_META_SCHEMA = OBJECT_META_REF.rsplit("/", 1)[-1]
