"""Python's signal handlers around a block of the integrations.

* :func:`signals_deferred`: Ctrl-C, SIGTERM and SIGHUP wait until the block is done, then go to
  their own handler (``risingbandits select`` records a score and writes its checkpoint in one
  such block, so the file holds every score the selector recorded).
* :func:`handlers_given_back`: the block may install handlers of its own; the ones found are
  put back at its end (Ray Tune 2.60's ``Tuner.fit`` installs SIGINT and SIGUSR1 handlers and
  leaves them, so a later Ctrl-C in the process only logged a warning).
* :func:`ignored_by_children`: a signal ignored for the block, so the processes started in it
  keep ignoring it (a Python handler is reset when a child starts its program; ignoring is not).

Python runs signal handlers in the main thread only: elsewhere both run the block as it is.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals :func:`signals_deferred` holds back."""
TAKEN_BY_TUNE = (signal.SIGINT, signal.SIGUSR1)
"""The signals Ray Tune's ``Tuner.fit`` takes (``ray.tune.tune._setup_signal_catching``)."""


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold back :data:`STOPPING` (those with a Python handler) for the block, then deliver the
    first one that came to its own handler: the block is never cut in two."""
    if not _main_thread():
        yield
        return
    held: list[int] = []
    try:
        with handlers_given_back(STOPPING):
            for sig in STOPPING:
                if callable(signal.getsignal(sig)):
                    signal.signal(sig, lambda signum, frame: held.append(signum))
            yield
    finally:
        if held:  # also when the block raised: the signal is not lost
            signal.raise_signal(held[0])


@contextlib.contextmanager
def ignored_by_children(sig: signal.Signals) -> Iterator[None]:
    """``sig`` ignored in the block (this process loses it there), and in the processes started
    in it for good; its handler put back at the end."""
    with handlers_given_back((sig,)):
        if _main_thread():
            signal.signal(sig, signal.SIG_IGN)
        yield


@contextlib.contextmanager
def handlers_given_back(signals: tuple[signal.Signals, ...]) -> Iterator[None]:
    """Put back, at the end of the block, the handlers ``signals`` had at its start."""
    if not _main_thread():
        yield
        return
    found = {sig: signal.getsignal(sig) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in found.items():
            if handler is not None:  # None: a handler not set from Python, left alone
                signal.signal(sig, handler)
