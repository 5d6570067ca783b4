"""Reading YAML documents from files or bytes with one-line errors.

:func:`load_all` parses with libyaml (PyYAML's ``CSafeLoader``) when PyYAML was built
with it: its composer is not recursive and refuses nesting deeper than libyaml's limit
(1000 levels) with "exceeded maximum nesting depth". Without libyaml the pure-Python
loader is used and its ``RecursionError`` on deep input becomes the same error.
Binary input fails in PyYAML's reader ("control characters are not allowed").

Text pasted from a web page (seed 000's manifests, copied from a blog) carries characters
that look like YAML's but are not: a no-break space (U+00A0), a full-width colon (U+FF1A),
an ideographic space (U+3000), a zero-width space (U+200B), a tab in the indentation.
PyYAML reads most of them as part of a value (``kind: "Deployment\u00a0"``, a kind error
later) or fails a line late; :func:`pasted_characters` finds them first, so the error names
the character, its line and column and the fix, and ``fix_pasted=True`` replaces them with
their ASCII counterparts and reports each replacement as a warning instead. (YAML 1.2
section 6.1 forbids tabs in indentation; libyaml's scanner says "found character that
cannot start any token".)

Messages follow kubectl's (``error parsing FILE: ...``, from
``staging/src/k8s.io/cli-runtime/pkg/resource/visitor.go``): ``error parsing /bin/ls:
yaml: control characters are not allowed (position 0)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import yaml

#: libyaml's loader when available (non-recursive composer, nesting limit), else PyYAML's
Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YAMLFileError(ValueError):
    """A file that cannot be read or parsed; ``str()`` is one line. ``pasted``: the pasted
    look-alike characters that caused it (:func:`pasted_characters`), else empty."""

    def __init__(self, message: str, pasted: list["Pasted"] | None = None) -> None:
        super().__init__(message)
        self.pasted = pasted or []


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


#: pasted look-alike character -> (its name, the ASCII it stands for)
PASTED: dict[str, tuple[str, str]] = {
    "\u00a0": ("a no-break space", " "),
    "\u3000": ("an ideographic space", " "),
    "\u200b": ("a zero-width space", ""),
    "\uff1a": ("a full-width colon", ":"),
}


@dataclass(frozen=True)
class Pasted:
    """One pasted character: 1-based ``line`` and ``column``, the character ``char``,
    what it is (``name``) and its ASCII replacement (``replacement``, "" to delete)."""

    line: int
    column: int
    char: str
    name: str
    replacement: str
    #: the character right before it is ':' (a full-width colon there is just deleted)
    after_colon: bool = False

    @property
    def code(self) -> str:
        """``U+00A0`` style code point."""
        return f"U+{ord(self.char):04X}"

    def fix(self) -> str:
        """What to do, in words: ``replace U+00A0 with a space``."""
        if self.char == "\t":
            return "replace the tab with spaces (YAML indents with spaces only)"
        if not self.replacement:
            return f"delete {self.code}"
        if self.replacement == ":" and self.after_colon:
            return f"delete {self.code} (a ':' is already there)"
        what = "a space" if self.replacement == " " else repr(self.replacement)
        return f"replace {self.code} with {what}"



def _plain_positions(line: str) -> list[bool]:
    """Per character of ``line``: True when it is outside a quoted scalar and a comment
    (where a look-alike character changes what YAML reads; inside quotes it is content)."""
    out = []
    quote = ""
    comment = False
    for j, ch in enumerate(line):
        if comment:
            out.append(False)
            continue
        if quote:
            out.append(False)
            if ch == quote and not (quote == '"' and j and line[j - 1] == "\\"):
                quote = ""
            continue
        if ch in "\"'" and (j == 0 or line[j - 1] in " \t:-[{,\u00a0"):
            quote = ch
            out.append(False)
            continue
        if ch == "#" and (j == 0 or line[j - 1] in " \t"):
            comment = True
            out.append(False)
            continue
        out.append(True)
    return out


def pasted_characters(text: str) -> list[Pasted]:
    """Every look-alike character of :data:`PASTED` outside quoted scalars and comments,
    and every tab in a line's indentation (or on a line of only whitespace), in text order."""
    out: list[Pasted] = []
    for i, line in enumerate(text.splitlines(), 1):
        indent = len(line) - len(line.lstrip(" \t"))
        plain = _plain_positions(line)
        for j, ch in enumerate(line):
            if ch in PASTED and plain[j]:
                name, repl = PASTED[ch]
                out.append(Pasted(i, j + 1, ch, name, repl, after_colon=j > 0 and line[j - 1] == ":"))
            elif ch == "\t" and j < indent:
                out.append(Pasted(i, j + 1, ch, "a tab in the indentation", "  "))
    return out


