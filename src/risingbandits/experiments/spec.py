"""Sweep specs: a TOML file, validated with pydantic and the policy registry, parsed as data only.

A spec names instance sources (a versioned family with a count and a generator seed, a named
instance such as ``intro``, or a mean-table file), policies (registry name, preset, parameters,
optional label), horizons, seeds per instance, a noise model and a sweep seed::

    sweep_seed = 0
    seeds = 5                       # runs per instance
    horizons = [1000, 2000, 5000]
    noise = "gaussian:0.1"          # optional: default is each source's own noise

    [[instances]]
    family = "ltf-v1"
    count = 10
    generator_seed = 0
    params = { t_sat_scale = 5000 }

    [[policies]]
    name = "cure-ucb"
    preset = "ltf"

    [[policies]]
    name = "cure-ucb"
    params = { sigma = 1.0 }
    label = "cure-ucb[sigma=1]"

``horizon_percents = [20, 60, 100]`` in place of ``horizons`` gives every instance its own
horizons: those percents of its full horizon (``meta["full_horizon"]``, e.g. lcdb-v1's), each
``max(1, round(p x full / 100))`` (halves up). ``pulls_per_arm = [4, 8, 16]`` gives each instance
the budgets T = K x m for its number of arms K (a budget per candidate, as practitioners count
it: "8 candidates, 30 epochs each"). Rows then carry each run's own horizon and the analysis
groups them by percent, or by pulls per arm.

Every mistake is a :class:`SpecError` whose one line names the key (``policies[2].params.eps``),
the value and what is allowed.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from risingbandits.instances import Noise, RisingInstance, from_means, read_means_file
from risingbandits.instances.families import (
    FAMILIES,
    check_param,
    check_request,
    family_instance,
    full_horizons,
    instance_ids,
)
from risingbandits.instances.memory import bytes_text
from risingbandits.instances.named import named_instance
from risingbandits.policies import Policy, make_policy, policy_class

SOURCE_KEYS = ("family", "named", "means_file")
MAX_CELLS = 10_000_000
"""Most cells (result rows) a sweep may have. A row takes 20 bytes or more on disk (20.1 in a
part of 40,000 two-arm rows, measured) and the summary holds the analysis columns of every row in
memory, so a larger sweep is refused before anything is built or planned: split it."""
BYTES_PER_ROW = 20


class SpecError(ValueError):
    """A mistake in a sweep spec (one line: where, what, what is allowed)."""


class _Strict(BaseModel):
    """A spec table: unknown keys are errors that list the allowed keys."""

    model_config = ConfigDict(frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key not in cls.model_fields:
                    raise ValueError(
                        f"unknown key {key!r}: allowed keys are {', '.join(cls.model_fields)}"
                    )
        return data


def _not_bool_or_text(value: Any) -> Any:
    """An integer key takes a TOML integer (or a float of whole value, ``1e6``), never a boolean
    or a string (``seeds = true`` was read as 1 seed, ``horizons = ["50"]`` as 50)."""
    if isinstance(value, bool | str):
        raise ValueError(f"Input should be a valid integer (got {value!r})")
    return value


Whole = Annotated[int, BeforeValidator(_not_bool_or_text)]


def _noise_text(value: str | None) -> str | None:
    return None if value is None else str(Noise.parse(value))


class InstanceSource(_Strict):
    """One ``[[instances]]`` table: exactly one of ``family``, ``named``, ``means_file``."""

    family: str | None = None
    count: Annotated[Whole, Field(ge=1)] | None = None
    generator_seed: Annotated[Whole, Field(ge=0)] | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    named: str | None = None
    means_file: str | None = None
    name: str | None = None
    allow_decreasing: Annotated[bool, Field(strict=True)] = False
    noise: str | None = None

    @field_validator("family")
    @classmethod
    def _family_known(cls, value: str | None) -> str | None:
        if value is not None and value not in FAMILIES:
            raise ValueError(f"family={value!r} is not allowed: use one of {', '.join(FAMILIES)}")
        return value

    _noise = field_validator("noise")(_noise_text)

    @model_validator(mode="after")
    def _one_source(self) -> InstanceSource:
        given = [k for k in SOURCE_KEYS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(SOURCE_KEYS)} (got {', '.join(given) or 'none'})"
            )
        only = {
            "count": "family",
            "generator_seed": "family",
            "params": "family",
            "name": "means_file",
            "allow_decreasing": "means_file",
        }
        for key, owner in only.items():
            if key in self.model_fields_set and getattr(self, owner) is None:
                raise ValueError(f"{key} is only allowed with {owner}")
        if self.family is not None:
            for key in ("count", "generator_seed"):
                if getattr(self, key) is None:
                    raise ValueError(f"{key} is required with family (an integer)")
        return self


class PolicyEntry(_Strict):
    """One ``[[policies]]`` table; checked against the registry after parsing."""

    name: str
    preset: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    label: Annotated[str, Field(min_length=1)] | None = None


HORIZON_KEYS = ("horizons", "horizon_percents", "pulls_per_arm")
GRID_UNITS = {"horizons": "", "horizon_percents": "%", "pulls_per_arm": "/arm"}
"""How a grid value is written (``5000``, ``20%``, ``8/arm``)."""


class SweepModel(_Strict):
    """The whole spec."""

    description: str = ""
    sweep_seed: Annotated[Whole, Field(ge=0)]
    seeds: Annotated[Whole, Field(ge=1)]
    horizons: Annotated[list[Annotated[Whole, Field(ge=1)]], Field(min_length=1)] | None = None
    horizon_percents: (
        Annotated[list[Annotated[Whole, Field(ge=1, le=100)]], Field(min_length=1)] | None
    ) = None
    pulls_per_arm: Annotated[list[Annotated[Whole, Field(ge=1)]], Field(min_length=1)] | None = None
    noise: str | None = None
    instances: Annotated[list[InstanceSource], Field(min_length=1)]
    policies: Annotated[list[PolicyEntry], Field(min_length=1)]

    @field_validator(*HORIZON_KEYS)
    @classmethod
    def _sorted_horizons(cls, value: list[int] | None) -> list[int] | None:
        return None if value is None else sorted(set(value))

    _noise = field_validator("noise")(_noise_text)

    @model_validator(mode="after")
    def _one_grid(self) -> SweepModel:
        given = [k for k in HORIZON_KEYS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"give exactly one of {', '.join(HORIZON_KEYS)} (got {', '.join(given) or 'none'})"
            )
        return self

    @property
    def grid_key(self) -> str:
        """Which of :data:`HORIZON_KEYS` the spec gives."""
        return next(k for k in HORIZON_KEYS if getattr(self, k) is not None)

    @property
    def grid(self) -> list[int]:
        """The horizons, the percents of each instance's full horizon, or the pulls per arm."""
        grid: list[int] = getattr(self, self.grid_key)
        return grid


