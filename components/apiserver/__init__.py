"""The Kubernetes API server emulation: aiohttp REST + watch over etcd3.

Modules: ``server`` (wiring), ``routing`` (paths), ``rest`` (generic verbs), ``watch``
(HTTP watch), ``cache`` (watch cache), ``strategy`` (per-kind rules), ``discovery``
(discovery + OpenAPI), ``status`` (Status errors), ``tracing`` (13-step records), ``cli``.
"""
