"""Restart schedules of the restarting policies: periodic restarts and random restarts.

Rexp3 (Besbes, Gur, Zeevi 2014) restarts Exp3 after every batch of Delta_T rounds; Ser4
(Allesiardo, Féraud, Maillard 2017) resets its elimination with probability phi at the end of
each of its rounds. A :class:`RestartClock` holds the schedule and a record of the restarts
(how many, and the round that ended with the last one); a policy asks it whether to restart
and then resets its own statistics.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.machinery.rng import rng_uniform


class RestartClock(NamedTuple):
    """A restart schedule and its record.

    ``period``: restart after every ``period`` rounds (0: never); ``prob``: probability of a
    random restart at each check (0: never); ``restarts[0]``: restarts so far; ``last[0]``: the
    round that ended with the last restart (0: none yet).
    """

    period: int
    prob: float
    restarts: np.ndarray
    last: np.ndarray


def new_restart_clock(period: int = 0, prob: float = 0.0) -> RestartClock:
    """A clock that has not restarted yet."""
    return RestartClock(int(period), float(prob), np.zeros(1, np.int64), np.zeros(1, np.int64))


@helper
def _record(clock: RestartClock, t: int) -> bool:
    clock.restarts[0] += 1
    clock.last[0] = t
    return True


@helper
def periodic_restart(clock: RestartClock, t: int) -> bool:
    """Whether round ``t`` (1-based) ends a period: t = period, 2 period, ... (recorded)."""
    if clock.period > 0 and t % clock.period == 0:
        return _record(clock, t)
    return False


@helper
def random_restart(clock: RestartClock, t: int, rng: np.ndarray) -> bool:
    """A restart with probability ``prob`` at the end of round ``t`` (recorded); one uniform
    draw from ``rng`` when prob > 0, none otherwise."""
    if clock.prob > 0.0 and rng_uniform(rng) < clock.prob:
        return _record(clock, t)
    return False
