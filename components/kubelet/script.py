"""What a simulated container's command line does, over time.

Nothing is executed: a container's ``command`` + ``args`` are read by a small rule set
and turned into a :class:`Timeline` — when the process ends (and with which exit code),
which files it creates and removes on the way, and whether it ignores SIGTERM. The
probes (``prober.py``: ``cat /tmp/healthy``), the restart logic and graceful termination
all read the same timeline, measured in seconds since the container started.

The rules (a script is the argument of ``sh -c`` / ``bash -c`` / ``/bin/sh -c`` /
``ash`` / ``dash``, or the argv itself; lists are split on ``;``, ``&&``, ``||``, ``|``,
``&`` and newlines, with shell quoting; each simple command takes, in order):

* ``sleep N`` (``N`` seconds, or ``Ns``/``Nm``/``Nh``/``Nd``; several operands add up):
  ``N`` seconds; ``sleep infinity`` never ends;
* ``exit N`` (``exit`` alone: the last status): the process ends with ``N``;
* ``true`` / ``:`` → status 0, ``false`` → status 1; ``cmd1 && cmd2`` runs ``cmd2``
  only after status 0, ``cmd1 || cmd2`` only after a non-zero status (sh's lists);
* ``touch F...``, ``echo ... > F`` / ``>> F`` (any redirection to a file) create ``F``;
  ``rm [-f] [-r] F...`` removes it; ``mkdir`` creates directories (as files);
* ``cat`` / ``test -e|-f|-d|-s`` / ``[ -f F ]`` / ``ls`` / ``stat`` / ``head`` / ``tail``
  (without ``-f``) of a file → status 0 when it exists, else 1 with busybox's message:
  a file the script created or removed follows the script; any other file exists unless
  it is under ``/tmp`` (an image ships its files; its ``/tmp`` is empty);
* ``echo``, ``printf``, ``date``, ``env``, ``printenv``, ``hostname``, ``id``, ``pwd``,
  ``uname``, ``cd``, ``export``, ``set``, ``wc``, ``cp``, ``mv``, ``chmod``, ``ln``,
  ``nslookup`` and the like (``INSTANT``) → status 0 at once; ``exec CMD`` is ``CMD``,
  ``FOO=bar CMD`` is ``CMD``; a nested ``sh -c '...'`` is read with the same rules;
  ``cmd &`` starts a background job that is not waited for; ``#`` starts a comment;
* an interpreter's printing one-liner without a loop (``perl -wle 'print bpi(2000)'``,
  ``python3 -c 'print(42)'``) ends at once with 0;
* ``trap '' TERM`` (also ``SIGTERM``, ``15``, ``""``) → the process ignores SIGTERM, so a
  deletion or a failed liveness probe waits for the grace period and SIGKILLs it (137);
* anything else — ``while``/``until``/``for`` loops, ``if``/``case``, ``tail -f``, an
  unknown program (a server such as ``nginx``), the image's own entrypoint (no command) —
  runs until stopped.

A stopped process (SIGTERM honoured at once) reports exit code 0 when it is the image's
entrypoint or an unknown program (servers exit cleanly), 143 (128 + SIGTERM) when it is a
script the rules read. Source of the shell semantics: POSIX sh "Lists" and ``trap``;
of the probe use: the Kubernetes task "Configure Liveness, Readiness and Startup Probes"
(``touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600``).
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field

#: shells whose ``-c`` argument is a script
SHELLS = ("sh", "bash", "ash", "dash", "zsh", "ksh")
#: commands that end at once with status 0 and touch no file
INSTANT = frozenset((
    "echo", "printf", "date", "env", "printenv", "hostname", "id", "whoami", "pwd", "uname",
    "cd", "export", "set", "unset", "wc", "cp", "mv", "chmod", "chown", "ln", "nslookup", "dig",
    "mount", "df", "du", "ps", "sync", "umask", "alias", "shift", "read", "clear", "basename",
    "dirname", "sort", "uniq", "cut", "tr", "sed", "awk", "tee", "seq", "expr",
    "kill", "nproc", "free", "uptime", "md5sum", "sha256sum", "base64", "xargs",
))
#: commands that read files: status 0 when every operand exists
FILE_READERS = frozenset(("cat", "ls", "stat", "head", "tail", "more", "less", "grep", "test", "["))
#: shell keywords that make a script run until stopped in this simulation
_LOOPS = frozenset(("while", "until", "for", "if", "case", "select", "function"))
#: interpreters whose printing ``-e``/``-c`` one-liner (no loop) ends at once with 0
INTERPRETERS = ("perl", "python", "python3", "ruby", "node")

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)")
_UNIT = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass
class Timeline:
    """What a command line does, in seconds since the container started.

    ``end``: seconds until the process exits, None = runs until stopped; ``code``: its
    exit status then; ``files``: ``(seconds, path, present)`` in time order;
    ``ignores_sigterm``; ``scripted``: the rules read it (not a server), which decides
    the exit code of a stop (143 vs 0)."""

    end: float | None = None
    code: int = 0
    files: list[tuple[float, str, bool]] = field(default_factory=list)
    ignores_sigterm: bool = False
    scripted: bool = False

    def file_exists(self, path: str, elapsed: float) -> bool:
        """Whether ``path`` exists ``elapsed`` seconds after the start (the rule above)."""
        state: bool | None = None
        for t, p, present in self.files:
            if t > elapsed:
                break
            if p == path:
                state = present
        if state is None:
            return not any(p == path for _, p, _ in self.files) and not _in_tmp(path)
        return state

    def exited(self, elapsed: float) -> bool:
        return self.end is not None and elapsed >= self.end

    def stop_code(self) -> int:
        """Exit code of a SIGTERM the process honours."""
        return 143 if self.scripted else 0


def _in_tmp(path: str) -> bool:
    return path == "/tmp" or path.startswith("/tmp/")


def parse_duration(word: str) -> float | None:
    """``sleep``'s operand in seconds (``5``, ``1.5``, ``2m``, ``infinity`` → inf); None if not one."""
    if word in ("inf", "infinity"):
        return math.inf
    m = _DURATION.fullmatch(word)
    return float(m.group(1)) * _UNIT[m.group(2)] if m else None


