"""placeholder"""
from controlplane.api.registry import Resource

ENTRIES: tuple[Resource, ...] = ()
