"""MkDocs hook: the policy pages are written from the policy registry at every build.

``policies.md`` lists every policy of :data:`risingbandits.policies.POLICIES` with its summary,
paper, parameters and presets; ``api/policy-classes.md`` documents each policy's class. Neither
file exists in the repository, so neither can go stale.
"""

from __future__ import annotations

from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from risingbandits.policies import POLICIES, Policy, make_policy

INTRO = """# Policies

Every policy registered in `risingbandits.policies.POLICIES`, in the registry's order (this page
is generated from the registry when the site is built; `risingbandits list` prints the same
names). Use a name with `rb.make_policy(name, preset=..., **params)`, `rb.simulate`,
`ModelSelector(..., policy=name)` or `--policy NAME` on the command line; parameters are
overridden with keyword arguments or `--param NAME=VALUE`, and a value outside the allowed range
is refused with one line naming it. "Uses T" is for the default parameters: a parameter left at
`auto` may be what makes a policy read the horizon.
"""


def cell(text: Any) -> str:
    """``text`` safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def class_path(cls: type[Policy]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def overview() -> list[str]:
    rows = ["| name | summary | uses T | class |", "|---|---|---|---|"]
    for name, cls in POLICIES.items():
        uses = "yes" if make_policy(name).uses_horizon else "no"
        link = f"[`{cls.__name__}`][{class_path(cls)}]"
        rows.append(f"| [`{name}`](#{name}) | {cell(cls.summary)} | {uses} | {link} |")
    return rows


def section(name: str, cls: type[Policy]) -> list[str]:
    lines = [f"## {name}", "", cell(cls.summary), "", f"- Paper: {cls.paper}"]
    if cls.reconstruction:
        lines.append(
            "- **Reconstruction**: the paper's algorithm was not available (see the class)"
        )
    lines += [f"- Class: [`{cls.__name__}`][{class_path(cls)}]", ""]
    if cls.params_spec:
        lines += ["| parameter | default | allowed | meaning |", "|---|---|---|---|"]
        for p in cls.params_spec:
            lines.append(f"| `{p.name}` | `{p.default!r}` | {cell(p.allowed())} | {cell(p.doc)} |")
    else:
        lines.append("No parameters.")
    defaults = {p.name: p.default for p in cls.params_spec}
    presets = []
    for preset, values in cls.presets.items():
        changed = {k: v for k, v in values.items() if defaults.get(k) != v}
        shown = ", ".join(f"`{k}={v!r}`" for k, v in changed.items()) or "the defaults"
        presets.append(f"`{preset}`: {shown}")
    if presets:
        lines += ["", "Presets: " + "; ".join(presets) + "."]
    return [*lines, ""]


def policies_page() -> str:
    lines = [INTRO, *overview(), ""]
    for name, cls in POLICIES.items():
        lines += section(name, cls)
    return "\n".join(lines)


def classes_page() -> str:
    lines = [
        "# Policy classes",
        "",
        "The class of every registered policy (generated from the registry); the methods they",
        "share are documented with [`Policy`][risingbandits.policies.base.Policy].",
        "",
    ]
    for cls in POLICIES.values():
        lines += [f"::: {class_path(cls)}", "    options:", "      members: false", ""]
    return "\n".join(lines)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, "policies.md", content=policies_page()))
    files.append(File.generated(config, "api/policy-classes.md", content=classes_page()))
    return files