def fix_pasted(text: str) -> tuple[str, list[Pasted]]:
    """``text`` with every :func:`pasted_characters` hit replaced by its ASCII
    counterpart (a full-width colon after ':' deleted, one before a value followed by a
    space; a tab in the indentation: two spaces; a line of only whitespace: emptied),
    and the hits."""
    hits = pasted_characters(text)
    if not hits:
        return text, hits
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        end = line[len(body):]
        if not body.strip(" \t" + "".join(PASTED)):
            lines[i] = end
            continue
        indent = len(body) - len(body.lstrip(" \t"))
        out = [body[:indent].replace("\t", "  ")]
        rest = body[indent:]
        plain = _plain_positions(body)[indent:]
        for j, ch in enumerate(rest):
            if ch not in PASTED or not plain[j]:
                out.append(ch)
                continue
            repl = PASTED[ch][1]
            if repl == ":":
                prev = (out[-1][-1:] if out else "")
                if prev == ":":
                    continue
                nxt = rest[j + 1:j + 2]
                repl = ":" if nxt in ("", " ") else ": "
            out.append(repl)
        lines[i] = "".join(out) + end
    return "".join(lines), hits


def _describe(name: str, hits: list[Pasted]) -> str:
    """One line naming the first occurrence of each distinct pasted character."""
    firsts: dict[str, tuple[Pasted, int]] = {}
    for h in hits:
        first, n = firsts.get(h.char, (h, 0))
        firsts[h.char] = (first, n + 1)
    parts = []
    for h, n in firsts.values():
        more = f" ({n} in all)" if n > 1 else ""
        parts.append(f"line {h.line}, column {h.column}: {h.name} ({h.code}){more}, as pasted from a web "
                     f"page; {h.fix()}")
    return f"error parsing {name}: " + "; ".join(parts)


def load_all(data: bytes | str, name: str = "<input>", *, fix: bool = False,
             warn: Callable[[str], None] | None = None) -> list[Any]:
    """Every document of ``data`` (empty documents included as None), parsed safely.

    Raises :class:`YAMLFileError` ``"error parsing NAME: yaml: PROBLEM (where)"`` for
    malformed, binary, non-UTF-8 or too deeply nested input, and ``"error parsing NAME:
    line L, column C: a no-break space (U+00A0), as pasted from a web page; replace U+00A0
    with a space ..."`` for pasted look-alike characters (:func:`pasted_characters`). With
    ``fix`` those are replaced instead (:func:`fix_pasted`) and ``warn`` gets one line
    per replaced character: ``NAME: line L, column C: a no-break space (U+00A0) fixed:
    replace U+00A0 with a space``."""
    text: bytes | str = data
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data  # PyYAML names the bad byte
    if isinstance(text, str):
        if fix:
            text, hits = fix_pasted(text)
            for h in hits:
                if warn is not None:
                    warn(f"{name}: line {h.line}, column {h.column}: {h.name} ({h.code}) fixed: {h.fix()}")
        else:
            hits = pasted_characters(text)
            if hits:
                raise YAMLFileError(_describe(name, hits), hits)
    try:
        return list(yaml.load_all(text, Loader=Loader))
    except yaml.YAMLError as e:
        raise YAMLFileError(f"error parsing {name}: yaml: {_one_line(e)}") from None
    except RecursionError:
        raise YAMLFileError(f"error parsing {name}: yaml: exceeded maximum nesting depth") from None


def load_file(path: str, *, fix: bool = False, warn: Callable[[str], None] | None = None) -> list[Any]:
    """:func:`load_all` of the file at ``path`` (``fix`` / ``warn`` as there); a missing or
    unreadable file is a :class:`YAMLFileError` too (kubectl's ``the path "P" does not exist``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise YAMLFileError(f'the path "{path}" does not exist') from None
    except IsADirectoryError:
        raise YAMLFileError(f"{path} is a directory: give one manifest file") from None
    except OSError as e:
        raise YAMLFileError(f"cannot read {path}: {e.strerror or e}") from None
    return load_all(data, path, fix=fix, warn=warn)
