"""Import rules the layer contract ([tool.importlinter] in pyproject.toml, checked
by ``make lint``) cannot express: no package imports another package's private
names (a leading underscore is a module's promise that only it relies on them)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.fixtures import REPO

PACKAGES = ("sql", "search", "extraction", "kg", "server", "evals", "training", "bench")


def private_imports(path: Path, package: str) -> list[str]:
    """``module.name`` of every private name ``path`` imports from another package."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            if top in PACKAGES and top != package:
                found += [
                    f"{node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_no_package_imports_another_packages_private_names() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {name}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for name in private_imports(path, package)
    ]
    assert offenders == []


def test_the_rule_sees_a_private_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from extraction.nlp.relations import _FOUND_WORDS, Mention\n"
        "from server.settings import __all__\n"
        "from .local import _mine\n"
    )
    assert private_imports(module, "training") == ["extraction.nlp.relations._FOUND_WORDS"]
    assert private_imports(module, "extraction") == []


def test_no_test_module_imports_another_test_module() -> None:
    """Shared helpers live in the fixture modules (``tests/fixtures/``), never in
    another test file: a test file can then move or change on its own."""

    def is_test_module(name: str) -> bool:
        return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")

    offenders = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        where = path.relative_to(REPO)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and is_test_module(node.module or ""):
                offenders.append(f"{where}: {node.module}")
            elif isinstance(node, ast.Import):
                offenders += [f"{where}: {a.name}" for a in node.names if is_test_module(a.name)]
    assert offenders == []


def _fixtures(path: Path) -> set[str]:
    return {
        node.name
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef)
        and any("fixture" in ast.unparse(d) for d in node.decorator_list)
    }


def test_fixtures_are_plugins_not_imports() -> None:
    """Fixtures reach tests through ``pytest_plugins`` (``tests/conftest.py``): a test
    module that imported a fixture by name would shadow it (and hide which one runs)."""
    modules = {
        f"tests.fixtures.{p.stem}": _fixtures(p) for p in (REPO / "tests" / "fixtures").glob("*.py")
    }
    fixtures = set().union(*modules.values())
    assert {"db", "graph_db", "search_db", "embedder"} <= fixtures
    conftest: dict[str, list[str]] = {}
    exec((REPO / "tests" / "conftest.py").read_text(encoding="utf-8"), conftest)
    assert {m for m, names in modules.items() if names} <= set(conftest["pytest_plugins"])
    offenders = []
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
                offenders += [
                    f"{path.relative_to(REPO)}: {a.name}" for a in node.names if a.name in fixtures
                ]
    assert offenders == []


def test_every_helper_a_test_imports_exists() -> None:
    """Imports inside test functions run only with their test: a helper module that
    moved would fail late, in one test; this finds it at once."""
    missing = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests."):
                target = REPO / (node.module or "").replace(".", "/")
                if not (target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()):
                    missing.append(f"{path.relative_to(REPO)}: {node.module}")
    assert missing == []
