"""How much each verdict depends on our choices: every claim re-judged under each variant.

A variant changes one choice and nothing else; the claim's rule (:mod:`.claims`) is applied
unchanged to the changed evidence (issue 10, docs/fidelity.md):

* a policy variant (:data:`~.settings.POLICY_VARIANTS`) stands in for its default policy: a
  setting's ten policies are read with the variant's runs (store ``<setting>-variants``: same
  instances, seeds and rewards) in the default's place and under the default's name, so ranks
  and win rates are recomputed among the ten;
* ``concave-v2`` replaces the concave-v1 results;
* a noise level of the sensitivity panel replaces the main LTF results (at the panel's horizons).

A variant touches the claims judged on a setting it replaces; the others (the exact oracle of
claim 1, the theory of claim 10, CURE-UCB's bound of claim 11) cannot change, and show "-".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from risingbandits.reproduce.claims import (
    CLAIMS,
    NOT_RUN,
    Claim,
    ClaimResult,
    Evidence,
    available,
    judge,
)
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.settings import (
    MAIN_NOISE,
    NOISE_LEVELS,
    POLICY_VARIANTS,
    VARIANT_SETTINGS,
    noise_store,
    variant_store,
)

DEFAULT = "default"
Loader = Callable[..., Results]
"""``load(*store_names, labels=None)``: results of those stores read together."""


@dataclass(frozen=True)
class Variant:
    """One changed choice: the settings it replaces, each read from these stores."""

    key: str
    """Its name in ``report.json`` (a policy label, ``concave-v2`` or ``noise <level>``)."""
    title: str
    replaces: Mapping[str, tuple[str, ...]]
    swap: tuple[str, str] | None = None
    """(default label, variant label) for a policy variant."""


def variants(stores: Collection[str]) -> list[Variant]:
    """The variants whose stores (and the main stores they replace) are complete."""
    out = []
    for v in POLICY_VARIANTS:
        replaces: dict[str, tuple[str, ...]] = {
            s: (s, variant_store(s))
            for s in VARIANT_SETTINGS
            if s in stores and variant_store(s) in stores
        }
        if replaces:
            out.append(Variant(v.label, v.title, replaces, (v.name, v.label)))
    if "concave" in stores and "concave-v2" in stores:
        out.append(Variant("concave-v2", "concave-v2 instances", {"concave": ("concave-v2",)}))
    if "ltf" in stores:
        for level in NOISE_LEVELS:
            if level != MAIN_NOISE and noise_store(level) in stores:
                out.append(
                    Variant(f"noise {level}", f"LTF noise {level}", {"ltf": (noise_store(level),)})
                )
    return out


def variant_evidence(ev: Evidence, variant: Variant, load: Loader) -> Evidence:
    """``ev`` with the settings the variant replaces read from its stores."""
    results = dict(ev.results)
    for setting, names in variant.replaces.items():
        if variant.swap is None:
            results[setting] = load(*names)
            continue
        default, label = variant.swap
        labels = [label if p == default else p for p in ev.results[setting].labels]
        results[setting] = load(*names, labels=labels).renamed({label: default})
    return Evidence(results, ev.theory, ev.bounds)


def touches(claim: Claim, variant: Variant) -> bool:
    """Whether the variant replaces a setting the claim is judged on."""
    return any(need in variant.replaces for need in claim.needs)


@dataclass(frozen=True)
class Robustness:
    """Each claim's verdict by default and under every variant that touches it."""

    variants: tuple[Variant, ...]
    defaults: Mapping[int, str]
    verdicts: Mapping[tuple[int, str], str]
    """(claim number, variant key) -> verdict, for the variants that touch the claim."""
    evidence: Mapping[str, Evidence]
    """The evidence of each variant (by key)."""

    def rows(self) -> list[dict[str, object]]:
        """``report.json``'s ``robustness``: ``{claim, variant, verdict}`` (``default`` too)."""
        out: list[dict[str, object]] = []
        for c in CLAIMS:
            if self.defaults[c.number] == NOT_RUN:
                continue
            out.append({"claim": c.number, "variant": DEFAULT, "verdict": self.defaults[c.number]})
            out += [
                {"claim": c.number, "variant": v.key, "verdict": self.verdicts[c.number, v.key]}
                for v in self.variants
                if (c.number, v.key) in self.verdicts
            ]
        return out

    def rejudged(self, key: str) -> list[ClaimResult]:
        """The claims a variant touches, judged in full (numbers too) on its evidence."""
        found = [v for v in self.variants if v.key == key]
        if not found:
            return []
        return [judge(c, self.evidence[key]) for c in CLAIMS if touches(c, found[0])]

    def sentence(self, claim: Claim) -> str:
        """Whether the claim's verdict is robust to the variants, in one sentence."""
        default = self.defaults[claim.number]
        head = f"Claim {claim.number}"
        if default == NOT_RUN:
            return f"{head}: not run."
        judged = [v for v in self.variants if (claim.number, v.key) in self.verdicts]
        if not judged:
            return f"{head}: {default}; no variant changes its evidence (it reads no baseline)."
        changed = [v for v in judged if self.verdicts[claim.number, v.key] != default]
        if not changed:
            return f"{head}: robust, {default} under all {len(judged)} variants that touch it."
        which = "; ".join(f"{self.verdicts[claim.number, v.key]} with {v.title}" for v in changed)
        return (
            f"{head}: depends on our choices, {default} by default but {which} "
            f"({len(judged) - len(changed)} of {len(judged)} variants agree with the default)."
        )


def assess(
    ev: Evidence, defaults: Sequence[ClaimResult], stores: Collection[str], load: Loader
) -> Robustness:
    """Re-judge every claim under every variant whose ``stores`` (complete sweeps, by name)
    are there; ``load`` reads stores by name."""
    found = variants(stores)
    evidence = {v.key: variant_evidence(ev, v, load) for v in found}
    verdicts = {
        (c.number, v.key): judge(c, evidence[v.key]).verdict
        for v in found
        for c in CLAIMS
        if touches(c, v) and available(c, evidence[v.key])
    }
    return Robustness(tuple(found), {r.number: r.verdict for r in defaults}, verdicts, evidence)
