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


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with code 2."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def user_errors(fn: F) -> F:
    """Turn ``ValueError`` / ``UserError`` / missing files / missing optional dependencies
    raised by a command into :func:`fail`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, UserError, FileNotFoundError, MissingExtra) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    return wrapper  # type: ignore[return-value]
