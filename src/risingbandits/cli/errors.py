"""User errors in the CLI: one clear line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import functools
import inspect
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

import typer
from typer.models import ArgumentInfo, OptionInfo

from risingbandits.cli.signals import interruption
from risingbandits.extras import MissingExtra

F = TypeVar("F", bound=Callable[..., Any])

LIBRARY_NAMES = {"T": "horizon", "policy": "policies"}
"""Library keywords that a command's option may spell differently (``T=`` is ``--horizon``)."""
_FIELD = re.compile(r"^((?:[a-z0-9-]+: )?)(\w+)(?:=| file (?=['\"]))")
"""A refusal's field at its start, maybe after a policy's name: ``name=`` (``cure-ucb:
preset='x'``) or ``name file 'path'`` (``means file 'm.csv'``)."""


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
    file, a full disk) into one line with code 1. Ctrl-C, SIGTERM and SIGHUP that the command
    does not handle itself are one line too (``interrupted``, ``stopped by SIGTERM``) with the
    code of :mod:`~risingbandits.cli.signals` (Typer's own handling exits 130 without a word,
    also for SIGTERM)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ValueError, UserError, FileNotFoundError, MissingExtra) as exc:
            line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            fail(as_option(line, option_names(fn)))
        except OSError as exc:
            fail(os_error_text(exc), code=1)
        except KeyboardInterrupt as exc:
            what, code = interruption(exc)
            typer.echo(what, err=True)
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


def option_names(fn: Callable[..., Any]) -> dict[str, str]:
    """The command ``fn``'s options by parameter name: ``{"budget_kind": "--budget-kind",
    "as_json": "--json"}`` (arguments left out)."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):
        hints = {}
    names = {}
    for name, param in inspect.signature(fn).parameters.items():
        infos = [*getattr(hints.get(name), "__metadata__", ()), param.default]
        info = next((i for i in infos if isinstance(i, OptionInfo | ArgumentInfo)), None)
        if isinstance(info, ArgumentInfo) or (info is None and param.default is param.empty):
            continue
        decls = [d for d in getattr(info, "param_decls", None) or () if d.startswith("--")]
        names[name] = decls[0] if decls else "--" + name.replace("_", "-")
    return names


def as_option(line: str, options: Mapping[str, str]) -> str:
    """A library's refusal ``seeds=0 is not allowed ...`` (or ``means file 'm.csv' ...``) as
    the command line says it, ``--seeds=0 is not allowed ...`` (``--means='m.csv' ...``), when
    the field is one of the command's ``options`` (by parameter name, or as
    :data:`LIBRARY_NAMES` spells it); other lines unchanged."""
    match = _FIELD.match(line)
    if match is None:
        return line
    option = options.get(match[2]) or options.get(LIBRARY_NAMES.get(match[2], ""))
    return line if option is None else f"{match[1]}{option}={line[match.end() :]}"


def empty_value(args: Sequence[str]) -> str | None:
    """The refusal of the first empty value in ``args`` (``--out ''``, ``--out=``: a path would
    be the working directory, a name the default), None if there is none (after ``--``, the
    arguments are not looked at)."""
    for i, arg in enumerate(args):
        if arg == "--":
            return None
        option = arg[:-1] if arg.startswith("--") and arg.endswith("=") else None
        if arg == "" and i and args[i - 1].startswith("-") and "=" not in args[i - 1]:
            option = args[i - 1]
        if option is not None:
            return f"{option}='' is not allowed: give a non-empty value"
        if arg == "":
            return "an empty argument ('') is not allowed: give a value"
    return None


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
