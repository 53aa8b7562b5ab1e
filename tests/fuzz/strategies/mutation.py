"""Structure-aware mutation: a valid body with one to a few of its values replaced by
odd ones, members removed or added, values wrapped deep."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.strategies.odd import odd_text, odd_values, same_kind
from tests.fuzz.strategies.raw import dumps

Path = tuple[Any, ...]


def paths(value: Any, prefix: Path = ()) -> list[Path]:
    """Every place in a JSON tree (not the root)."""
    out: list[Path] = []
    if isinstance(value, dict):
        for key, child in value.items():
            out.append((*prefix, key))
            out.extend(paths(child, (*prefix, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.append((*prefix, index))
            out.extend(paths(child, (*prefix, index)))
    return out


def _parent(tree: Any, path: Path) -> Any:
    for step in path[:-1]:
        tree = tree[step]
    return tree


@dataclass
class Mutated:
    """A mutated body and where it was changed."""

    body: Any
    changed: list[Path] = field(default_factory=list)

    def __repr__(self) -> str:
        # Hypothesis prints a failing example: keep it readable (SOUNDING_FUZZ_LOG
        # keeps whole bodies).
        text = dumps(self.body)
        shown = text[:3000].decode("utf-8", "backslashreplace")
        return f"Mutated(changed={self.changed!r}, body={shown}{'...' if len(text) > 3000 else ''})"


@st.composite
def mutations(draw: st.DrawFn, base: Any, max_changes: int = 3) -> Mutated:
    """1 to `max_changes` changes to a copy of `base`: a value replaced by an odd one
    (mostly of the same kind, so that type checks pass and value rules are tried), a
    member removed, a member added, a value wrapped deep."""
    body = json.loads(json.dumps(base))
    changed: list[Path] = []
    for _ in range(draw(st.integers(1, max_changes))):
        candidates = paths(body)
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        parent = _parent(body, path)
        operation = draw(st.sampled_from(["replace"] * 6 + ["remove", "add", "wrap"]))
        if operation == "remove":
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = None
        elif operation == "add" and isinstance(parent, dict):
            parent[draw(odd_text())] = draw(odd_values())
        elif operation == "wrap":
            parent[path[-1]] = _wrap(parent[path[-1]], draw(st.sampled_from([2, 17, 130])))
        elif draw(st.integers(0, 3)):
            parent[path[-1]] = draw(same_kind(parent[path[-1]]))
        else:
            parent[path[-1]] = draw(odd_values())
        changed.append(path)
    return Mutated(body, changed)


def _wrap(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value
