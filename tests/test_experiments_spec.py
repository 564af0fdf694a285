"""Sweep specs: TOML + pydantic validation, registry checks, ids and the spec hash."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from risingbandits.experiments import SpecError, load_spec, make_plan, parse_spec

REPO = Path(__file__).resolve().parents[1]

TINY = """
description = "tiny"
sweep_seed = 3
seeds = 2
horizons = [300, 120]

[[instances]]
family = "ltf-v1"
count = 2
generator_seed = 0
params = { t_sat_scale = 300 }

[[instances]]
named = "intro"

[[policies]]
name = "cure-ucb"
preset = "ltf"

[[policies]]
name = "ucb1"

[[policies]]
name = "cure-ucb"
params = { sigma = 1.0 }
label = "cure-ucb[sigma=1]"
"""


def test_tiny_spec_resolves_instances_policies_and_horizons() -> None:
    spec = parse_spec(TINY)
    assert spec.horizons == (120, 300)
    assert [r.id for r in spec.instances] == ["ltf-v1/0/0", "ltf-v1/0/1", "intro"]
    assert [p.label for p in spec.policies] == ["cure-ucb", "ucb1", "cure-ucb[sigma=1]"]
    assert spec.policies[0].params == {"eps": 0.25, "sigma": 0.1, "tie_break": "random"}
    assert spec.policies[2].params["sigma"] == 1.0
    assert spec.policies[0].uses_horizon and not spec.policies[1].uses_horizon
    inst = spec.instances[0].build(300)
    assert inst.name == "ltf-v1/0/0" and inst.max_horizon == 300


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("seeds = 2", "seedz = 2"), "spec: unknown key 'seedz': allowed keys are description"),
        (("seeds = 2", "seeds = 0"), "seeds: Input should be greater than or equal to 1 (got 0)"),
        (("[300, 120]", "[300, -1]"), "horizons[1]: Input should be greater than or equal to 1"),
        (("[300, 120]", "[]"), "horizons: List should have at least 1 item"),
        (("sweep_seed = 3", "sweep_seed = 'x'"), "sweep_seed: Input should be a valid integer"),
        (('named = "intro"', 'named = "intro"\nlabel = 1'), "instances[1]: unknown key 'label'"),
        (('named = "intro"', 'named = "nope"'), "instances[1].named: instance='nope' is not"),
        (('"ltf-v1"', '"ltf-v9"'), "instances[0].family: family='ltf-v9' is not allowed"),
        (('named = "intro"', 'named = "intro"\ncount = 2'), "count is only allowed with family"),
        (("count = 2\n", ""), "instances[0]: count is required with family"),
        (("t_sat_scale", "scale"), "instances[0].params.scale: unknown parameter of ltf-v1"),
        (("= 300 }", "= nan }"), "instances[0].params.t_sat_scale: t_sat_scale=nan is not"),
        (("= 300 }", "= -5 }"), "t_sat_scale=-5 is not allowed for ltf-v1: use a finite number"),
        (("= 300 }", '= "abc" }'), "instances[0].params.t_sat_scale: t_sat_scale='abc' is not"),
        (("300 }", "300, costs = 3 }"), "instances[0].params.costs: costs=3 is not allowed"),
        (("seeds = 2", "seeds = true"), "seeds: Input should be a valid integer (got True)"),
        (("[300, 120]", '["300"]'), "horizons[0]: Input should be a valid integer (got '300')"),
        (("count = 2", "count = true"), "instances[0].count: Input should be a valid integer"),
        (('named = "intro"', 'named = "intro"\nmeans_file = "x.npy"'), "give exactly one of"),
        (
            ('named = "intro"', 'noise = "laplace"'),
            "instances[1].noise: noise='laplace' is not allowed",
        ),
        (('preset = "ltf"', 'preset = "fast"'), "policies[0].preset: preset='fast' is not allowed"),
        (('name = "ucb1"', 'name = "ucb2"'), "policies[1].name: policy='ucb2' is not allowed"),
        (("sigma = 1.0", "eps = 0.7"), "policies[2].params.eps: cure-ucb: eps=0.7 is not allowed"),
        (("sigma = 1.0", "epsilon = 0.1"), "policies[2].params.epsilon: unknown parameter"),
        (('label = "cure-ucb[sigma=1]"', ""), "policies[2].label: 'cure-ucb' is already used"),
        (
            ("horizons", "noise = 'gaussian:x'\nhorizons"),
            "noise: noise='gaussian:x' is not allowed",
        ),
        (("horizons = [300, 120]", "horizons = [300"), "spec is not valid TOML"),
    ],
)
def test_mistakes_name_the_key_and_what_is_allowed(edit: tuple[str, str], expected: str) -> None:
    text = TINY.replace(*edit, 1)
    assert text != TINY
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    message = str(err.value)
    assert expected in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("family", "params", "expected"),
    [
        ("concave-v2", "scale = 100", "params.scale: scale=100 is not allowed for concave-v2: use"),
        (
            "concave-v1",
            "scale = 1e300",
            "params.scale: scale=1e+300 is not allowed for concave-v1: use a number of pulls from "
            "25,000 to 10,000,000",
        ),
        ("imdb-v1", 'arms = "lr_0.003"', "params.arms: arms='lr_0.003' is not allowed for imdb-v1"),
        ("imdb-v1", "curves_dir = 5", "params.curves_dir: curves_dir=5 is not allowed"),
    ],
)
def test_family_parameter_values_name_the_parameter(
    family: str, params: str, expected: str
) -> None:
    """Before: brentq's "f(a) and f(b) must have different signs", a MemoryError, a string read
    as a list of one-letter arms, a TypeError; each named ``instances[0].family``."""
    text = TINY.replace('"ltf-v1"', f'"{family}"').replace("t_sat_scale = 300", params)
    text = text.replace("count = 2", "count = 1")
    with pytest.raises(SpecError, match="^" + re.escape(f"instances[0].{expected}")):
        parse_spec(text)


def test_unknown_family_lists_the_families() -> None:
    with pytest.raises(
        SpecError, match=r"use one of ltf-v1, concave-v1, concave-v2, imdb-v1, lcdb-v1, live-v1$"
    ):
        parse_spec(TINY.replace('"ltf-v1"', '"ltf-v9"'))


def test_non_random_family_needs_count_one() -> None:
    text = TINY.replace('family = "ltf-v1"\ncount = 2', 'family = "imdb-v1"\ncount = 3')
    text = text.replace("params = { t_sat_scale = 300 }\n", "")
    with pytest.raises(SpecError, match=r"instances\[0\]: count=3 is not allowed.*count = 1"):
        parse_spec(text)


def test_string_parameter_values_are_parsed_like_the_cli() -> None:
    spec = parse_spec(TINY.replace("sigma = 1.0", 'eps = "1/32", sigma = "auto"'))
    assert spec.policies[2].params["eps"] == 1 / 32
    assert spec.policies[2].params["sigma"] == "auto"


def test_duplicate_instance_ids_are_refused() -> None:
    text = TINY.replace('named = "intro"', 'named = "ltf-v1/0/1"')
    with pytest.raises(SpecError, match=r"instances\[1\]: instance id 'ltf-v1/0/1' also comes"):
        parse_spec(text)


def test_hash_ignores_formatting_but_not_values() -> None:
    base = parse_spec(TINY).hash
    reformatted = "# a comment\n" + TINY.replace("horizons = [300, 120]", "horizons=[120,300]")
    assert parse_spec(reformatted).hash == base
    assert parse_spec(TINY.replace('"tiny"', '"renamed"')).hash == base
    assert parse_spec(TINY.replace("sweep_seed = 3", "sweep_seed = 4")).hash != base
    # a preset spelled out as parameters resolves to the same policy: same hash
    spelled = TINY.replace('preset = "ltf"', "params = { eps = 0.25, sigma = 0.1 }")
    assert parse_spec(spelled).hash == base


def test_means_file_is_relative_to_the_spec_and_hashed_by_content(tmp_path: Path) -> None:
    table = np.vstack([np.linspace(0.1, 0.5, 400), np.linspace(0.2, 0.3, 400)])
    np.save(tmp_path / "curves.npy", table)
    spec_file = tmp_path / "s.toml"
    text = TINY.replace('named = "intro"', 'means_file = "curves.npy"\nname = "mine"')
    spec_file.write_text(text)
    spec = load_spec(spec_file)
    ref = spec.instances[-1]
    assert ref.id == "mine" and Path(ref.source) == tmp_path / "curves.npy"
    inst = ref.build(300)
    assert inst.n_arms == 2 and np.array_equal(inst.means, table[:, :300])
    first = spec.hash
    np.save(tmp_path / "curves.npy", table * 0.5)
    assert load_spec(spec_file).hash != first


def test_means_file_shorter_than_the_horizon_is_refused(tmp_path: Path) -> None:
    np.save(tmp_path / "short.npy", np.full((2, 100), 0.5))
    text = TINY.replace('named = "intro"', 'means_file = "short.npy"')
    with pytest.raises(SpecError, match=r"instances\[1\]\.means_file: .*has 100 pulls per arm"):
        parse_spec(text, tmp_path)


def test_missing_spec_file_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"spec file .*nope.toml.* cannot be read"):
        load_spec(tmp_path / "nope.toml")


@pytest.mark.parametrize("path", sorted((REPO / "examples").glob("*.toml")), ids=lambda p: p.name)
def test_example_specs_are_valid(path: Path, imdb_curves_dir: Path) -> None:
    spec = load_spec(path)
    plan = make_plan(spec)
    assert plan.n_cells == len(spec.instances) * len(spec.policies) * len(spec.horizons) * (
        spec.seeds
    )


def test_instances_are_checked_once_per_spec_within_a_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from risingbandits.experiments import spec as spec_module

    table = np.vstack([np.linspace(0.1, 0.5, 400), np.linspace(0.2, 0.3, 400)])
    np.save(tmp_path / "curves.npy", table)
    text = TINY.replace('named = "intro"', 'means_file = "curves.npy"\nname = "mine"')
    checks: list[Path] = []
    check = spec_module._instance_refs

    def counted(model: Any, base: Path) -> Any:
        checks.append(base)
        return check(model, base)

    monkeypatch.setattr(spec_module, "_instance_refs", counted)
    first = parse_spec(text, tmp_path)
    with spec_module.instances_checked_once():
        inside = [parse_spec(text, tmp_path) for _ in range(3)]
        with spec_module.instances_checked_once():  # nested: the same
            inside.append(parse_spec(text, tmp_path / ".." / tmp_path.name))
        assert len(checks) == 2  # one check outside, one for the four parses inside
        assert all(s.instances == first.instances and s.hash == first.hash for s in inside)
    np.save(tmp_path / "curves.npy", table * 0.5)  # outside a block, every parse checks
    assert parse_spec(text, tmp_path).hash != first.hash and len(checks) == 3
