"""The public API from the outside, and the boundaries inside the package.

* Every public name imports from the path the documentation gives it: the top-level
  exports (``fastrank.__all__``), each public module's ``__all__``, and every name the API
  pages list (``docs/api.rst``, ``.. currentmodule::`` and its ``autosummary`` entries).
* No module imports a private name (``_x``) of another part of the package: a package's
  private modules share their private names among themselves (``fastrank.study._run`` uses
  ``fastrank.study._plan``), and every module may use the shared private helpers listed in
  :data:`SHARED`; everything else crosses a boundary only by a public name.
"""
import ast
import importlib
import pathlib
import re

import pytest

import fastrank

ROOT = pathlib.Path(fastrank.__file__).parent
API_PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.rst"

#: The public modules that declare their names in ``__all__`` (the others' public names are
#: those their API page lists).
PUBLIC_MODULES = ("fastrank", "fastrank.metrics", "fastrank.stats", "fastrank.study",
                  "fastrank.study.compare", "fastrank.datasets", "fastrank.text",
                  "fastrank.model_selection", "fastrank.report", "fastrank.dask",
                  "fastrank.neighbors", "fastrank.calibration")

#: The shared private helpers any module may import private names from: the vocabulary of
#: the study and its reports, argument checks, type aliases, the configuration, atomic
#: writing, threads, the checked npz reader, the compiled kernels, the exact cosine search
#: (its prepared base, shared by the neighbour classifiers, their sharded search and the
#: VG-RAM WNN's column restriction), and the merging of partial VG-RAM searches.
SHARED = ("fastrank._vocabulary", "fastrank._validation", "fastrank._typing",
          "fastrank._config", "fastrank._atomic", "fastrank._parallel", "fastrank._npzfile",
          "fastrank._ext", "fastrank.neighbors._search", "fastrank._vgram_merge")


def documented_names():
    """(module, name) of every entry of the API pages' autosummary lists."""
    pairs, module, in_list = [], None, False
    for line in API_PAGE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module, in_list = m.group(1), False
        elif line.startswith(".. autosummary::"):
            in_list = True
        elif in_list and re.match(r"   [A-Za-z_][\w.]*$", line):
            pairs.append((module, line.strip()))
        elif in_list and line and not line.startswith(" "):
            in_list = False
    return pairs


def test_the_api_pages_list_names():
    modules = {m for m, _ in documented_names()}
    assert len(documented_names()) > 100
    assert {"fastrank", "fastrank.study", "fastrank.study.compare", "fastrank.report",
            "fastrank.datasets", "fastrank.stats"} <= modules
    assert "fastrank.benchmark" not in modules  # documented at its new path only


@pytest.mark.parametrize("module, name", documented_names())
def test_documented_name_imports_from_its_page(module, name):
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    assert obj is not None


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_public_module_exports_what_it_declares(module):
    mod = importlib.import_module(module)
    assert isinstance(mod.__all__, list) and mod.__all__, f"{module} declares no __all__"
    assert len(set(mod.__all__)) == len(mod.__all__)
    namespace = {}
    exec(f"from {module} import *", namespace)  # what `import *` gives is what __all__ says
    assert set(mod.__all__) <= set(namespace)
    for name in mod.__all__:
        assert getattr(mod, name) is namespace[name]


def test_top_level_exports_are_the_modules_objects():
    for name in fastrank.__all__:
        if name in ("__version__", "get_include"):  # defined in fastrank/__init__.py itself
            assert name in dir(fastrank)
            continue
        module = importlib.import_module(f"fastrank.{fastrank._EXPORTS[name]}")
        assert getattr(fastrank, name) is getattr(module, name)
        assert name in dir(fastrank)
    assert fastrank._EXPORTS["run_benchmark"] == "study.compare"


def test_the_old_benchmark_module_is_a_deprecated_alias():
    import sys
    sys.modules.pop("fastrank.benchmark", None)
    with pytest.warns(DeprecationWarning, match="fastrank.study.compare"):
        old = importlib.import_module("fastrank.benchmark")
    from fastrank.study import compare
    for name in old.__all__:
        assert getattr(old, name) is getattr(compare, name)


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        yield path, ".".join(parts), is_package


def _part(module):
    """The part of the package a module belongs to: its first-level subpackage, or the
    module itself at the top level."""
    parts = module.split(".")
    if len(parts) > 2 and (ROOT / parts[1]).is_dir():
        return ".".join(parts[:2])
    if len(parts) == 2 and (ROOT / parts[1]).is_dir():
        return module
    return module


def _resolve(importer, is_package, node):
    if node.level == 0:
        return node.module
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _shared(module):
    return any(module == s or module.startswith(s + ".") for s in SHARED)


def private_imports():
    """(file, line, importer, source, name) of every private name a module imports from
    another part of the package (outside :data:`SHARED`), by ``from ... import`` or as an
    attribute of an imported module."""
    found = []
    for path, module, is_package in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}  # local name -> fastrank module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node)
                if not source or not source.startswith("fastrank"):
                    continue
                for alias in node.names:
                    name = alias.name
                    full = f"{source}.{name}"
                    if (ROOT.parent / full.replace(".", "/")).with_suffix(".py").exists() or \
                            (ROOT.parent / full.replace(".", "/")).is_dir():
                        aliases[alias.asname or name] = full  # a module, not a name
                        if name.startswith("_") and not _shared(full) \
                                and _part(full) != _part(module):
                            found.append((path.name, node.lineno, module, full, name))
                        continue
                    if name.startswith("_") and not name.startswith("__") \
                            and not _shared(source) and _part(source) != _part(module):
                        found.append((path.name, node.lineno, module, source, name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("fastrank") and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") \
                    and not node.attr.startswith("__"):
                source = aliases[node.value.id]
                if not _shared(source) and _part(source) != _part(module):
                    found.append((path.name, node.lineno, module, source, node.attr))
    return found


def test_the_scan_sees_the_package():
    modules = {m for _, m, _ in _modules()}
    assert {"fastrank", "fastrank.study", "fastrank.report", "fastrank._vocabulary"} <= modules
    assert _part("fastrank.study._run") == _part("fastrank.study._plan") == "fastrank.study"
    assert _part("fastrank.neighbors") != _part("fastrank.wnn")


def test_the_scan_finds_a_private_import():
    tree = ast.parse("from ..neighbors import _Base\n")
    node = tree.body[0]
    assert _resolve("fastrank.dask._sharded", False, node) == "fastrank.neighbors"
    assert _resolve("fastrank.study", True, ast.parse("from ._plan import x").body[0]) \
        == "fastrank.study._plan"


def test_no_module_imports_a_private_name_across_the_package():
    assert private_imports() == []


def test_no_module_is_too_long():
    """One concept per module: none of the Python modules above 600 lines (the compiled
    kernels' drivers are .pyx files, outside this count)."""
    long = {str(path.relative_to(ROOT)): n for path, _, _ in _modules()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
