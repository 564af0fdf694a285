"""The reproduction report: ``report.md``, a self-contained ``report.html`` and ``report.json``.

Everything is read from the stores in ``OUT`` (and the kept theory checks), so the report can be
regenerated at any time and comes out the same. ``report.json`` records which stores (spec hashes)
and which size the report was made from: a report of another run is never replaced silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict
from operator import methodcaller
from pathlib import Path
from typing import Any

from risingbandits import __version__
from risingbandits.analysis.summary import RECONSTRUCTION_NOTE
from risingbandits.experiments.executors import Executor
from risingbandits.experiments.spec import instances_checked_once
from risingbandits.experiments.store import Store
from risingbandits.instances import intro
from risingbandits.instances.families import PAPER_HORIZON
from risingbandits.outputs import atomic_write
from risingbandits.plots.common import DPI
from risingbandits.reproduce.background import figures_on
from risingbandits.reproduce.claims import CURE, ClaimResult, Evidence, judge_all
from risingbandits.reproduce.deadlines import load_deadlines
from risingbandits.reproduce.document import Block, Heading, Para, to_html, to_markdown
from risingbandits.reproduce.peers import load_peers
from risingbandits.reproduce.robustness import assess
from risingbandits.reproduce.sections.common import Context
from risingbandits.reproduce.sections.deadlines import deadlines_section
from risingbandits.reproduce.sections.explain import explain_sections
from risingbandits.reproduce.sections.heldout import (
    heldout2_section,
    heldout3_section,
    heldout_section,
)
from risingbandits.reproduce.sections.modelselection import selection_section
from risingbandits.reproduce.sections.paper import (
    bound_params,
    claims_section,
    family_section,
    imdb_section,
    intro_section,
    method_section,
)
from risingbandits.reproduce.sections.peers import peers_section
from risingbandits.reproduce.sections.robustness import robustness_section
from risingbandits.reproduce.sections.sensitivity import noise_section, sigma_section
from risingbandits.reproduce.sections.theory import theory_section
from risingbandits.reproduce.settings import Size, sweeps
from risingbandits.reproduce.theory_checks import bound_rows

REPORT_MD, REPORT_HTML, REPORT_JSON = "report.md", "report.html", "report.json"
FIGURES = "figures"
TITLE = 'Reproduction of "Rising Multi-Armed Bandits with Known Horizons" (CURE-UCB)'


Theory = dict[str, Any] | None
"""The kept theory checks (None when they were not run)."""


class ReportError(ValueError):
    """The report cannot be written as asked (another run's report is in the way)."""


# -- which stores ------------------------------------------------------------------------------


def complete_stores(out: Path, size: Size) -> tuple[dict[str, Path], list[str]]:
    """Complete stores of ``size`` in ``out`` by sweep name, and names of incomplete ones."""
    done, partial = {}, []
    for name, d in sweeps(size).items():
        path = out / d.store_name(size)
        if not Store(path).exists():
            continue
        if Store(path).status().complete:
            done[name] = path
        else:
            partial.append(name)
    return done, partial


def identity(stores: dict[str, Path], size: Size) -> dict[str, Any]:
    return {
        "size": size.name,
        "stores": {name: Store(p).manifest().spec_hash for name, p in sorted(stores.items())},
    }


def recorded_identity(out: Path, shown: str = REPORT_MD) -> dict[str, Any]:
    """The identity ``out/report.json`` records (``{"size": text, "stores": {name: text}}``),
    checked field by field; a ReportError line (naming ``out/shown``) when it is missing,
    unreadable or of another shape."""
    try:
        old = json.loads((out / REPORT_JSON).read_text(encoding="utf-8"))["identity"]
        stores = old.get("stores", {})
        if not isinstance(old.get("size"), str) or not isinstance(stores, dict):
            raise TypeError("not an identity")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise ReportError(
            f"{out / shown} exists and is not a reproduction report: choose another --out "
            "or pass --overwrite"
        ) from None
    return {"size": old["size"], "stores": stores}


def check_replaceable(out: Path, new: dict[str, Any] | None, overwrite: bool) -> None:
    """Refuse to replace a report of another run: another size, or a store with another spec.
    A report of a subset of the same stores (an earlier target) may be replaced."""
    if overwrite or not (out / REPORT_MD).exists():
        return
    where = out / REPORT_MD
    old = recorded_identity(out)
    if new is None:
        return
    same = old["size"] == new["size"] and all(
        new["stores"].get(k) == v for k, v in old["stores"].items()
    )
    if not same:
        raise ReportError(
            f"{where} is the report of another run ({old.get('size')} size, stores "
            f"{', '.join(old.get('stores', {}))}): choose another --out or pass --overwrite"
        )


def check_before_run(out: Path, size: Size, overwrite: bool) -> None:
    """Refuse before any work when ``out`` holds a report that is not a reproduction report
    or one of another size (the spec hashes are compared when the report is written). Without
    a report.md, a report.json or report.html that no reproduction wrote is refused too (a run
    killed while writing its report leaves its report.json, then its report.html)."""
    if overwrite:
        return
    if not (out / REPORT_MD).exists():
        if (out / REPORT_JSON).exists():
            recorded_identity(out, REPORT_JSON)
        elif (out / REPORT_HTML).exists():
            recorded_identity(out, REPORT_HTML)
        return
    old = recorded_identity(out)["size"]
    if old != size.name:
        raise ReportError(
            f"{out / REPORT_MD} is the report of a {old} run; this is a {size.name} run: choose "
            "another --out or pass --overwrite"
        )


# -- assembling and writing --------------------------------------------------------------------


def build(
    out: Path,
    size: Size,
    theory: Callable[[], Theory],
    dpi: int,
    complete: tuple[dict[str, Path], list[str]] | None = None,
    pool: Executor | None = None,
) -> tuple[list[Block], list[ClaimResult], dict[str, Any]]:
    """The report's blocks, the claims and the content of ``report.json`` (identity, claims,
    the Concave claims on concave-v2, robustness, model selection and the held-out evaluation
    when they were run), from the stores in ``out`` (``complete``: :func:`complete_stores`,
    when the caller has it; ``pool``: workers that read the stores meanwhile). ``theory``
    returns the checks (waiting for them when they are still running); it is called only when
    the theory section is reached."""
    stores, partial = complete_stores(out, size) if complete is None else complete
    ctx = Context(size, stores, out / FIGURES, dpi)
    if pool is not None:
        ctx.read_ahead(pool)
    ctx.figures.mkdir(parents=True, exist_ok=True)
    ev = Evidence()
    body: list[Block] = []
    for name in ("intro", "ltf", "concave", "imdb"):
        if name in stores:
            ev.results[name] = ctx.results(name)
    if "intro" in ev.results:
        body += intro_section(ctx, ev.results["intro"])
        r = ev.results["intro"]
        ev.bounds["intro"] = bound_rows(
            [intro(PAPER_HORIZON)],
            {h: r.per_instance(CURE, h) for h in r.horizons},
            **bound_params("ltf-v1"),
        )
    concave_v2 = ctx.results("concave-v2") if "concave-v2" in stores else None
    for number, setting, found in (
        (4, "ltf", ev.results.get("ltf")),
        (5, "concave", ev.results.get("concave")),
        (5, "concave-v2", concave_v2),
    ):
        if found is not None:
            blocks, rows = family_section(ctx, setting, found, number)
            body += blocks
            ev.bounds[setting] = rows
    if "imdb" in ev.results:
        body += imdb_section(ctx, ev.results["imdb"])
    body += explain_sections(ctx)
    sensitivity = noise_section(ctx) + sigma_section(ctx)
    if sensitivity:
        body += [Heading(2, "Sensitivity panel"), *sensitivity]
    ev.theory = theory()
    if ev.theory is not None or ev.bounds:
        body += theory_section(ctx, ev.theory, ev.bounds, ev.results.get("intro"))
    selection, selection_json = selection_section(ctx)
    heldout, heldout_json = heldout_section(ctx)
    heldout2, heldout2_json = heldout2_section(ctx)
    heldout3, heldout3_json = heldout3_section(ctx)
    peers, peers_json = peers_section(ctx, out)
    deadlines, deadlines_json = deadlines_section(ctx, out)
    body += selection + heldout + heldout2 + heldout3 + peers + deadlines
    claims = judge_all(ev)
    rob = assess(ev, claims, stores, ctx.results)
    v2_claims = rob.rejudged("concave-v2")
    head: list[Block] = [
        Heading(1, TITLE),
        Para(
            f"risingbandits {__version__}, size {size.name}. Generated by `risingbandits "
            "reproduce`; every number below is read from the result stores listed under "
            '"How this report was made".'
        ),
    ]
    footer: list[Block] = [Heading(2, "Footnotes"), Para(RECONSTRUCTION_NOTE + ".")]
    blocks = [
        *head,
        *claims_section(claims, v2_claims),
        *robustness_section(rob, ev),
        *method_section(ctx, partial),
        *body,
    ]
    payload = {
        "identity": identity(stores, size),
        "claims": [asdict(c) for c in claims],
        "claims_concave_v2": [asdict(c) for c in v2_claims],
        "robustness": rob.rows(),
    }
    if selection_json:
        payload["modelselection"] = selection_json
    if heldout_json:
        payload["heldout"] = heldout_json
    if heldout2_json:
        payload["heldout2"] = heldout2_json
    if heldout3_json:
        payload["heldout3"] = heldout3_json
    if peers_json:
        payload["peers"] = peers_json
    if deadlines_json:
        payload["deadlines"] = deadlines_json
    return [*blocks, *footer], claims, payload


def write_report(
    out: Path,
    size: Size,
    theory: Callable[[], Theory],
    *,
    overwrite: bool = False,
    dpi: int = DPI,
    pool: Executor | None = None,
) -> tuple[Path, list[ClaimResult]]:
    """Write ``report.md``, ``report.html``, ``report.json`` and ``figures/`` into ``out``
    (``theory``: returns the checks, see :func:`build`; ``pool``: workers that read the stores
    and draw the figures while the report is built)."""
    with instances_checked_once():  # the stores' specs are read many times, unchanged
        found = complete_stores(out, size)
        stores = found[0]
        kept = next(load_peers(out, size), None) or next(load_deadlines(out, size), None)
        if not stores and theory() is None and kept is None:
            raise ReportError(f"{out} holds no complete {size.name} store yet: run a target first")
        check_replaceable(out, identity(stores, size), overwrite)
        with nullcontext() if pool is None else figures_on(pool):
            blocks, claims, payload = build(out, size, theory, dpi, found, pool)
    payload = {"identity": payload.pop("identity"), "library_version": __version__, **payload}
    texts = {
        REPORT_JSON: json.dumps(payload, indent=1),
        REPORT_HTML: to_html(blocks, TITLE),
        REPORT_MD: to_markdown(blocks, out),
    }
    # each file whole, report.md last: a run killed while writing never leaves a report.md
    # whose report.json is missing or another run's (the next run would refuse the folder)
    for name, text in texts.items():
        atomic_write(out / name, methodcaller("write", text.encode("utf-8")))
    return out / REPORT_MD, claims
