"""``risingbandits reproduce all --quick`` end to end: every figure, the report in Markdown and
self-contained HTML, one claims row per claim, resuming computes nothing, refusals; the traces
section replays store runs and picks them by its rules."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from risingbandits.cli import app
from risingbandits.experiments import Store, parse_spec
from risingbandits.experiments.plan import make_plan
from risingbandits.explain import traced_run
from risingbandits.instances.families import PAPER_HORIZON
from risingbandits.reproduce import CLAIMS, VERDICTS, ReportError, reproduce
from risingbandits.reproduce.claims import CURE
from risingbandits.reproduce.document import Para
from risingbandits.reproduce.report import complete_stores
from risingbandits.reproduce.sections import explain as explain_section
from risingbandits.reproduce.sections.common import Context
from risingbandits.reproduce.sections.explain import (
    BONUS_SHARE,
    FIGURE3_HORIZON,
    RED,
    bonus_dominated_run,
    bonus_share,
    lock_in_run,
    store_policy,
    store_units,
    unit_regrets,
)
from risingbandits.reproduce.settings import QUICK, sweeps
from test_experiments_spec import TINY

runner = CliRunner()
FIGURES = (
    "fig1-intro",
    "fig4-ltf",
    "fig5-concave",
    "fig6-imdb-curves",
    "fig7-imdb-regret",
    "figA-ltf-examples",
    "figA-concave-examples",
    "figF-ltf",
    "figF-concave",
    "fig5-concave-v2",
    "figA-concave-v2-examples",
    "figF-concave-v2",
    "sens-noise",
    "sens-sigma",
    "theory-bound",
    "fig3-intro-stages",
    "why-ltf-bonus",
    "why-imdb-lock-in",
    "select-imdb",
    "select-imdb29",
    "select-lcdb",
    "select-imdb-arm",
    "select-lcdb-arm",
    "heldout-ratio",
    "heldout-ratio-per-arm",
    "heldout-bars",
    "heldout2-ratio",
    "heldout2-ratio-per-arm",
    "heldout2-bars",
    "heldout3-ratio",
    "heldout3-ratio-per-arm",
    "heldout3-bars",
    "peers-imdb",
    "peers-lcdb",
)
LIVE_FIGURES = ("select-live", "select-live-arm", "peers-live")
"""Drawn where live-v1 is recorded (``risingbandits data live``), as on a developer's machine."""


def figures_of(out: Path) -> tuple[str, ...]:
    return FIGURES + (LIVE_FIGURES if (out / "select-live-quick").is_dir() else ())


@pytest.fixture
def quick(reproduction_quick: Path) -> Path:
    return reproduction_quick


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_every_figure_is_a_plausible_png(quick: Path) -> None:
    for name in figures_of(quick):
        path = quick / "figures" / f"{name}.png"
        width, height = png_size(path)
        assert width >= 600 and height >= 300, (name, width, height)
        assert 20_000 < path.stat().st_size < 1_000_000, name


def test_markdown_report_links_every_figure_and_has_one_claims_row_per_claim(quick: Path) -> None:
    md = (quick / "report.md").read_text()
    for name in figures_of(quick):
        assert f"](figures/{name}.png)" in md, name
    section = md.split("## Claims vs our results", 1)[1].split("\n## ", 1)[0]
    section, on_v2 = section.split("*Claims 6-8 on concave-v2", 1)
    rows = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [line[:4] for line in on_v2.splitlines() if re.match(r"\| \d \|", line)] == [
        "| 6 ",
        "| 7 ",
        "| 8 ",
    ]
    assert [int(r.split("|")[1]) for r in rows] == [c.number for c in CLAIMS]
    for row in rows:
        verdict = row.rstrip(" |").rsplit("|", 1)[1].strip().strip("*")
        assert verdict in VERDICTS, row
    assert "reconstruction" in md and "ti-ucb*" in md and "red-ae*" in md
    report = json.loads((quick / "report.json").read_text())
    assert [c["verdict"] for c in report["claims"]] == [
        r.rstrip(" |").rsplit("|", 1)[1].strip().strip("*") for r in rows
    ]
    assert [c["number"] for c in report["claims_concave_v2"]] == [6, 7, 8]


