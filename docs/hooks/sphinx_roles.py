"""Griffe extension: Sphinx roles in docstrings (``:class:`~a.B```) become API links.

The library's docstrings name other objects the Sphinx way. Each role becomes an optional
cross-reference: a link when the target is on a page of the site, plain code otherwise.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc):`(~?)([\w.]+)`")


def target_path(obj: griffe.Object, name: str) -> str:
    """The full path ``name`` means inside ``obj`` (relative names as Sphinx reads them)."""
    if name.startswith("."):
        module = obj.module
        base = module if module.is_init_module else module.parent
        return f"{base.path if base else ''}{name}"
    head, dot, rest = name.partition(".")
    try:
        return obj.resolve(head) + dot + rest
    except griffe.NameResolutionError:
        return name


def convert(obj: griffe.Object, text: str) -> str:
    """``text`` with every role replaced by an optional autorefs link."""

    def link(match: re.Match[str]) -> str:
        short, name = match.group(1), match.group(2)
        title = name.lstrip(".").rsplit(".", 1)[-1] if short else name.lstrip(".")
        path = target_path(obj, name)
        return f'<autoref identifier="{path}" optional><code>{title}</code></autoref>'

    return ROLE.sub(link, text)


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring of a package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        pending: list[griffe.Object] = [pkg]
        while pending:
            obj = pending.pop()
            if obj.docstring is not None:
                obj.docstring.value = convert(obj, obj.docstring.value)
            pending.extend(m for m in obj.members.values() if isinstance(m, griffe.Object))