@dataclass(frozen=True)
class InstanceRef:
    """A small, picklable description of one instance: workers rebuild the table from it.

    ``kind`` is ``family``, ``named`` or ``file``; ``source`` the family name, the registered
    name or the absolute path of the mean-table file; ``noise`` None means the source's default.
    """

    kind: str
    id: str
    source: str
    index: int = 0
    generator_seed: int = 0
    params_json: str = "{}"
    noise: str | None = None
    allow_decreasing: bool = False
    full_horizon: int | None = None
    """The longest table the instance allows (set for sweeps with ``horizon_percents``)."""
    n_arms: int | None = None
    """The instance's number of arms (set for sweeps with ``pulls_per_arm``)."""

    def build(self, horizon: int) -> RisingInstance:
        """The instance with a mean table of length ``horizon``."""
        noise = Noise.parse(self.noise) if self.noise is not None else None
        if self.kind == "family":
            params = json.loads(self.params_json)
            return family_instance(
                self.source, self.index, self.generator_seed, horizon, noise, **params
            )
        if self.kind == "named":
            return named_instance(self.source, horizon, noise)
        table, names = read_means_file(self.source)
        table = np.asarray(table)
        if table.ndim == 2 and table.shape[1] < horizon:
            raise ValueError(
                f"means file {self.source!r} has {table.shape[1]} pulls per arm: "
                f"the largest horizon {horizon} is not allowed"
            )
        return from_means(
            table[:, :horizon] if table.ndim == 2 else table,
            noise,
            name=self.id,
            arm_names=names,
            require_rising=not self.allow_decreasing,
        )


@dataclass(frozen=True)
class PolicyRef:
    """A configured policy of the sweep: its label and its resolved parameters (JSON)."""

    label: str
    name: str
    params_json: str
    uses_horizon: bool
    reconstruction: bool

    @property
    def params(self) -> dict[str, Any]:
        return dict(json.loads(self.params_json))

    def build(self) -> Policy:
        return make_policy(self.name, **self.params)


