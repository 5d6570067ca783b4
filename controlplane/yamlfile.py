"""Reading YAML documents from files or bytes with one-line errors.

:func:`load_all` parses with libyaml (PyYAML's ``CSafeLoader``) when PyYAML was built
with it: its composer is not recursive and refuses nesting deeper than libyaml's limit
(1000 levels) with "exceeded maximum nesting depth". Without libyaml the pure-Python
loader is used and its ``RecursionError`` on deep input becomes the same error.
Binary input fails in PyYAML's reader ("control characters are not allowed").

Messages follow kubectl's (``error parsing FILE: ...``, from
``staging/src/k8s.io/cli-runtime/pkg/resource/visitor.go``): ``error parsing /bin/ls:
yaml: control characters are not allowed (position 0)``.
"""

from __future__ import annotations

from typing import Any

import yaml

#: libyaml's loader when available (non-recursive composer, nesting limit), else PyYAML's
Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YAMLFileError(ValueError):
    """A file that cannot be read or parsed; ``str()`` is one line."""


def _one_line(e: yaml.YAMLError) -> str:
    problem = getattr(e, "problem", None)
    if isinstance(e, yaml.reader.ReaderError):
        problem = e.reason  # e.g. "control characters are not allowed"
        return f"{problem} (position {e.position})"
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    text = problem or str(e).splitlines()[0]
    if mark is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return text


def load_all(data: bytes | str, name: str = "<input>") -> list[Any]:
    """Every document of ``data`` (empty documents included as None), parsed safely.

    Raises :class:`YAMLFileError` ``"error parsing NAME: yaml: PROBLEM (where)"`` for
    malformed, binary, non-UTF-8 or too deeply nested input."""
    try:
        return list(yaml.load_all(data, Loader=Loader))
    except yaml.YAMLError as e:
        raise YAMLFileError(f"error parsing {name}: yaml: {_one_line(e)}") from None
    except RecursionError:
        raise YAMLFileError(f"error parsing {name}: yaml: exceeded maximum nesting depth") from None


def load_file(path: str) -> list[Any]:
    """:func:`load_all` of the file at ``path``; a missing or unreadable file is a
    :class:`YAMLFileError` too (kubectl's ``the path "P" does not exist``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise YAMLFileError(f'the path "{path}" does not exist') from None
    except IsADirectoryError:
        raise YAMLFileError(f"{path} is a directory: give one manifest file") from None
    except OSError as e:
        raise YAMLFileError(f"cannot read {path}: {e.strerror or e}") from None
    return load_all(data, path)