def test_robustness_section_and_json_give_each_claim_a_verdict_per_variant(quick: Path) -> None:
    md = (quick / "report.md").read_text()
    section = md.split("## How much each verdict depends on our choices", 1)[1]
    section = section.split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(table) == len(CLAIMS)
    sentences = [line for line in section.splitlines() if line.startswith("- Claim ")]
    assert len(sentences) == len(CLAIMS)
    rows = json.loads((quick / "report.json").read_text())["robustness"]
    variants = {r["variant"] for r in rows}
    assert {"default", "concave-v2", "noise bernoulli", "ti-ucb[predict_at=round]"} <= variants
    assert {"ti-ucb[detector=slope-ratio]", "et-swgts[window=pulls]"} <= variants
    assert {"red-ucb[delta_schedule=t^-4]"} <= variants
    assert all(r["verdict"] in VERDICTS for r in rows)
    judged = {(r["claim"], r["variant"]) for r in rows}
    assert {(c, "concave-v2") for c in (6, 7, 8)} <= judged and (4, "concave-v2") not in judged
    assert {(4, "noise none"), (12, "ti-ucb[predict_at=round]")} <= judged


def test_html_report_is_self_contained(quick: Path) -> None:
    page = (quick / "report.html").read_text()
    sources = re.findall(r'\ssrc="([^"]*)"', page)
    assert len(sources) == len(figures_of(quick))
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r'href="(?!#)', page) and "<link" not in page
    assert page.count("<tr>") > 50 and "Claims vs our results" in page


def test_running_again_computes_nothing_and_rewrites_the_same_report(quick: Path) -> None:
    parts = {p: p.stat().st_mtime_ns for p in quick.glob("*/parts/*.parquet")}
    before = (quick / "report.md").read_text()
    result = reproduce("all", quick, quick=True, workers=2)
    assert result.cells_run == 0 and all(s.resumed for s in result.sweeps)
    names = sweeps(QUICK)
    skipped = [n for n, _ in result.skipped if n in names]
    assert len(result.sweeps) + len(skipped) == len(names)
    beds = [(n, why) for n, why in result.skipped if n not in names]  # where live-v1 is not built
    assert all(n.startswith("peers on ") and "risingbandits data live" in why for n, why in beds)
    assert {p: p.stat().st_mtime_ns for p in quick.glob("*/parts/*.parquet")} == parts
    assert (quick / "report.md").read_text() == before


def test_a_full_run_into_a_quick_report_is_refused_before_any_work(quick: Path) -> None:
    result = runner.invoke(app, ["reproduce", "ltf", "--out", str(quick)])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "quick run" in lines[0]
    assert not (quick / "ltf-full").exists()


def test_a_store_of_another_spec_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    other = parse_spec(TINY)
    Store(tmp_path / "intro-quick").create(other, make_plan(other))
    with pytest.raises(ValueError, match="holds a sweep of another spec"):
        reproduce("intro", tmp_path, quick=True, executor="serial")


def test_a_foreign_report_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("my notes\n")
    with pytest.raises(ReportError, match="is not a reproduction report"):
        reproduce("theory", tmp_path, quick=True)
    assert (tmp_path / "report.md").read_text() == "my notes\n"


