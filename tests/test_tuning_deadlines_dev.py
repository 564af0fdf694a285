"""``tuning/deadlines_dev.py --draws``: the dev tasks with several candidate draws, pooled, each
(instance, draw) its own unit of the intervals; a bad ``--draws`` is one parser error."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from conftest import load_script


def deadlines_dev() -> Any:
    return load_script("tuning/deadlines_dev.py", "deadlines_dev")


def test_draws_are_distinct_seeds_and_a_bad_value_is_named() -> None:
    script = deadlines_dev()
    parser = argparse.ArgumentParser()
    assert script.draw_list(parser, "0") == (0,)
    assert script.draw_list(parser, "0,1,2,3,1") == (0, 1, 2, 3)
    assert script.draw_list(parser, "0-3") == (0, 1, 2, 3)
    for bad in ("x", "-1", "", "0,,1"):
        with pytest.raises(SystemExit) as raised:
            script.draw_list(parser, bad)
        assert raised.value.code == 2


def test_pooled_draws_name_each_instance_with_its_draw() -> None:
    script = deadlines_dev()
    task = {"instance": ["lcdb-v1/0/2", "lcdb-v1/0/2"], "final_gap": [0.1, 0.2]}
    assert script.pooled(task, 0, 1) is task  # one draw: the rows as kept
    named = script.pooled(task, 3, 4)
    assert named["instance"] == ["lcdb-v1/0/2@draw3"] * 2 and named["final_gap"] == [0.1, 0.2]
    assert task["instance"] == ["lcdb-v1/0/2"] * 2  # the kept rows are not changed
