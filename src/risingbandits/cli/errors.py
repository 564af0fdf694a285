"""User errors in the CLI: one clear line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import typer

from risingbandits.extras import MissingExtra

F = TypeVar("F", bound=Callable[..., Any])


class UserError(Exception):
    """A mistake in the user's input (bad value, missing file, refused overwrite)."""


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code`` (2: a mistake in the input;
    1: the machine failed us, e.g. a full disk)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def os_error_text(exc: OSError) -> str:
    """``FILE: reason`` of an operating-system error (``[Errno 28] ...`` without the number)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return f"{exc.filename}: {reason}" if exc.filename else reason


def user_errors(fn: F) -> F:
    """Turn ``ValueError`` / ``UserError`` / missing files / missing optional dependencies
    raised by a command into :func:`fail` (code 2), and any other ``OSError`` (an unreadable
    file, a full disk) into one line with code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, UserError, FileNotFoundError, MissingExtra) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except OSError as exc:
            fail(os_error_text(exc), code=1)

    return wrapper  # type: ignore[return-value]


def usage_line(exc: Any, args: Sequence[str]) -> str:
    """One line for a usage error of the parser (``exc``: Click's ``UsageError``, as Typer
    raises it): the option, the value given (found in ``args``) and what is allowed, and the
    command's help to read; a message of several lines becomes one."""
    ctx = getattr(exc, "ctx", None)
    see = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    opts = list(getattr(getattr(exc, "param", None), "opts", None) or [])
    given = _given(args, opts)
    reason = str(getattr(exc, "message", "")).removeprefix("Value error, ")
    if given is not None and reason:
        return f"{opts[0]}={given!r} is not allowed: {reason[:1].lower()}{reason[1:]}{see}"
    return " ".join(exc.format_message().split()) + see


def _given(args: Sequence[str], opts: Sequence[str]) -> str | None:
    """The last value given to any of the options ``opts`` in ``args`` (``--x v`` or
    ``--x=v``), None if there is none."""
    value = None
    for i, arg in enumerate(args):
        for opt in opts:
            if arg == opt and i + 1 < len(args):
                value = args[i + 1]
            elif opt.startswith("-") and arg.startswith(opt + "="):
                value = arg[len(opt) + 1 :]
    return value