@dataclass(frozen=True, eq=False)
class Spec:
    """A validated spec: the model, its text, its resolved instances and policies, its hash."""

    model: SweepModel
    text: str
    base_dir: Path
    instances: tuple[InstanceRef, ...]
    policies: tuple[PolicyRef, ...]
    input_hashes: tuple[tuple[str, str], ...]

    @property
    def horizons(self) -> tuple[int, ...]:
        """What results are grouped by: the horizons, or with :attr:`relative` the percents of
        each instance's full horizon (:meth:`horizons_of` gives an instance's own)."""
        return tuple(self.model.grid)

    @property
    def relative(self) -> bool:
        """Whether results are grouped by percents of each instance's full horizon or by pulls
        per arm (:attr:`grid_key`), not by horizons."""
        return self.model.horizons is None

    @property
    def grid_key(self) -> str:
        """``horizons``, ``horizon_percents`` or ``pulls_per_arm``."""
        return self.model.grid_key

    def horizons_of(self, ref: InstanceRef) -> tuple[int, ...]:
        """The horizons instance ``ref`` is run at (ascending, one per :attr:`horizons`)."""
        return instance_horizons(self.model, ref)

    def horizon_keys(self) -> list[tuple[str, int, int]] | None:
        """With :attr:`relative`: (instance id, horizon, percent or pulls per arm) of every
        instance's horizons; None otherwise (a row's horizon is its key)."""
        if not self.relative:
            return None
        return [
            (ref.id, h, p)
            for ref in self.instances
            for h, p in zip(self.horizons_of(ref), self.horizons, strict=True)
        ]

    @property
    def seeds(self) -> int:
        return self.model.seeds

    @property
    def sweep_seed(self) -> int:
        return self.model.sweep_seed

    @cached_property
    def hash(self) -> str:
        """SHA-256 of the canonical spec: its values (not its formatting, comments or
        description), each policy as resolved (label, name, parameters after the preset) and the
        contents of its mean-table files. Two specs with one hash run the same cells."""
        return self.hash_with_inputs(dict(self.input_hashes))

    def hash_with_inputs(self, inputs: Mapping[str, str]) -> str:
        """The :attr:`hash` this spec would have if its mean-table files had the SHA-256
        digests ``inputs`` (``means_file`` as written -> digest): tells a changed input file
        from a changed spec."""
        unset = {k for k in HORIZON_KEYS if getattr(self.model, k) is None}  # as before percents
        canonical = {
            "spec": self.model.model_dump(mode="json", exclude={"policies", "description", *unset}),
            "policies": [
                {"label": p.label, "name": p.name, "params": p.params} for p in self.policies
            ],
            "inputs": dict(inputs),
        }
        text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "spec"


def _validation_message(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] not in ("missing", "value_error") and "input" in first:
        msg += f" (got {first['input']!r})"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{_loc(tuple(first['loc']))}: {msg}{more}"


def _resolve_policy(i: int, entry: PolicyEntry) -> Policy:
    where = f"policies[{i}]"
    try:
        cls = policy_class(entry.name)
    except ValueError as exc:
        raise SpecError(f"{where}.name: {exc}") from None
    if entry.preset is not None and entry.preset not in cls.presets:
        allowed = ", ".join(cls.presets) or "none"
        raise SpecError(
            f"{where}.preset: preset={entry.preset!r} is not allowed for {entry.name}: "
            f"use one of {allowed}"
        )
    spec = {p.name: p for p in cls.params_spec}
    params: dict[str, Any] = {}
    for key, value in entry.params.items():
        if key not in spec:
            allowed = ", ".join(spec) or "none"
            raise SpecError(
                f"{where}.params.{key}: unknown parameter of {entry.name}: allowed are {allowed}"
            )
        try:
            check = spec[key].parse if isinstance(value, str) else spec[key].validate
            params[key] = check(entry.name, value)
        except ValueError as exc:
            raise SpecError(f"{where}.params.{key}: {exc}") from None
    try:
        return make_policy(entry.name, entry.preset, **params)
    except ValueError as exc:
        raise SpecError(f"{where}.params: {exc}") from None


