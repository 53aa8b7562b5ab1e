"""The map a newcomer starts from cannot drift from the code: docs/architecture.md's layer
table has one row per layer, and every package and top-level module of the layer packages
(those `.importlinter` checks) is named in it exactly once, under its own package, with
nothing named that the code does not have. Every other path the page names exists.

The table is where someone about to change Sounding learns where a thing lives; parallel
branches that each added a row once left it with 21 rows for 7 layers, each a different
subset. The lists come from the file tree, not from a hand-kept copy."""

from __future__ import annotations

import configparser
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"
CODE = re.compile(r"`([^`]+)`")


def layer_packages() -> list[str]:
    """The root packages import-linter checks: the packages the layer table maps."""
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter")
    return parser["importlinter"]["root_packages"].split()


def entries(package: str) -> set[str]:
    """A package's top-level modules (`name.py`) and subpackages (`name/`); `__init__.py`
    is the package itself, and a folder without one (templates, static files) is data."""
    found = set()
    for path in (REPO / package).iterdir():
        if path.suffix == ".py" and path.name != "__init__.py":
            found.add(path.name)
        elif path.is_dir() and (path / "__init__.py").exists():
            found.add(f"{path.name}/")
    return found


def _unparenthesised(text: str) -> str:
    """The text outside parentheses: what a row says of an entry is in parentheses, and
    the files it mentions there (`stacktrace/` (with `frames.py`...)) are not entries."""
    kept, depth = [], 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def layer_rows(markdown: str) -> list[tuple[str, str]]:
    """The (layer, package cell) of each row of the table under "## The layers"."""
    section = markdown.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 3:
            continue
        if cells[0] in ("Layer", "") or set(cells[0]) <= {"-"}:
            continue
        rows.append((cells[0], cells[1]))
    return rows


def named(cell: str, packages: list[str]) -> Iterator[tuple[str, str]]:
    """Each (package, entry) a package cell names: `receiver/`: opens the receiver's
    entries, `auth.py` or `http/` is one of them (`proto/`'s `sounding/` too); a longer
    path is a reference."""
    package = None
    for match in CODE.finditer(_unparenthesised(cell)):
        code = match.group(1)
        opens = match.string.startswith(":", match.end())
        if opens and code.endswith("/") and code[:-1] in packages:
            package = code[:-1]
            yield package, ""
        elif package and "/" not in code.rstrip("/"):
            yield package, code


def map_problems(markdown: str, packages: list[str],
                 code: dict[str, set[str]]) -> list[str]:
    """What the table gets wrong, each naming the layer, package or entry."""
    rows = layer_rows(markdown)
    problems = [f"layer {layer!r} has {count} rows, not one"
                for layer, count in Counter(layer for layer, _ in rows).items() if count > 1]
    opened: Counter[str] = Counter()
    listed: Counter[tuple[str, str]] = Counter()
    for _, cell in rows:
        for package, entry in named(cell, packages):
            if entry:
                listed[package, entry] += 1
            else:
                opened[package] += 1
    for package in packages:
        if opened[package] != 1:
            problems.append(f"package {package}/ is on {opened[package]} rows, not one")
        for entry in sorted(code[package]):
            if listed[package, entry] != 1:
                problems.append(f"{package}/{entry} is named {listed[package, entry]} times")
    problems += [f"{package}/{entry} is named but does not exist"
                 for package, entry in sorted(listed) if entry not in code[package]]
    return problems


def test_the_layer_table_has_one_row_per_layer_naming_everything_once() -> None:
    packages = layer_packages()
    code = {package: entries(package) for package in packages}
    assert map_problems(ARCHITECTURE.read_text(), packages, code) == []


def test_a_duplicated_missing_or_stale_entry_fails() -> None:
    markdown = (
        "## The layers\n\n| Layer | Package | Knows |\n|---|---|---|\n"
        "| Model | `model/`: `a.py` (with `b.py`: its part), `c/` | nothing |\n"
        "| Model | `model/`: `a.py`, `gone.py` | nothing |\n"
        "| Shell | `shell/`: `cli/` (one module per command, `model/a.py` too) | all |\n"
        "\n## Next\n| x | `model/`: `a.py` | y |\n")
    code = {"model": {"a.py", "c/", "d.py"}, "shell": {"cli/", "main.py"}}
    assert map_problems(markdown, ["model", "shell"], code) == [
        "layer 'Model' has 2 rows, not one",
        "package model/ is on 2 rows, not one",
        "model/a.py is named 2 times",
        "model/d.py is named 0 times",
        "shell/main.py is named 0 times",
        "model/gone.py is named but does not exist",
    ]


# --- every other path the page names -------------------------------------------------

PATH = re.compile(r"^[a-z_]+/[\w./-]*$")
# What a file's name ends in; `model/sourcemap.SourceMaps` is a name in a module, not a path.
SUFFIXES = {"", ".py", ".md", ".proto", ".txt", ".in", ".html", ".yaml", ".toml", ".json"}


def missing_paths(markdown: str, packages: list[str]) -> list[str]:
    """Each path of the repository the page names in code (`storage/writer/commit.py`,
    `extensions/crons/`) that is not there; a name inside a row's package cell is checked
    by the table's own test, under its package."""
    roots = set(packages) | {"tests", "docs", "deploy", "requirements", "bench"}
    missing = []
    for code in sorted(set(CODE.findall(markdown))):
        path = code.split(" ")[0].rstrip(":,")
        if (PATH.match(path) and path.split("/")[0] in roots
                and Path(path).suffix in SUFFIXES and not (REPO / path).exists()):
            missing.append(path)
    return missing


def test_every_path_the_page_names_exists() -> None:
    assert missing_paths(ARCHITECTURE.read_text(), layer_packages()) == []
