"""Rising instances: constructors, validation messages, noise models, files, concavity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.instances import memory, read_means_file
from risingbandits.instances.families import family_instance, generate


def test_intro_means() -> None:
    inst = rb.intro(30_000)
    assert inst.means.shape == (2, 30_000)
    assert np.all(inst.means[0] == 0.4)
    assert inst.means[1, 0] == pytest.approx(1 / 20_000)
    assert inst.means[1, 19_999] == 1.0 and inst.means[1, 25_000] == 1.0
    assert inst.noise == rb.Noise("gaussian", 0.1)


def test_ltf_formula() -> None:
    inst = rb.ltf([0.5, 0.3], [100, 20], 200)
    n = np.arange(1, 201)
    np.testing.assert_allclose(inst.means[0], np.minimum(0.5, 0.005 * n))
    np.testing.assert_allclose(inst.means[1], np.minimum(0.3, 0.015 * n))


def test_from_functions_vectorised_and_scalar() -> None:
    inst = rb.from_functions([lambda n: 0.2 + 0 * n, lambda n: min(1.0, n / 10)], 20)
    assert inst.means[1, 9] == 1.0 and inst.means[0, 5] == 0.2


@pytest.mark.parametrize(
    ("means", "message"),
    [
        ([[0.1, 0.2]], "K >= 2"),
        (np.zeros((2, 0)), "T must be >= 1"),
        ([0.1, 0.2], "2-D"),
        ([[0.1, np.nan], [0.1, 0.2]], r"means\[arm 0, pull 2\] = nan is not finite"),
        ([[0.1, 0.2], [0.3, 1.5]], r"means\[arm 1, pull 2\] = 1.5 is outside the allowed range"),
        ([[0.1, 0.2], [-0.1, 0.5]], r"means\[arm 1, pull 1\] = -0.1 is outside"),
        ([[0.1, 0.2, 0.15], [0.1, 0.2, 0.3]], r"means\[arm 0\] decreases at pull 3"),
        ([["0.1", "0.2"], ["0.1", "0.2"]], r"^means has text values \(dtype <U3\): use numbers"),
        ([[False, True], [False, True]], r"^means has boolean values \(dtype bool\): use numbers"),
    ],
)
def test_validation_names_arm_and_pull(means: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rb.from_means(means)


def test_arm_names_are_a_list_of_distinct_names() -> None:
    means = [[0.1, 0.2], [0.2, 0.3]]
    with pytest.raises(ValueError, match=r"^arm_names='ab' is not allowed: use a list of names"):
        rb.from_means(means, arm_names="ab")
    with pytest.raises(ValueError, match=r"^arm_names has 'a' twice: give each arm a name of"):
        rb.from_means(means, arm_names=["a", "a"])
    with pytest.raises(ValueError, match=r"^arm_names='ab' is not allowed"):
        rb.from_functions([np.sqrt, np.sqrt], 3, arm_names="ab")
    assert rb.from_means(means, arm_names=["a", "b"]).arm_names == ("a", "b")


def test_decreasing_table_accepted_on_request() -> None:
    inst = rb.from_means([[0.1, 0.2, 0.15], [0.1, 0.2, 0.3]], require_rising=False)
    assert inst.max_horizon == 3


def test_ltf_parameter_errors() -> None:
    with pytest.raises(ValueError, match=r"b\[arm 1\] = 1.5"):
        rb.ltf([0.5, 1.5], [10, 10], 10)
    with pytest.raises(ValueError, match=r"t_sat\[arm 0\] = 0"):
        rb.ltf([0.5, 0.5], [0, 10], 10)
    with pytest.raises(ValueError, match="same length"):
        rb.ltf([0.5, 0.5], [10], 10)
    with pytest.raises(ValueError, match="T=0"):
        rb.intro(0)


def test_noise_parse_and_proxy() -> None:
    assert rb.Noise.parse("gaussian:0.2") == rb.Noise("gaussian", 0.2)
    assert rb.Noise.parse("gaussian").sigma == 0.1
    assert rb.Noise.parse("bernoulli").proxy == 0.5
    assert rb.Noise.parse("none").proxy == 0.0
    for bad in ("gauss", "gaussian:x", "bernoulli:3", "gaussian:-1"):
        with pytest.raises(ValueError, match="noise"):
            rb.Noise.parse(bad)


@pytest.mark.parametrize(
    "sigma",
    [True, "0.1", None, [0.1], 1j, float("nan"), 10**400],
    ids=["True", "text", "None", "list", "complex", "nan", "10**400"],
)
def test_a_gaussian_sigma_that_is_not_a_finite_number_is_one_line(sigma: object) -> None:
    """True was taken as sigma 1; text, None or a list raised a TypeError from ``>=``."""
    with pytest.raises(ValueError, match=r"^noise sigma=.* is not allowed: use a finite sigma"):
        rb.Noise("gaussian", sigma)  # type: ignore[arg-type]


def test_concavity_report() -> None:
    inst = rb.from_means([[0.1, 0.3, 0.4, 0.45], [0.1, 0.15, 0.3, 0.6]])
    report = inst.concavity_report()
    assert report.arms[0].concave and not report.arms[1].concave
    assert report.arms[1].violations == 2
    assert not report.all_concave
    assert rb.intro(100).concavity_report().all_concave


def test_read_means_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    table = np.array([[0.1, 0.2, 0.3], [0.2, 0.2, 0.4]])
    np.save(tmp_path / "m.npy", table)
    np.savez(tmp_path / "m.npz", a=table[0], b=table[1])
    np.savetxt(tmp_path / "m.csv", table, delimiter=",")
    for name in ("m.npy", "m.npz", "m.csv"):
        got, names = read_means_file(tmp_path / name)
        np.testing.assert_allclose(got, table)
        assert names == (("a", "b") if name == "m.npz" else ())
    (tmp_path / "bad.csv").write_text("0.1,0.2\nfoo,bar\n")
    with pytest.raises(ValueError, match="cannot be read"):
        read_means_file(tmp_path / "bad.csv")
    with pytest.raises(ValueError, match="does not exist"):
        read_means_file(tmp_path / "missing.npy")
    (tmp_path / "m.txt").write_text("1")
    with pytest.raises(ValueError, match="suffix"):
        read_means_file(tmp_path / "m.txt")


def test_curves_read_only_the_arms_asked_for(tmp_path: Path) -> None:
    from risingbandits.instances.families import read_curves
    from risingbandits.instances.files import read_npz

    curves = {name: np.linspace(0.1, 0.2 + k / 10, 5) for k, name in enumerate("abc")}
    np.savez(tmp_path / "curves.npz", **curves)
    assert set(read_npz(tmp_path / "curves.npz", "curves", keys=("c", "a", "z"))) == {"a", "c"}
    table, names = read_curves(tmp_path, ("c", "a"))
    assert names == ("c", "a") and np.array_equal(table, np.vstack([curves["c"], curves["a"]]))
    listed = r"arm\(s\) \['z'\] not found; available: \['a', 'b', 'c'\]"
    with pytest.raises(ValueError, match=listed):
        read_curves(tmp_path, ("a", "z"))


def test_families_are_reproducible_by_name() -> None:
    a = generate("ltf-v1", 4, seed=3, horizon=1000)
    b = family_instance("ltf-v1", 2, seed=3, horizon=1000)
    assert a[2].name == b.name == "ltf-v1/3/2"
    np.testing.assert_array_equal(a[2].means, b.means)
    assert a[0].name != a[1].name
    with pytest.raises(ValueError, match="family='nope'"):
        generate("nope", 1)


# -- the memory available (instances/memory.py) ---------------------------------------------------


def test_a_cgroup_limit_bounds_the_memory_available(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a container MemAvailable is the host's: the cgroup's limit minus its anonymous memory
    (its page cache can be reclaimed) is what is left; no limit ("max") leaves the system's."""
    monkeypatch.setattr(memory, "CGROUP", tmp_path)
    (tmp_path / "memory.max").write_text("1000000000\n")
    (tmp_path / "memory.stat").write_text("anon 400000000\nfile 500000000\n")
    assert memory.limits_left()[0] == 600_000_000
    assert memory.available_memory() == 600_000_000
    (tmp_path / "memory.max").write_text("max\n")
    assert memory.limits_left()[0] is None
    assert memory.available_memory() > 600_000_000


def test_an_address_space_limit_bounds_the_memory_available(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ulimit -v` (RLIMIT_AS) was ignored: a table refused by nothing failed with MemoryError."""
    monkeypatch.setattr(memory, "CGROUP", tmp_path)  # no cgroup limit here
    status = Path("/proc/self/status").read_text().splitlines()
    mapped = next(int(x.split()[1]) * 1024 for x in status if x.startswith("VmSize:"))
    limit = mapped + 10**9  # 1 GB more than this process maps already
    monkeypatch.setattr(memory.resource, "getrlimit", lambda which: (limit, limit))
    left = memory.limits_left()[1]
    assert left is not None and 0 < left < 2 * 10**9  # about 1 GB (what it maps may move)
    assert memory.available_memory() == min(left, memory._system_memory() or left)
    with pytest.raises(ValueError, match="horizon T=50,000,000 is not allowed"):
        memory.check_table_size(2, 50_000_000)  # 2.4 GB while built: fits 24 GiB, not 1 GB
