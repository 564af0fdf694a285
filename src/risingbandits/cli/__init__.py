"""The ``risingbandits`` command line: one Typer app, one module per command group."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from risingbandits.cli import (
    data,
    demo,
    explain,
    modelselect,
    reproduce,
    run,
    select,
    sweep,
    theory,
)
from risingbandits.cli.errors import empty_value, usage_line
from risingbandits.cli.signals import stop_on_signals


class OneLineErrors(TyperGroup):
    """The app's group: a usage error of the parser (an unknown option, a value that is not a
    number) is one line ``error: ...`` with exit code 2, as every other refusal
    (:func:`~risingbandits.cli.errors.usage_line`), not Typer's box of several lines; so is an
    empty value (:func:`~risingbandits.cli.errors.empty_value`). A group called without
    arguments still shows its help."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        options = {"prog_name": prog_name, "complete_var": complete_var, **extra}
        options["windows_expand_args"] = windows_expand_args
        if not standalone_mode:
            return super().main(argv, standalone_mode=False, **options)
        if (empty := empty_value(argv)) is not None:
            typer.echo(f"error: {empty}", err=True)
            sys.exit(2)
        try:
            code = super().main(argv, standalone_mode=False, **options)
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        except typer.TyperException as exc:  # Click's exceptions (Typer's copy of Click)
            if "\n" in exc.format_message().strip():  # a group's help, asked by no arguments
                exc.show()  # type: ignore[attr-defined]
            else:
                typer.echo(f"error: {usage_line(exc, argv)}", err=True)
            sys.exit(getattr(exc, "exit_code", 2))
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrors,
    name="risingbandits",
    help="Rising multi-armed bandits with a known horizon: CURE-UCB, baselines, simulator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"risingbandits {version('risingbandits')}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_show_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Rising multi-armed bandits with a known horizon: CURE-UCB, baselines, simulator."""


app.command("run")(run.run)
app.command("list")(run.list_items)
app.command("demo")(demo.demo)
app.command("explain")(explain.explain_command)
app.command("reproduce")(reproduce.reproduce)
app.command("select")(select.select)
app.add_typer(sweep.app, name="sweep")
app.add_typer(modelselect.app, name="modelselect")
app.add_typer(data.app, name="data")
app.add_typer(theory.app, name="theory")


def main() -> None:
    """Console-script entry point (SIGTERM and SIGHUP stop a command like Ctrl-C)."""
    stop_on_signals()
    app()
