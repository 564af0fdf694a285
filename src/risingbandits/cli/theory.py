"""``risingbandits theory``: checks of the paper's claims (dominance, regret bound, Section 3.1)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from risingbandits.analysis import MeanCI, finite_or_none, mean_ci
from risingbandits.cli.errors import UserError, user_errors
from risingbandits.instances import Noise, RisingInstance, ltf
from risingbandits.instances.named import named_instance
from risingbandits.outputs import new_file
from risingbandits.policies import make_policy
from risingbandits.simulate import simulate_horizons
from risingbandits.theory import bound as bounds
from risingbandits.theory import dominance as dom
from risingbandits.theory import horizon_awareness as ha
from risingbandits.theory.exact import MAX_EXACT_HORIZON, ExactLTF, as_fraction

app = typer.Typer(
    help="Check the paper's theory: LTF dominance (Thm. 5.2), regret bound (Thm. 5.4), Sec. 3.1.",
    no_args_is_help=True,
)

LtfB = Annotated[
    str | None, typer.Option("--ltf-b", help="LTF caps b_i in (0, 1), comma-separated (0.5,3/10).")
]
LtfTSat = Annotated[
    str | None,
    typer.Option("--ltf-t-sat", help="LTF saturation times t_sat_i > 0, comma-separated."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _split(text: str, option: str, items_are: str = "numbers") -> list[str]:
    items = [x.strip() for x in text.split(",")]
    if not all(items):
        raise UserError(f"{option}={text!r} is not allowed: use comma-separated {items_are}")
    return items


def _exact_ltf(ltf_b: str | None, ltf_t_sat: str | None) -> ExactLTF:
    if ltf_b is None or ltf_t_sat is None:
        raise UserError("give both --ltf-b and --ltf-t-sat (one value per arm)")
    b = _split(ltf_b, "--ltf-b")
    t_sat = _split(ltf_t_sat, "--ltf-t-sat")
    for option, values in (("--ltf-b", b), ("--ltf-t-sat", t_sat)):
        for i, value in enumerate(values):  # a value that is no number before a count of them
            as_fraction(value, f"{option}[arm {i}]")
    if len(b) != len(t_sat):
        raise UserError(
            f"--ltf-b has {len(b)} value(s) and --ltf-t-sat has {len(t_sat)}: give one per arm"
        )
    return ExactLTF.create(b, t_sat)


def _positive(value: int, option: str, low: int = 1, high: int | None = None) -> int:
    if value < low or (high is not None and value > high):
        allowed = f">= {low}" if high is None else f"in {low}..{high:,}"
        raise UserError(f"{option}={value} is not allowed: use an integer {allowed}")
    return value


# -- dominance -------------------------------------------------------------------------------


def _print_case(console: Console, case: dom.DominanceCase) -> None:
    inst = case.instance
    console.print(f"deterministic LTF, K = {inst.n_arms}: {inst}   T = {case.horizon:,}")
    for label, regret, pulls in (
        ("CURE-UCB (h = 1)", case.regret_cure, case.pulls_cure),
        ("R-ed-UCB (h = 1)", case.regret_red, case.pulls_red),
    ):
        console.print(
            f"  {label}  regret {float(regret):.6g} (exact {regret})  pulls {list(pulls)}"
        )
    verdict = "holds" if case.holds else f"FAILS (CURE-UCB worse by {case.excess})"
    console.print(f"Reg(CURE-UCB) <= Reg(R-ed-UCB): {verdict}")


def _line(case: dom.DominanceCase) -> str:
    return (
        f"{case.instance}  T={case.horizon}  Reg cure={case.regret_cure}  "
        f"Reg red={case.regret_red}  excess={float(case.excess):.6g}"
    )


def _print_search(console: Console, report: dom.SearchReport) -> None:
    table = Table(
        title=f"dominance search (seed {report.seed}, max horizon {report.max_horizon:,})"
    )
    for col in ("family", "instances", "cases", "violations"):
        table.add_column(col, justify="left" if col == "family" else "right")
    data = report.to_dict()
    for fam, row in data["by_family"].items():
        table.add_row(fam, f"{row['instances']:,}", f"{row['cases']:,}", f"{row['violations']:,}")
    table.add_row(
        "all", f"{data['instances']:,}", f"{data['cases']:,}", f"{len(report.violations):,}"
    )
    console.print(table)
    if not report.violations:
        console.print(f"no violation found in {report.tried:,} cases")
        return
    console.print(f"{len(report.violations):,} violation(s) in {report.tried:,} cases:")
    for v in report.violations:
        console.print(f"  {v.family:<12} {_line(v.case)}")
    shrunk = report.minimal_counterexamples()
    if shrunk:
        console.print("minimal counterexamples (shrunk with Hypothesis, exact):")
        for v, horizons in shrunk:
            assert v.minimal is not None
            origin = ", ".join(str(h) for h in horizons)
            console.print(f"  {v.family:<12} {_line(v.minimal)}  (from T={origin})")


def _search(
    instances: int, max_horizon: int, seed: int, shrink: int, quiet: bool
) -> dom.SearchReport:
    """Run the search; Hypothesis's cache goes to a temporary directory, not the cwd."""
    from hypothesis.configuration import set_hypothesis_home_dir

    with tempfile.TemporaryDirectory(prefix="risingbandits-hypothesis-") as home:
        set_hypothesis_home_dir(home)
        try:
            if quiet:
                return dom.search(instances, max_horizon, seed, shrink=shrink)
            with Console(stderr=True).status("searching...") as status:
                return dom.search(
                    instances,
                    max_horizon,
                    seed,
                    shrink=shrink,
                    progress=lambda d, n: status.update(f"searching: instance {d}/{n}"),
                )
        finally:
            set_hypothesis_home_dir(None)