def _policy_refs(model: SweepModel) -> tuple[PolicyRef, ...]:
    refs: list[PolicyRef] = []
    used: dict[str, int] = {}
    for i, entry in enumerate(model.policies):
        policy = _resolve_policy(i, entry)
        label = entry.label or entry.name
        if label in used:
            raise SpecError(
                f"policies[{i}].label: {label!r} is already used by policies[{used[label]}]: "
                'give each entry a distinct label (e.g. label = "cure-ucb[sigma=1]")'
            )
        used[label] = i
        refs.append(
            PolicyRef(
                label,
                entry.name,
                json.dumps(policy.params, sort_keys=True),
                policy.uses_horizon,
                policy.reconstruction,
            )
        )
    return tuple(refs)


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _source_refs(
    src: InstanceSource, default_noise: str | None, base_dir: Path
) -> list[InstanceRef]:
    noise = src.noise or default_noise
    if src.family is not None:
        assert src.count is not None and src.generator_seed is not None
        params = json.dumps(src.params, sort_keys=True)
        ids = instance_ids(src.family, src.count, src.generator_seed, **src.params)
        fulls = full_horizons(src.family, src.count, src.generator_seed, **src.params)
        return [
            InstanceRef(
                "family",
                ident,
                src.family,
                j,
                src.generator_seed,
                params,
                noise,
                full_horizon=None if fulls is None else fulls[j],
            )
            for j, ident in enumerate(ids)
        ]
    if src.named is not None:
        # the id is the built instance's name: "ltf-v1" names instance "ltf-v1/0/0"
        ident = named_instance(src.named, 1, None).name
        return [InstanceRef("named", ident, src.named, noise=noise)]
    assert src.means_file is not None
    path = Path(src.means_file)
    path = path if path.is_absolute() else base_dir / path
    ident = src.name or path.stem
    return [
        InstanceRef(
            "file", ident, str(path.resolve()), noise=noise, allow_decreasing=src.allow_decreasing
        )
    ]


