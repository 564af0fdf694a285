"""User errors in the CLI: one clear line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
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