@app.command("dominance")
@user_errors
def dominance(
    ltf_b: LtfB = None,
    ltf_t_sat: LtfTSat = None,
    horizon: Annotated[
        int | None,
        typer.Option(help=f"Horizon T of the single check (at most {MAX_EXACT_HORIZON:,})."),
    ] = None,
    search: Annotated[
        bool, typer.Option("--search", help="Search random/adversarial instances instead.")
    ] = False,
    instances: Annotated[
        int, typer.Option(help=f"Search: number of instances (at most {dom.MAX_INSTANCES:,}).")
    ] = 200,
    max_horizon: Annotated[
        int,
        typer.Option(
            help=f"Search: largest horizon (paper scale: 50,000; at most {MAX_EXACT_HORIZON:,})."
        ),
    ] = dom.PAPER_HORIZON,
    seed: Annotated[int, typer.Option(help="Search: generator seed.")] = 0,
    shrink: Annotated[
        int, typer.Option(help="Search: violations to shrink to minimal counterexamples.")
    ] = 3,
    as_json: AsJson = False,
) -> None:
    """Thm. 5.2: exact regrets of deterministic CURE-UCB and R-ed-UCB on LTF, or a search."""
    console = Console(soft_wrap=True)
    if search:
        if ltf_b is not None or ltf_t_sat is not None or horizon is not None:
            raise UserError("--search draws its own instances: drop --ltf-b/--ltf-t-sat/--horizon")
        _positive(instances, "--instances", high=dom.MAX_INSTANCES)
        _positive(max_horizon, "--max-horizon", high=MAX_EXACT_HORIZON)
        _positive(seed, "--seed", 0)
        _positive(shrink, "--shrink", 0)
        report = _search(instances, max_horizon, seed, shrink, as_json)
        if as_json:
            typer.echo(json.dumps(report.to_dict()))
            return
        _print_search(console, report)
        return
    inst = _exact_ltf(ltf_b, ltf_t_sat)
    if horizon is None:
        raise UserError("--horizon is required (or use --search)")
    _positive(horizon, "--horizon", high=MAX_EXACT_HORIZON)
    case = dom.check(inst, horizon)
    if as_json:
        typer.echo(json.dumps(case.to_dict()))
    else:
        _print_case(console, case)


# -- bound -----------------------------------------------------------------------------------

FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


def _bound_instance(
    instance: str | None, ltf_b: str | None, ltf_t_sat: str | None, horizon: int, noise: str | None
) -> RisingInstance:
    noise_model = Noise.parse(noise) if noise is not None else None
    if ltf_b is not None or ltf_t_sat is not None:
        if instance is not None:
            raise UserError("use either --instance NAME or --ltf-b/--ltf-t-sat, not both")
        exact = _exact_ltf(ltf_b, ltf_t_sat)
        return ltf(
            [float(x) for x in exact.b], [float(x) for x in exact.t_sat], horizon, noise_model
        )
    return named_instance(instance or "intro", horizon, noise_model)


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(as_fraction(x, option)) for x in _split(text, option)]
    except (ValueError, OverflowError):  # 1e400: too large for a float
        raise UserError(
            f"{option}={text!r} is not allowed: use comma-separated numbers in [0, 1]"
        ) from None