def argv_of(container: dict) -> list[str]:
    """``command`` + ``args`` of a container spec (or a probe / hook ``exec.command``)."""
    return [str(w) for w in (container.get("command") or []) + (container.get("args") or [])]


def one_liner_prints(argv: list[str]) -> bool:
    """``perl -Mbignum=bpi -wle 'print bpi(2000)'`` (the Kubernetes docs' Job example) and
    the like: an interpreter given an inline script (a flag ending in ``e``, or ``-c``)
    that prints something and has no loop or sleep."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in INTERPRETERS:
        return False
    for i, w in enumerate(argv[1:-1], 1):
        if re.fullmatch(r"-[A-Za-z]*e|-c", w):
            script = argv[i + 1]
            return bool(re.search(r"\b(?:print|puts|console\.log)\b", script)) and \
                not re.search(r"\b(?:while|for|loop|sleep|until|setInterval)\b", script)
    return False


def timeline(argv: list[str]) -> Timeline:
    """The :class:`Timeline` of ``argv`` (a container's or probe's command line); an empty
    argv is the image's entrypoint, which runs until stopped."""
    if not argv:
        return Timeline()
    if one_liner_prints(argv):
        return Timeline(end=0.0, code=0, scripted=True)
    tl = Timeline(scripted=True)
    state = _Run(tl)
    state.command(argv)
    if state.forever:
        tl.end, tl.code, tl.scripted = None, 0, state.scripted_forever
    else:
        tl.end, tl.code = state.t, state.status
    return tl


def run_against(argv: list[str], files: Timeline, elapsed: float) -> tuple[Timeline, list[str]]:
    """Read ``argv`` (an exec probe's or hook's command) as :func:`timeline` does, but with
    the files of another process (``files``, the container) as they are ``elapsed`` seconds
    after its start. Returns the command's own timeline and what it printed on failure."""
    seen = {p for _, p, _ in files.files}
    snapshot = Timeline(files=[(0.0, p, files.file_exists(p, elapsed)) for p in sorted(seen)])
    if one_liner_prints(argv):
        return Timeline(end=0.0, code=0, scripted=True), []
    state = _Run(snapshot)
    state.command(argv)
    out = Timeline(end=None if state.forever else state.t, code=state.status, scripted=True)
    return out, state.output