def instance_horizons(model: SweepModel, ref: InstanceRef) -> tuple[int, ...]:
    """The horizons ``ref`` is run at: the spec's, its percents of the instance's full horizon
    (``max(1, round(p x full / 100))``, halves up), or K x m for its K arms."""
    if model.pulls_per_arm is not None:
        assert ref.n_arms is not None  # set by _with_arm_counts
        return tuple(m * ref.n_arms for m in model.pulls_per_arm)
    if model.horizon_percents is None:
        return tuple(model.grid)
    assert ref.full_horizon is not None  # checked by _check_relative
    return tuple(max(1, (p * ref.full_horizon + 50) // 100) for p in model.horizon_percents)


def _with_arm_counts(model: SweepModel, group: list[InstanceRef]) -> list[InstanceRef]:
    """With ``pulls_per_arm``: each instance with its number of arms, its budgets K x m
    within its full horizon (when it has one)."""
    if model.pulls_per_arm is None:
        return group
    out = []
    for ref in group:
        with_k = replace(ref, n_arms=ref.build(1).n_arms)
        longest = max(instance_horizons(model, with_k))
        if ref.full_horizon is not None and longest > ref.full_horizon:
            raise ValueError(
                f"pulls_per_arm = {max(model.grid)} gives {ref.id} a budget of "
                f"{with_k.n_arms} x {max(model.grid)} = {longest} pulls, beyond its full horizon "
                f"{ref.full_horizon}: use at most {ref.full_horizon // (with_k.n_arms or 1)} "
                "pulls per arm"
            )
        out.append(with_k)
    return out


def _check_relative(model: SweepModel, i: int, group: list[InstanceRef]) -> None:
    """With ``horizon_percents``: every instance has a full horizon and distinct horizons."""
    if model.horizon_percents is None:
        return
    for ref in group:
        if ref.full_horizon is None:
            raise SpecError(
                f"instances[{i}]: horizon_percents needs instances with a full horizon (a "
                f"family such as lcdb-v1); {ref.id} has none: give horizons instead"
            )
        hs, percents = instance_horizons(model, ref), model.horizon_percents
        for k in range(1, len(hs)):
            if hs[k] == hs[k - 1]:  # ascending: equal horizons are neighbours
                raise SpecError(
                    f"horizon_percents: {percents[k - 1]}% and {percents[k]}% give the same "
                    f"horizon {hs[k]} on {ref.id} (full horizon {ref.full_horizon}): use "
                    "percents further apart"
                )


def _instance_refs(
    model: SweepModel, base_dir: Path
) -> tuple[tuple[InstanceRef, ...], tuple[tuple[str, str], ...]]:
    refs: list[InstanceRef] = []
    owner: dict[str, int] = {}
    inputs: list[tuple[str, str]] = []
    # relative grids are checked instance by instance: only absolute horizons are checked here
    t_max = max(model.grid) if model.horizons is not None else 1
    for i, src in enumerate(model.instances):
        allowed = FAMILIES[src.family].params if src.family is not None else ()
        for key, value in src.params.items():
            if key not in allowed:
                raise SpecError(
                    f"instances[{i}].params.{key}: unknown parameter of {src.family}: allowed "
                    f"are {', '.join(allowed) or 'none'}"
                )
            try:
                check_param(str(src.family), key, value)
            except ValueError as exc:
                raise SpecError(f"instances[{i}].params.{key}: {exc}") from None
        if src.family is not None:
            assert src.count is not None and src.generator_seed is not None
            try:  # the count within the family's size, t_max within its instances' horizons
                check_request(src.family, src.count, src.generator_seed, t_max, **src.params)
            except ValueError as exc:
                raise SpecError(f"instances[{i}]: {exc}") from None
        key = next(k for k in SOURCE_KEYS if getattr(src, k) is not None)
        try:
            group = _with_arm_counts(model, _source_refs(src, model.noise, base_dir))
        except ValueError as exc:
            raise SpecError(f"instances[{i}].{key}: {exc}") from None
        _check_relative(model, i, group)
        try:  # checks files, family parameters and table length once
            group[0].build(max(instance_horizons(model, group[0])))
        except ValueError as exc:
            raise SpecError(f"instances[{i}].{key}: {exc}") from None
        for ref in group:
            if ref.id in owner:
                raise SpecError(
                    f"instances[{i}]: instance id {ref.id!r} also comes from "
                    f"instances[{owner[ref.id]}]: every instance must appear once (use another "
                    "generator_seed or name)"
                )
            owner[ref.id] = i
        if src.means_file is not None:
            inputs.append((src.means_file, _file_sha256(Path(group[0].source))))
        refs.extend(group)
    return tuple(refs), tuple(inputs)


def parse_spec(text: str, base_dir: str | Path = ".") -> Spec:
    """Validate a spec given as TOML text; relative ``means_file`` paths start at ``base_dir``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"spec is not valid TOML: {exc}") from None
    try:
        model = SweepModel.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_validation_message(exc)) from None
    _check_size(model)
    base = Path(base_dir).resolve()
    policies = _policy_refs(model)
    instances, inputs = _checked_instance_refs(model, text, base)
    return Spec(model, text, base, instances, policies, inputs)


InstanceCheck = tuple[tuple[InstanceRef, ...], tuple[tuple[str, str], ...]]
_CHECKED: dict[tuple[str, Path], InstanceCheck] | None = None


@contextmanager
def instances_checked_once() -> Iterator[None]:
    """Within the block, :func:`parse_spec` checks the instances of each spec (text and folder)
    once and reuses them: for one operation that reads many stores' specs while no data file
    changes. Checking builds one instance of each source (reads the IMDB curves, draws a
    family's tables); a quick report parsed its stores' specs 326 times, 15 s of its 85 s
    (cProfile).
    The policies are resolved at every parse (the spec hash covers them). A nested block
    shares the outer one's."""
    global _CHECKED
    if _CHECKED is not None:
        yield
        return
    _CHECKED = {}
    try:
        yield
    finally:
        _CHECKED = None


def _checked_instance_refs(model: SweepModel, text: str, base: Path) -> InstanceCheck:
    """:func:`_instance_refs`, reused within :func:`instances_checked_once`."""
    if _CHECKED is None:
        return _instance_refs(model, base)
    key = (text, base)
    if key not in _CHECKED:
        _CHECKED[key] = _instance_refs(model, base)
    return _CHECKED[key]


def _check_size(model: SweepModel) -> None:
    """Refuse a sweep of more than :data:`MAX_CELLS` cells, with the size it would need."""
    n_instances = sum(src.count or 1 for src in model.instances)
    n_policies = len(model.policies)
    cells = n_instances * n_policies * len(model.grid) * model.seeds
    if cells > MAX_CELLS:
        raise SpecError(
            f"seeds: seeds={model.seeds:,} is not allowed: {n_instances:,} instances x "
            f"{n_policies} policies x {len(model.grid)} horizons x {model.seeds:,} seeds "
            f"make {cells:,} cells (result rows, at least {bytes_text(BYTES_PER_ROW * cells)} on "
            f"disk); a sweep holds at most {MAX_CELLS:,}: use fewer seeds or split the sweep"
        )


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file (data only: TOML, never evaluated or unpickled)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"spec file {str(p)!r} cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"spec file {str(p)!r} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at "
            f"position {exc.start}): save it as UTF-8"
        ) from None
    try:
        return parse_spec(text, p.parent)
    except SpecError as exc:
        raise SpecError(f"{p.name}: {exc}") from None