def _ints(text: str, option: str) -> list[int]:
    try:
        values = [int(x.replace("_", "")) for x in _split(text, option)]
    except ValueError:
        raise UserError(f"{option}={text!r} is not allowed: use comma-separated integers") from None
    if min(values) < 2:
        raise UserError(f"{option}={text!r} is not allowed: use horizons >= 2")
    return sorted(set(values))


def _bound_row(b: bounds.RegretBound, ci: MeanCI) -> dict[str, Any]:
    return {
        "horizon": b.horizon,
        "q": b.q,
        "upsilon": b.upsilon,
        "increment_term": b.increment_term,
        "noise_term": b.noise_term,
        "constant_term": b.constant_term,
        "bound": b.total,
        "vacuous": b.vacuous,
        "regret_mean": ci.mean,
        "regret_ci95": [finite_or_none(ci.low), finite_or_none(ci.high)],
    }


@app.command("bound")
@user_errors
def bound(
    instance: Annotated[
        str | None, typer.Option(help="Named instance or FAMILY/SEED/INDEX; default intro.")
    ] = None,
    ltf_b: LtfB = None,
    ltf_t_sat: LtfTSat = None,
    horizons: Annotated[
        str, typer.Option(help="Comma-separated horizons T.")
    ] = "5000,10000,15000,20000,25000,30000,35000,40000,45000,50000",
    eps: Annotated[float, typer.Option(help="Window fraction eps in (0, 1/2).")] = 0.25,
    q: Annotated[
        str | None, typer.Option(help="Comma-separated q grid in [0, 1]; default 0, 0.05, .., 1.")
    ] = None,
    sigma: Annotated[
        float | None, typer.Option(help="Sub-Gaussian sigma; default the noise's proxy.")
    ] = None,
    noise: Annotated[
        str | None,
        typer.Option(help="gaussian[:SIGMA] | bernoulli | none; default the instance's."),
    ] = None,
    seeds: Annotated[int, typer.Option(help="Seeds of the empirical CURE-UCB runs.")] = 5,
    out: Annotated[
        Path, typer.Option(help="Figure to write, as named: a .png, .pdf or .svg file.")
    ] = Path("theory-bound.png"),
    overwrite: Annotated[bool, typer.Option(help="Replace an existing figure.")] = False,
    as_json: AsJson = False,
) -> None:
    """Thm. 5.4: the regret bound (min over q) vs T beside CURE-UCB's regret, as a table and
    the figure --out (``--json``: its path is ``figure``)."""
    from risingbandits.theory.figure import plot_bound

    hs = _ints(horizons, "--horizons")
    qs = _floats(q, "--q") if q is not None else list(bounds.DEFAULT_QS)
    _positive(seeds, "--seeds")
    new_file(out, FIGURE_SUFFIXES, overwrite)
    inst = _bound_instance(instance, ltf_b, ltf_t_sat, hs[-1], noise)
    sig = inst.noise_proxy if sigma is None else sigma
    curve = bounds.bound_curve(inst, hs, eps, sig, qs)
    policy = make_policy("cure-ucb", eps=eps, sigma=sig)
    with Console(stderr=True).status(f"simulating CURE-UCB on {inst.name}..."):
        results = simulate_horizons(inst, policy, hs, seeds)
    regret = {h: mean_ci(results[h].regret) for h in hs}
    concave = inst.concavity_report().all_concave
    title = (
        f"{inst.name} (K = {inst.n_arms}, noise {inst.noise}, concave: {concave}); "
        f"eps = {eps:g}, sigma = {sig:g}, {seeds} seeds"
    )
    plot_bound(curve, regret, title, out)
    rows = [_bound_row(b, regret[b.horizon]) for b in curve]
    if as_json:
        payload = {
            "instance": inst.name,
            "n_arms": inst.n_arms,
            "noise": str(inst.noise),
            "concave": concave,
            "eps": eps,
            "sigma": sig,
            "q_grid": qs,
            "seeds": seeds,
            "rows": rows,
            "figure": str(out),
        }
        typer.echo(json.dumps(payload))
        return
    console = Console(soft_wrap=True)
    table = Table(title=f"Thm. 5.4 bound vs CURE-UCB regret: {title}")
    columns = (
        "T",
        "q",
        "Upsilon",
        "Ups. term",
        "noise term",
        "const",
        "bound",
        "bound/T",
        "regret",
    )
    for col in columns:
        table.add_column(col, justify="right")
    for r in rows:
        ups = r["upsilon"]
        table.add_row(
            f"{r['horizon']:,}",
            f"{r['q']:g}",
            f"{ups:,.3f}" if ups < 100 else f"{ups:,.0f}",
            f"{r['increment_term']:,.0f}",
            f"{r['noise_term']:,.0f}",
            f"{r['constant_term']:,.0f}",
            f"{r['bound']:,.0f}",
            f"{r['bound'] / r['horizon']:.2f}",
            f"{r['regret_mean']:,.0f}",
        )
    console.print(table)
    console.print("bound/T >= 1: no better than the trivial Reg(T) <= T")
    console.print(f"wrote {out}")


