"""What the application shell's kubectl-like commands (``trace``, ``explain``, ``demo``) share
beyond :mod:`controlplane.service`: kubectl's ``--request-timeout`` and one-line apiserver
errors.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, TypeVar

import click

from controlplane.client.rest import ApiError, RequestTimeout
from controlplane.service import parse_duration

#: a click command function
F = TypeVar("F", bound=Callable[..., Any])


def request_timeout_option(fn: F) -> F:
    """Add kubectl's ``--request-timeout`` (a Go duration or seconds; 0 = none) to a click
    command; it receives ``request_timeout`` in seconds (float, 0.0 = none). Our default is
    30 s (kubectl's is 0): a hung apiserver ends the command with one line instead of a hang."""
    def convert(ctx: click.Context, param: click.Parameter, value: str) -> float:
        return parse_duration(value, "--request-timeout")
    return click.option("--request-timeout", default="30s", show_default=True, metavar="DURATION",
                        callback=convert, help="how long to wait for each answer of the apiserver "
                        "(e.g. 5s, 2m; 0 = no timeout)")(fn)


@contextlib.contextmanager
def apiserver_errors(server: str, error: type[click.ClickException] = click.ClickException) -> Iterator[None]:
    """Inside: an :class:`ApiError` becomes ``error("apiserver said CODE REASON: MESSAGE")``, a
    :class:`RequestTimeout` ``error("the apiserver at SERVER did not answer within Ns
    (--request-timeout)")`` and a transport ``OSError`` ``error("cannot reach the apiserver at
    SERVER: ...")`` — one line, exit 1, no traceback. A BrokenPipeError (the reader of our
    output left) passes through."""
    try:
        yield
    except ApiError as e:
        raise error(f"apiserver said {e.code} {e.reason}: {e.message}") from None
    except BrokenPipeError:
        raise
    except RequestTimeout as e:
        raise error(f"the apiserver at {server} did not answer within {e.timeout:g}s "
                    f"(--request-timeout)") from None
    except OSError as e:
        raise error(f"cannot reach the apiserver at {server}: {e or type(e).__name__}") from None


async def current_object(client: Any, res: Any, name: str, namespace: str | None) -> dict[str, Any] | None:
    """The object ``name`` of resource ``res`` as the apiserver has it now, or None when it
    does not exist (404); other errors raise :class:`ApiError`. ``trace`` and ``explain``
    follow this object's uid, not an earlier object of the same name."""
    try:
        obj: dict[str, Any] = await client.get(res, name, namespace)
    except ApiError as e:
        if e.code == 404:
            return None
        raise
    return obj
