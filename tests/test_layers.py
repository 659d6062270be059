"""The house rules, checked: imports go one way (down the layers that
docs/architecture.md draws) and no module imports itself through others.

Every import counts: top-level, inside functions (the lazy ones) and under
`TYPE_CHECKING`, because each is a dependency a reader has to follow. The
layers are read from the picture in docs/architecture.md, so the map and the
house cannot drift apart: a new top-level module that the picture does not
place fails here too. The UI has floors of its own (the page, handlers, state,
views), drawn in a second picture and checked the same way inside `ui/`.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "orbench_play"
DOC = REPO / "docs" / "architecture.md"


def read_layers(text: str, marker: str = "<!-- layers -->") -> list[tuple[str, list[str]]]:
    """A layer picture: the fenced block after `marker` (`<!-- layers -->` for the
    package, `<!-- ui layers -->` for the UI's floors), top layer first, one line
    per layer: its name, then its members separated by `·` (a trailing `/` marks
    a package)."""
    at = text.index(marker)
    block = re.search(r"```\w*\n(.*?)```", text[at:], re.S)
    assert block, f"docs/architecture.md: no fenced block after {marker}"
    layers = []
    for line in block.group(1).splitlines():
        if not line.strip() or set(line.strip()) <= set("│▼|v "):  # blank, or only arrows between layers
            continue
        name, _, rest = line.strip().partition(" ")
        members = [m.strip().rstrip("/") for m in rest.split("·") if m.strip()]
        layers.append((name, members))
    return layers


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(dotted: str) -> bool:
    path = REPO / Path(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), is_package=path.name == "__init__.py")


def imports_in(source: str, here: str, *, is_package: bool) -> set[str]:
    """Every orbench_play module that the code of module `here` imports,
    resolved to the module file (`from . import x` is module x when x is a
    module, else the package)."""
    package = here if is_package else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("orbench_play"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not source.startswith("orbench_play"):
                continue
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                found.add(candidate if is_module(candidate) else source)
    found.discard(here)
    return found


def import_graph() -> dict[str, set[str]]:
    graph = {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}
    assert graph.pop(ROOT) == set(), "orbench_play/__init__.py must not import the package's modules"
    for targets in graph.values():
        targets.discard(ROOT)  # the version: below everything
    return graph


ROOT = "orbench_play"
"""The package's own `__init__` holds only the version and imports nothing of ours."""

UI = "orbench_play.ui"
UI_MARKER = "<!-- ui layers -->"


def component(module: str, within: str = ROOT) -> str:
    """The piece of `within` a module belongs to: `orbench_play.engine.calls` -> `engine`;
    within the UI, `orbench_play.ui.state.session` -> `state`, `orbench_play.ui.layout`
    -> `layout`, and the UI's own `__init__` -> `__init__`."""
    if module == within:
        return "__init__"
    return module[len(within) + 1 :].split(".")[0]


def inside(graph: dict[str, set[str]], within: str) -> dict[str, set[str]]:
    """The imports among the modules of package `within` (its `__init__` included)."""

    def mine(module: str) -> bool:
        return module == within or module.startswith(within + ".")

    return {m: {t for t in targets if mine(t)} for m, targets in graph.items() if mine(m)}


def components(graph: dict[str, set[str]], within: str = ROOT) -> dict[str, set[str]]:
    """The graph of the pieces of `within`: an arrow where any module of one imports one of another."""
    found: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph.items():
        a = component(module, within)
        found[a].update(b for b in (component(t, within) for t in targets) if b != a)
    return dict(found)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                found.append(sorted(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward_imports(graph: dict[str, set[str]], layers: list[tuple[str, list[str]]], within: str = ROOT) -> list[str]:
    rank = {member: len(layers) - i for i, (_, members) in enumerate(layers) for member in members}
    bad = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            a, b = component(module, within), component(target, within)
            if a != b and rank[b] > rank[a]:
                bad.append(f"{module} -> {target}")
    return bad


# -- the checks on the real tree ----------------------------------------------------


def test_the_picture_places_every_top_level_module() -> None:
    layers = read_layers(DOC.read_text(encoding="utf-8"))
    placed = [m for _, members in layers for m in members]
    assert len(placed) == len(set(placed)), f"placed twice: {sorted(m for m in placed if placed.count(m) > 1)}"
    present = {component(m) for m in import_graph()}
    assert present - set(placed) == set(), (
        f"docs/architecture.md's layer picture does not place {present - set(placed)}"
    )
    assert set(placed) - present == set(), f"the layer picture names what does not exist: {set(placed) - present}"


def test_the_ui_picture_places_every_piece_of_the_ui() -> None:
    layers = read_layers(DOC.read_text(encoding="utf-8"), UI_MARKER)
    placed = [m for _, members in layers for m in members]
    assert len(placed) == len(set(placed)), f"placed twice: {sorted(m for m in placed if placed.count(m) > 1)}"
    present = {component(m, UI) for m in inside(import_graph(), UI)}
    assert present - set(placed) == set(), f"the UI's layer picture does not place {present - set(placed)}"
    assert set(placed) - present == set(), f"the UI's layer picture names what does not exist: {set(placed) - present}"


def test_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles (break each by moving the shared piece down): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_imports_only_go_down_the_layers() -> None:
    bad = upward_imports(import_graph(), read_layers(DOC.read_text(encoding="utf-8")))
    assert bad == [], "imports against the layering in docs/architecture.md:\n" + "\n".join(bad)


def test_the_ui_imports_only_go_down_its_floors() -> None:
    layers = read_layers(DOC.read_text(encoding="utf-8"), UI_MARKER)
    bad = upward_imports(inside(import_graph(), UI), layers, UI)
    assert bad == [], "imports against the UI's floors in docs/architecture.md:\n" + "\n".join(bad)


def test_no_cycles_between_packages() -> None:
    """Stricter than modules: no two pieces import each other by any modules,
    whether they share a layer or not (the package's pieces, and the UI's)."""
    graph = import_graph()
    found = cycles(components(graph)) + cycles(components(inside(graph, UI), UI))
    assert found == [], "pieces that import each other: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_package_says_what_it_owns_and_may_import() -> None:
    quiet = []
    for init in sorted([*PACKAGE.glob("*/__init__.py"), *PACKAGE.glob("ui/*/__init__.py")]):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        if "may import" not in doc.lower():
            quiet.append(module_name(init))
    assert quiet == [], f"package docstrings that do not say what they may import: {quiet}"


# -- the checker itself can fail ---------------------------------------------------


def test_the_checker_finds_a_cycle_and_an_upward_import() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    graph["orbench_play.cache.store"] = {"orbench_play.cache.scope"}
    graph["orbench_play.cache.scope"] = {"orbench_play.cache.store"}
    graph["orbench_play.types"] = {"orbench_play.engine.fanout"}
    graph["orbench_play.engine.fanout"] = {"orbench_play.types"}
    assert sorted(map(tuple, cycles(graph))) == [
        ("orbench_play.cache.scope", "orbench_play.cache.store"),
        ("orbench_play.engine.fanout", "orbench_play.types"),
    ]
    layers = [("engine", ["engine"]), ("services", ["cache"]), ("foundation", ["types"])]
    assert upward_imports(graph, layers) == ["orbench_play.types -> orbench_play.engine.fanout"]
    assert cycles(components(graph)) == [["engine", "types"]]


def test_the_checker_finds_an_upward_import_inside_the_ui() -> None:
    graph = {
        "orbench_play.ui": {"orbench_play.ui.layout"},
        "orbench_play.ui.layout": {"orbench_play.ui.handlers.playground"},
        "orbench_play.ui.handlers.playground": {"orbench_play.ui.state.session", "orbench_play.engine"},
        "orbench_play.ui.state.session": {"orbench_play.ui.views.grid_view"},
        "orbench_play.ui.views.grid_view": {"orbench_play.ui.state.session"},
    }
    layers = [("page", ["__init__", "layout"]), ("handlers", ["handlers"]), ("state", ["state"]), ("views", ["views"])]
    assert upward_imports(inside(graph, UI), layers, UI) == [
        "orbench_play.ui.views.grid_view -> orbench_play.ui.state.session"
    ]
    assert cycles(components(inside(graph, UI), UI)) == [["state", "views"]]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from . import engine\n", {"orbench_play.engine"}),
        ("from .engine import calls\n", {"orbench_play.engine.calls"}),
        ("from .types import Prompt\n", {"orbench_play.types"}),
        ("def f():\n    from .cache import paths\n", {"orbench_play.cache.paths"}),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .ui.state import session\n",
            {"orbench_play.ui.state.session"},
        ),
        ("import json\nfrom pathlib import Path\n", set()),
    ],
)
def test_imports_are_resolved_to_modules(source: str, expected: set[str]) -> None:
    assert imports_in(source, "orbench_play.probe", is_package=False) == expected


def test_relative_imports_in_a_package_resolve_from_the_package() -> None:
    assert imports_in("from .store import x\nfrom .. import types\n", "orbench_play.cache", is_package=True) == {
        "orbench_play.cache.store",
        "orbench_play.types",
    }