# -- horizon awareness -------------------------------------------------------------------------


@app.command("horizon-awareness")
@user_errors
def horizon_awareness(
    seeds: Annotated[int, typer.Option(help="Seeds per policy.")] = 5,
    noise: Annotated[
        str, typer.Option(help="gaussian[:SIGMA] | bernoulli | none.")
    ] = "gaussian:0.1",
    policies: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated policies; default every horizon-agnostic one + cure-ucb."
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Sec. 3.1 on the intro instance: switch horizon, arm-A pulls by 8,000, regret at 10k/30k."""
    _positive(seeds, "--seeds")
    noise_model = Noise.parse(noise)
    names = (
        _split(policies, "--policies", "policy names (cure-ucb,ucb1)")
        if policies is not None
        else ["cure-ucb", *ha.horizon_agnostic_policies()]
    )
    for name in names:
        make_policy(name)  # one clear error for an unknown name before any simulation
    switch = ha.intro_switching_horizon()
    price = ha.agnostic_price()
    status = Console(stderr=True).status("simulating...")
    with status:
        checks = ha.check_policies(
            names, seeds, noise_model, progress=lambda n: status.update(f"simulating {n}...")
        )
    if as_json:
        payload = {
            "switching_horizon": switch,
            "noise": str(noise_model),
            "seeds": seeds,
            "probe": ha.PROBE,
            "agnostic_price": {
                "pulls_a": price.pulls_a,
                "regret_short": price.regret_short,
                "regret_long": price.regret_long,
                "randomised": price.randomised,
            },
            "policies": [
                {
                    "policy": c.policy,
                    "uses_horizon": c.uses_horizon,
                    "pulls_a_short": c.pulls_a_short,
                    "pulls_a_long": c.pulls_a_long,
                    "case": c.case,
                    "regret_10000": c.regret_short,
                    "regret_30000": c.regret_long,
                }
                for c in checks
            ],
        }
        typer.echo(json.dumps(payload))
        return
    console = Console(soft_wrap=True)
    console.print(f"intro instance: best fixed arm switches from A to B at T = {switch:,}")
    console.print(
        f"any policy that ignores T: regret >= {price.value:,.1f} at T = 10,000 or at "
        f"T = 30,000 (best N = {price.pulls_a:,}: {price.regret_short:,.1f} / "
        f"{price.regret_long:,.1f}); in expectation >= {price.randomised:,.1f} if it randomises"
    )
    table = Table(title=f"arm-A pulls N by t = 8,000 (intro, noise {noise_model}, {seeds} seeds)")
    for col in ("policy", "N, T=10k run", "N, T=30k run", "case", "Reg(10,000)", "Reg(30,000)"):
        table.add_column(col, justify="left" if col in ("policy", "case") else "right")
    for c in checks:
        table.add_row(
            c.policy,
            f"{c.pulls_a_short:,.0f}",
            f"{c.pulls_a_long:,.0f}",
            c.case,
            f"{c.regret_short:,.1f}",
            f"{c.regret_long:,.1f}",
        )
    console.print(table)
    for name, meaning in ha.CASES.items():
        console.print(f"{name}: {meaning}")
    console.print("uses T: a horizon-aware policy, its first 8,000 pulls depend on T")
