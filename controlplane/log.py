"""Structured logging: one line per event, tagged with the component.

Line shape (logfmt)::

    2026-11-30T01:02:03.456Z INFO scheduler event=pod.bound pod=default/web-1 node=node01

Use :func:`setup` once per process, then :func:`event` for each event.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time

_component = "controlplane"

# A value is quoted when it is empty or holds a space, a quote, '=', a newline or a tab.
_NEEDS_QUOTES = re.compile(r'[ "=\n\t]')


class _Formatter(logging.Formatter):
    """logfmt lines; the seconds part of the timestamp is formatted once per second."""

    _second = -1
    _second_text = ""

    def _timestamp(self, created: float, msecs: float) -> str:
        second = int(created)
        if second != self._second:
            self._second_text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second = second
        return f"{self._second_text}.{int(msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None)
        msg = record.getMessage()
        parts = [self._timestamp(record.created, record.msecs), record.levelname, _component]
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
    s = v if type(v) is str else str(v)
    if not s or _NEEDS_QUOTES.search(s):
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
    ``name=`` included — can be logged.

    The record is made and handled directly, as ``Logger.log`` would, minus its
    ``findCaller`` stack walk: logfmt lines carry no file or line number."""
    if logger.isEnabledFor(level):
        logger.handle(logger.makeRecord(logger.name, level, "", 0, name, (), None,
                                        extra={"fields": fields}))
