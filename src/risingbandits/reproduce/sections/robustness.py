"""The report's section "How much each verdict depends on our choices" (issue 10): one table of
every claim's verdict under each variant, a sentence per claim, and how each policy variant
fares in its default's place."""

from __future__ import annotations

from risingbandits.analysis.stats import mean_ci
from risingbandits.reproduce.claims import CLAIMS, Evidence, ci_text
from risingbandits.reproduce.document import Block, Bullets, Heading, Para, Table
from risingbandits.reproduce.robustness import Robustness, Variant

INTRO = (
    "Each column changes one choice and re-judges every claim it touches with the claim's own "
    "rule: a policy variant stands in for its default policy (same instances, seeds and "
    "rewards; ranks recomputed among the ten), concave-v2 replaces the concave-v1 instances "
    "(claims 6-8), a noise level of the sensitivity panel replaces LTF's Gaussian 0.1 (claims "
    "4-5, at T = 10,000, 30,000 and 50,000). `-`: the variant does not touch the claim's "
    "evidence. The variants are the choices the papers leave open (docs/fidelity.md): TI-UCB's "
    "change detector and prediction point, ET-SWGTS's window, R-ed-UCB's delta schedule."
)


def robustness_section(rob: Robustness, main: Evidence) -> list[Block]:
    """The verdict table, one sentence per claim, the policy variants' regrets."""
    if not rob.variants:
        return []
    rows = tuple(
        (
            str(c.number),
            f"**{rob.defaults[c.number]}**",
            *(rob.verdicts.get((c.number, v.key), "-") for v in rob.variants),
        )
        for c in CLAIMS
    )
    blocks: list[Block] = [
        Heading(2, "How much each verdict depends on our choices"),
        Para(INTRO),
        Table(("#", "default", *(v.title for v in rob.variants)), rows),
        Bullets(tuple(rob.sentence(c) for c in CLAIMS)),
    ]
    policy_variants = [v for v in rob.variants if v.swap is not None]
    if policy_variants:
        blocks += [
            Para(
                "The policy variants in their default's place at the largest T: mean regret "
                "[95% CI] of the default and of the variant, their paired difference (> 0: the "
                "variant has lower regret) and the place among the ten by mean regret:"
            ),
            _variant_table(rob, main, policy_variants),
        ]
    return blocks


def _variant_table(rob: Robustness, main: Evidence, found: list[Variant]) -> Table:
    rows = []
    for v in found:
        assert v.swap is not None
        name = v.swap[0]
        for setting in v.replaces:
            base, alt = main.results[setting], rob.evidence[v.key].results[setting]
            last = base.horizons[-1]
            gap = "-"
            if base.units[last] == alt.units[last]:
                gap = ci_text(mean_ci(base.regret[name, last] - alt.regret[name, last]))
            rows.append(
                (
                    v.title,
                    setting,
                    ci_text(base.regret_ci(name, last)),
                    ci_text(alt.regret_ci(name, last)),
                    gap,
                    f"{base.order(last).index(name) + 1} -> {alt.order(last).index(name) + 1}",
                )
            )
    header = ("variant", "setting", "default", "variant", "default - variant", "place")
    return Table(header, tuple(rows))
