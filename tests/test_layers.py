"""Import rules the layer contract ([tool.importlinter] in pyproject.toml, checked
by ``make lint``) cannot express: no package imports another package's private
names (a leading underscore is a module's promise that only it relies on them)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("sql", "search", "extraction", "kg", "server", "training", "bench")


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
        "from extraction.relations import _FOUND_WORDS, Mention\n"
        "from server.settings import __all__\n"
        "from .local import _mine\n"
    )
    assert private_imports(module, "training") == ["extraction.relations._FOUND_WORDS"]
    assert private_imports(module, "extraction") == []


def test_no_test_module_imports_another_test_module() -> None:
    """Shared helpers live in fixture modules (``tests/*_fixtures.py``, conftest),
    never in another test file: a test file can then move or change on its own."""
    offenders = []
    for path in sorted((REPO / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.test_"):
                offenders.append(f"{path.name}: {node.module}")
            elif isinstance(node, ast.Import):
                offenders += [
                    f"{path.name}: {a.name}" for a in node.names if a.name.startswith("tests.test_")
                ]
    assert offenders == []
