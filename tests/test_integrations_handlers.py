"""Signal handlers around a block: held back until it is done, or given back at its end."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from risingbandits.integrations.handlers import handlers_given_back, signals_deferred


class Interrupted(Exception):
    pass


def raising(signum: int, frame: object) -> None:
    raise Interrupted(signum)


@pytest.fixture
def handlers() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Interrupted` for the test (Python's own handlers may be
    another library's in a test worker), SIGUSR1 is ignored; all three are put back after."""
    found = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)}
    signal.signal(signal.SIGINT, raising)
    signal.signal(signal.SIGTERM, raising)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    yield
    for sig, handler in found.items():
        signal.signal(sig, handler)


def test_a_signal_in_the_block_comes_after_it(handlers: None) -> None:
    done = []
    with pytest.raises(Interrupted) as raised, signals_deferred():
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        done.append("the rest of the block")
    assert done == ["the rest of the block"]
    assert raised.value.args == (signal.SIGTERM,)  # the first that came
    assert signal.getsignal(signal.SIGINT) is raising
    assert signal.getsignal(signal.SIGTERM) is raising


def test_a_signal_held_is_delivered_also_when_the_block_raises(handlers: None) -> None:
    with pytest.raises(Interrupted) as raised, signals_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        raise ValueError("the block's own error")
    assert isinstance(raised.value.__context__, ValueError)


def test_a_block_without_signals_changes_nothing(handlers: None) -> None:
    with signals_deferred():
        value = 1
    assert value == 1 and signal.getsignal(signal.SIGINT) is raising


def test_outside_the_main_thread_the_block_runs_as_it_is(handlers: None) -> None:
    ran: list[bool] = []

    def block() -> None:
        with signals_deferred(), handlers_given_back((signal.SIGINT,)):
            ran.append(True)

    thread = threading.Thread(target=block)
    thread.start()
    thread.join()
    assert ran == [True]


def test_handlers_taken_in_the_block_are_given_back(handlers: None) -> None:
    with handlers_given_back((signal.SIGINT, signal.SIGUSR1)):
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as Tuner.fit takes them
        signal.signal(signal.SIGUSR1, raising)
    assert signal.getsignal(signal.SIGINT) is raising
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_IGN


def test_local_ray_gives_back_the_handlers_tune_takes(
    handlers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray.tune")
    from risingbandits.integrations import ray_tune

    monkeypatch.setattr(ray_tune.ray, "init", lambda **options: None)
    monkeypatch.setattr(ray_tune.ray, "shutdown", lambda: None)
    with ray_tune.local_ray(num_cpus=1):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGUSR1, raising)
    assert signal.getsignal(signal.SIGINT) is raising
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_IGN