def tokens(script: str) -> list[str] | None:
    """Words and the operators ``;`` ``&&`` ``||`` ``|`` ``&`` of a script (None when its
    quoting is broken)."""
    lex = shlex.shlex(script.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:
        return None


class _Run:
    """Walks a script, advancing ``t`` (seconds) and ``status``; ``forever`` once a
    command never ends; ``done`` after ``exit``."""

    def __init__(self, tl: Timeline) -> None:
        self.tl = tl
        self.t = 0.0
        self.status = 0
        self.forever = False
        self.scripted_forever = True  # a sleep infinity / loop (143) vs a server (0)
        self.done = False
        self.output: list[str] = []  # what failing commands print (busybox's messages)

    def script(self, text: str) -> None:
        toks = tokens(text)
        if toks is None:
            self.run_forever(server=True)
            return
        words: list[str] = []
        skip = False
        for tok in toks + [";"]:
            if tok in (";", "&&", "||", "|", "&", ";;", "|&"):
                if words and not skip:
                    if tok == "&":   # a background job: started, not waited for
                        pass
                    else:
                        self.command(words)
                if self.forever or self.done:
                    return
                skip = (tok == "&&" and self.status != 0) or (tok == "||" and self.status == 0)
                words = []
            else:
                words.append(tok)

    def run_forever(self, server: bool = False) -> None:
        self.forever = True
        if server:
            self.scripted_forever = False

    def command(self, argv: list[str]) -> None:
        argv, outputs = _redirections(argv)
        for path in outputs:
            self.tl.files.append((self.t, path, True))
        while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
            argv = argv[1:]   # FOO=bar cmd: an assignment before the command
        if not argv:
            return
        name = argv[0].rsplit("/", 1)[-1]
        args = argv[1:]
        if name == "exec" and args:
            self.command(args)
            return
        if name in SHELLS:
            if len(args) >= 2 and args[0] == "-c":
                self.script(args[1])
            elif args and args[0] in ("-c", "-ec", "-xc", "-ce", "-euc", "-exc") and len(args) >= 2:
                self.script(args[1])
            else:
                self.run_forever(server=True)
            return
        if name in _LOOPS or name.endswith("()"):
            self.run_forever()
            return
        if one_liner_prints(argv):
            self.status = 0
            return
        if name == "sleep":
            total = 0.0
            for a in args or ["x"]:
                d = parse_duration(a)
                if d is None:
                    self.status = 1
                    return
                total += d
            if math.isinf(total):
                self.run_forever()
                return
            self.t += total
            self.status = 0
        elif name == "exit":
            if args and args[0].lstrip("-").isdigit():
                self.status = int(args[0]) & 0xFF
            self.done = True
        elif name in ("true", ":"):
            self.status = 0
        elif name == "false":
            self.status = 1
        elif name == "touch":
            for a in args:
                if not a.startswith("-"):
                    self.tl.files.append((self.t, a, True))
            self.status = 0
        elif name == "mkdir":
            for a in args:
                if not a.startswith("-"):
                    self.tl.files.append((self.t, a, True))
            self.status = 0
        elif name in ("rm", "rmdir"):
            for a in args:
                if not a.startswith("-"):
                    self.tl.files.append((self.t, a, False))
            self.status = 0
        elif name == "trap":
            if len(args) >= 2 and args[0] == "" and any(s in ("TERM", "SIGTERM", "15") for s in args[1:]):
                self.tl.ignores_sigterm = True
            self.status = 0
        elif name == "tail" and any(a in ("-f", "-F") or a.startswith("--follow") for a in args):
            self.run_forever()
        elif name in FILE_READERS:
            missing = reader_missing(self.tl, name, args, self.t)
            self.status = 0 if missing is None else 1
            if missing is not None and missing_message(name, missing):
                self.output.append(missing_message(name, missing))
        elif name in INSTANT:
            self.status = 0
        else:
            self.run_forever(server=True)


def _redirections(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` without its redirections, and the files written by ``>`` / ``>>``
    (``/dev/*`` and ``>&1``-style duplications write none)."""
    out: list[str] = []
    files: list[str] = []
    i = 0
    while i < len(argv):
        w = argv[i]
        if w and set(w) <= set("<>&|") and ("<" in w or ">" in w):
            if out and out[-1].isdigit():   # 2>/dev/null: the fd number
                out.pop()
            target = argv[i + 1] if i + 1 < len(argv) else ""
            if ">" in w and "&" not in w and target and not target.startswith("/dev/"):
                files.append(target)
            i += 2
            continue
        out.append(w)
        i += 1
    return out, files


def reader_missing(tl: Timeline, name: str, args: list[str], elapsed: float) -> str | None:
    """The first operand of a file-reading command that does not exist at ``elapsed``."""
    operands = [a for a in args if a not in ("]",) and not a.startswith("-")]
    if name in ("test", "["):
        operands = [a for i, a in enumerate(args) if i > 0 and args[i - 1] in ("-e", "-f", "-d", "-s", "-r")]
    elif name == "grep":
        operands = operands[1:]
    for path in operands:
        if path.startswith("/") or name in ("test", "["):
            if not tl.file_exists(path, elapsed):
                return path
    return None


def missing_message(name: str, path: str) -> str:
    """busybox's message for a missing file (what an exec probe prints)."""
    if name in ("test", "["):
        return ""
    if name == "ls":
        return f"ls: {path}: No such file or directory"
    return f"{name}: can't open '{path}': No such file or directory"
