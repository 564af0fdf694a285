"""The ``risingbandits`` command line: one Typer app, one module per command group."""

from __future__ import annotations

from importlib.metadata import version
from typing import Annotated

import typer

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
from risingbandits.cli.signals import stop_on_signals

app = typer.Typer(
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
