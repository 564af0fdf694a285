"""SIGTERM and SIGHUP stop a command the way Ctrl-C does.

:func:`stop_on_signals` (installed by the console script) turns the first SIGTERM or SIGHUP into
:class:`Stopped`, a ``KeyboardInterrupt``: a running sweep then keeps the parts already written,
stops its workers and says how to resume, in one line. The exit code is 128 + the signal number
(130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), as a shell reports a process ended by that
signal. A second signal ends the process at once (its pool workers still stop, see
:mod:`risingbandits.experiments.watchdog`).
"""

from __future__ import annotations

import signal
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """The process received ``signum`` (SIGTERM or SIGHUP)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: FrameType | None) -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    raise Stopped(signum)


def stop_on_signals() -> None:
    """Raise :class:`Stopped` in the main thread on the first SIGTERM or SIGHUP."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _stop)


def interruption(exc: KeyboardInterrupt) -> tuple[str, int]:
    """How to name the interruption in a message, and the exit code it gives."""
    if isinstance(exc, Stopped):
        return f"stopped by {signal.Signals(exc.signum).name}", 128 + exc.signum
    return "interrupted", 128 + signal.SIGINT
