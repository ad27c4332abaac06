"""The application imports only what its runtime dependencies install.

`python3 tasks.py run` installs the project without its test extras, so a
module the app imports but only a test extra brings in passes every test
and breaks the quick start. Each third-party import of the shipped
packages must belong to a distribution that the runtime dependencies of
pyproject.toml require, directly or through their own requirements.
"""

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("config", "memory_app", "review_app")
_NAME = re.compile(r"^[A-Za-z0-9._-]+")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _runtime_closure() -> set[str]:
    """Distributions the runtime dependencies pull in, extras left out
    unless a requirement names them."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pending = [(_canonical(_NAME.match(req).group()), _extras(req)) for req in declared]
    seen: set[str] = set()
    visited: set[tuple[str, frozenset]] = set()
    while pending:
        name, extras = pending.pop()
        if (name, frozenset(extras)) in visited:
            continue
        visited.add((name, frozenset(extras)))
        seen.add(name)
        try:
            requirements = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for requirement in requirements:
            requirement_name, _, marker = requirement.partition(";")
            extra = re.search(r"extra\s*==\s*[\"']([^\"']+)", marker)
            if extra and extra.group(1) not in extras:
                continue
            pending.append(
                (_canonical(_NAME.match(requirement_name).group()), _extras(requirement_name))
            )
    return seen


def _extras(requirement: str) -> set[str]:
    found = re.match(r"^[A-Za-z0-9._-]+\s*\[([^\]]+)\]", requirement)
    return {extra.strip() for extra in found.group(1).split(",")} if found else set()


def _third_party_imports() -> set[str]:
    modules = set()
    for package in SHIPPED:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    return {m for m in modules if m not in sys.stdlib_module_names and m not in SHIPPED}


def test_every_import_of_the_app_comes_with_its_runtime_dependencies():
    providers = metadata.packages_distributions()
    closure = _runtime_closure()
    missing = {
        module: providers.get(module, ["(no installed distribution)"])
        for module in _third_party_imports()
        if not any(_canonical(dist) in closure for dist in providers.get(module, []))
    }
    assert missing == {}, f"imported by the app, not installed by `tasks.py run`: {missing}"