@pytest.mark.parametrize("name", ["report.json", "report.html"])
def test_a_foreign_report_json_or_html_is_not_overwritten(tmp_path: Path, name: str) -> None:
    """Only report.md was checked: a folder with the user's own report.json or report.html
    (and no report.md) had them replaced without a word."""
    (tmp_path / name).write_text('{"mine": 1}\n')
    with pytest.raises(ReportError, match=f"{name} exists and is not a reproduction report"):
        reproduce("theory", tmp_path, quick=True)
    assert (tmp_path / name).read_text() == '{"mine": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_run_killed_while_writing_its_report_leaves_a_folder_the_next_run_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.md was written first and report.json last: a kill between them left a report.md
    without its JSON, and the next run refused the folder as "not a reproduction report"."""
    from risingbandits.reproduce import report

    real = report.atomic_write

    def killed_at_the_html(path: Path, write: Any) -> None:
        if path.name == report.REPORT_HTML:
            raise KeyboardInterrupt
        real(path, write)

    monkeypatch.setattr(report, "atomic_write", killed_at_the_html)
    with pytest.raises(KeyboardInterrupt):
        reproduce("theory", tmp_path, quick=True)
    assert (tmp_path / "report.json").exists() and not (tmp_path / "report.md").exists()
    monkeypatch.setattr(report, "atomic_write", real)
    result = reproduce("theory", tmp_path, quick=True)
    assert result.report == tmp_path / "report.md" and result.report.exists()
    assert json.loads((tmp_path / "report.json").read_text())["identity"]["size"] == "quick"


@pytest.mark.parametrize(
    "identity", ['"x"', "null", '{"size": "quick", "stores": []}', '{"stores": {}}']
)
def test_a_report_whose_identity_has_the_wrong_shape_is_refused_in_one_line(
    tmp_path: Path, identity: str
) -> None:
    (tmp_path / "report.md").write_text("my notes\n")
    (tmp_path / "report.json").write_text(f'{{"identity": {identity}}}')
    result = runner.invoke(
        app, ["reproduce", "intro", "--quick", "--out", str(tmp_path), "--executor", "serial"]
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "is not a reproduction report" in lines[0]
    assert (tmp_path / "report.md").read_text() == "my notes\n"
    assert not (tmp_path / "intro-quick").exists()


# -- the traces section (reproduce/sections/explain.py) -----------------------------------------


def traces_context(quick: Path, tmp_path: Path) -> Context:
    stores, _ = complete_stores(quick, QUICK)
    return Context(QUICK, stores, tmp_path, 60)


def test_figure3_replays_the_intro_store_run(quick: Path, tmp_path: Path) -> None:
    md = (quick / "report.md").read_text()
    section = md.split("## Figure 3: ", 1)[1].split("\n## ", 1)[0]
    assert "Round 9,000: cure-ucb targets" in section and "red-ucb targets" in section
    ctx = traces_context(quick, tmp_path)
    r = ctx.results("intro")
    unit = next(store_units(ctx, "intro", FIGURE3_HORIZON))
    k = r.units[FIGURE3_HORIZON].index((unit.instance_id, 0))
    for label in (CURE, RED):
        run = traced_run(unit.instance, store_policy(ctx, "intro", label), 10_000, unit.run_seed)
        assert run.regret == pytest.approx(r.regret[label, FIGURE3_HORIZON][k], rel=1e-12)
        assert f"{label} {run.regret:,.0f}" in section


def test_ltf_unit_is_the_first_that_meets_the_rule(quick: Path, tmp_path: Path) -> None:
    ctx = traces_context(quick, tmp_path)
    found = bonus_dominated_run(ctx)
    assert found is not None
    unit, run, row = found
    assert run.regret == pytest.approx(row[CURE], rel=1e-12)  # the store's run, replayed
    assert row[CURE] > min(row.values()) and bonus_share(run) >= BONUS_SHARE
    cure = store_policy(ctx, "ltf", CURE)
    regrets = unit_regrets(ctx, "ltf", PAPER_HORIZON)
    for earlier in store_units(ctx, "ltf", PAPER_HORIZON):
        if (earlier.instance_id, earlier.seed) == (unit.instance_id, unit.seed):
            break
        before = regrets[earlier.instance_id, earlier.seed]
        traced = traced_run(earlier.instance, cure, PAPER_HORIZON, earlier.run_seed)
        assert before[CURE] <= min(before.values()) or bonus_share(traced) < BONUS_SHARE
    md = (quick / "report.md").read_text()
    assert f"It is `{unit.instance_id}` (seed {unit.seed})" in md


def test_imdb_run_stops_pulling_the_best_arm(quick: Path, tmp_path: Path) -> None:
    ctx = traces_context(quick, tmp_path)
    found = lock_in_run(ctx)
    assert found is not None
    unit, run, best, last = found
    r = ctx.results("imdb")
    k = r.units[PAPER_HORIZON].index((unit.instance_id, unit.seed))
    assert run.regret == pytest.approx(r.regret[CURE, PAPER_HORIZON][k], rel=1e-12)
    assert run.arms[last - 1] == best and not (run.arms[last:] == best).any()
    assert last <= PAPER_HORIZON // 2
    view = run.at(last + 1)
    assert view.arms[best].index < view.arms[view.chosen].index
    md = (quick / "report.md").read_text()
    assert f"It is seed {unit.seed} (regret {run.regret:,.0f})" in md


def test_a_rule_met_by_no_unit_says_so(
    quick: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(explain_section, "BONUS_SHARE", 1.01)  # a share above 100%
    blocks = explain_section.ltf_blocks(traces_context(quick, tmp_path))
    assert [b.text for b in blocks if isinstance(b, Para)] == [
        "No LTF unit meets the rule (CURE-UCB loses and its bonus dominates)."
    ]
