"""Structured logging: one line per event, tagged with the component.

Line shape (logfmt)::

    2026-11-30T01:02:03.456Z INFO scheduler event=pod.bound pod=default/web-1 node=node01

Use :func:`setup` once per process, then :func:`event` for each event.
"""

from __future__ import annotations

import logging
import os
import sys
import time

_component = "controlplane"


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        ms = int(record.msecs)
        fields = getattr(record, "fields", None)
        msg = record.getMessage()
        parts = [f"{ts}.{ms:03d}Z", record.levelname, _component]
        if fields is not None:
            parts.append(f"event={msg}")
            for k, v in fields.items():
                parts.append(f"{k}={_quote(v)}")
        else:
            parts.append(f"msg={_quote(msg)}")
        if record.exc_info:
            parts.append("error=" + _quote(self.formatException(record.exc_info).splitlines()[-1]))
        return " ".join(parts)


def _quote(v: object) -> str:
    s = str(v)
    if not s or any(c in s for c in ' "=\n\t'):
        s = '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return s


def setup(component: str, level: str | None = None, path: str | None = None) -> logging.Logger:
    """Configure the root logger for this process; returns the component's logger.

    ``level`` defaults to ``$CONTROLPLANE_LOG_LEVEL`` or INFO. Lines go to stderr, or are
    appended to the file ``path`` when given.
    """
    global _component
    _component = component
    handler: logging.Handler = logging.FileHandler(path) if path else logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel((level or os.environ.get("CONTROLPLANE_LOG_LEVEL") or "INFO").upper())
    for noisy in ("aiohttp.access", "grpc", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return logging.getLogger(component)


def event(logger: logging.Logger, name: str, level: int = logging.INFO, /, **fields: object) -> None:
    """Log one structured event ``name`` with ``key=value`` fields on a single line.

    ``logger``, ``name`` and ``level`` are positional-only, so any field name —
    ``name=`` included — can be logged."""
    if logger.isEnabledFor(level):
        logger.log(level, name, extra={"fields": fields})
