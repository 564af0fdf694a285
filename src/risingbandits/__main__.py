"""``python -m risingbandits`` runs the command line."""

from risingbandits.cli import main

main()
