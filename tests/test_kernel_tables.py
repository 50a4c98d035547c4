"""Each code table shared by a kernel and the Python layer exists once: the kernel declares
the codes (ranking methods, metric columns and label-count rows, aggregation modes, VG-RAM
models and tie policies, ARFF attribute kinds, instruction-set paths) and the Python
modules use the kernel's own objects; no Python source writes the codes again."""
import ast
from pathlib import Path

import fastrank
from fastrank import _config, ranking, wnn
from fastrank._ext import _simd, cosine_topk, text_formats, tie_metrics, tie_ranks, vgram
from fastrank.metrics import _common
from fastrank.neighbors import _knn

SOURCES = Path(fastrank.__file__).parent


KERNEL_TABLES = {
    "tie_ranks.METHODS": tie_ranks.METHODS,
    "tie_metrics.FAMILIES": tie_metrics.FAMILIES,
    **{f"tie_metrics.DOC_COLUMNS[{f!r}]": tie_metrics.DOC_COLUMNS[f]
       for f in ("ordinal", "group", "group_coverage", "expected")},
    "tie_metrics.LAB_ROWS": tie_metrics.LAB_ROWS,
    "cosine_topk.AGGREGATES": cosine_topk.AGGREGATES,
    "vgram.MODELS": vgram.MODELS,
    "vgram.TIE_POLICIES": vgram.TIE_POLICIES,
    "text_formats.ATTRIBUTE_KINDS": text_formats.ATTRIBUTE_KINDS,
}


def test_the_python_layer_uses_the_kernels_objects():
    assert ranking._kernel() is tie_ranks  # (its METHODS and TIE_GROUPS read there)
    assert _knn._AGGREGATES is cosine_topk.AGGREGATES
    assert wnn._POLICY_CODES is vgram.TIE_POLICIES
    assert (wnn.VGRAM._model, wnn.VGRAMCor._model) == (vgram.MODELS["vgram"],
                                                       vgram.MODELS["vgram_cor"])
    assert (_common.ORDINAL, _common.GROUP, _common.EXPECTED) == tuple(
        tie_metrics.FAMILIES[f] for f in ("ordinal", "group", "expected"))
    for mine, kernel in [(_common._ORDINAL_COLS, "ordinal"), (_common._GROUP_COLS, "group"),
                         (_common._COVERAGE_COLS, "group_coverage"),
                         (_common._EXPECTED_COLS, "expected")]:
        assert mine is tie_metrics.DOC_COLUMNS[kernel]
    assert _common.N_SLOTS == tie_metrics.N_DOC_COLUMNS
    assert _common.N_LAB == tie_metrics.N_LAB_ROWS
    assert (_common.LAB_REL, _common.LAB_FIXED) == (tie_metrics.LAB_ROWS["relevant"],
                                                    tie_metrics.LAB_ROWS["fixed"])
    assert _config.SIMD_PATHS is _simd.PATHS and _config.KERNEL_FEATURES is _simd.FEATURES


def test_the_public_option_names_are_the_kernels():
    assert tuple(tie_ranks.METHODS) == ranking.RANK_METHODS
    assert tuple(vgram.TIE_POLICIES) == wnn.TIE_POLICIES


def test_the_kernels_codes_are_consistent():
    columns = [code for table in tie_metrics.DOC_COLUMNS.values()
               for code in (table.values() if isinstance(table, dict) else [table])]
    assert sorted(columns) == list(range(tie_metrics.N_DOC_COLUMNS))   # each slot once
    rows = tie_metrics.LAB_ROWS
    pairs = [rows[f] for f in ("ordinal", "group", "expected", "fixed")]  # two rows each
    used = sorted([r for p in pairs for r in (p, p + 1)] + [rows["relevant"]])
    assert used == list(range(tie_metrics.N_LAB_ROWS))
    flags = list(tie_metrics.FAMILIES.values())
    assert all(f & (f - 1) == 0 for f in flags) and len(set(flags)) == len(flags)
    for name in ("tie_ranks.METHODS", "cosine_topk.AGGREGATES", "vgram.MODELS",
                 "vgram.TIE_POLICIES", "text_formats.ATTRIBUTE_KINDS"):
        codes = list(KERNEL_TABLES[name].values())
        assert sorted(codes) == list(range(len(codes))), name
    assert tie_ranks.TIE_GROUPS not in tie_ranks.METHODS.values()


def _literal_tables(tree):
    """Every mapping written in the source: {"name": int, ...} and dict(name=int, ...), as
    (line, {name: code})."""
    for node in ast.walk(tree):
        pairs = []
        if isinstance(node, ast.Dict):
            pairs = [(k.value, v.value) for k, v in zip(node.keys, node.values)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)
                     and isinstance(v, ast.Constant) and type(v.value) is int]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
            pairs = [(kw.arg, kw.value.value) for kw in node.keywords
                     if kw.arg and isinstance(kw.value, ast.Constant)
                     and type(kw.value.value) is int]
        if len(pairs) >= 2:
            yield node.lineno, dict(pairs)


def test_no_python_source_writes_a_kernel_table_again():
    """No mapping literal of the package's Python sources gives two or more names of a
    kernel table their codes (as the copies of the tables did)."""
    copies = []
    for path in sorted(SOURCES.rglob("*.py")):
        for line, table in _literal_tables(ast.parse(path.read_text(), str(path))):
            for name, kernel in KERNEL_TABLES.items():
                common = {k: v for k, v in table.items() if kernel.get(k) == v}
                if len(common) >= 2:
                    copies.append(f"{path.relative_to(SOURCES)}:{line} copies {name}")
    assert copies == []


def test_the_scan_finds_a_copy():
    """The scan of the previous test recognises both ways of writing a copy."""
    tree = ast.parse('A = {"max": 0, "sum": 1, "count": 2}\nB = dict(one_error=1, coverage=2)')
    assert dict(_literal_tables(tree)) == {1: {"max": 0, "sum": 1, "count": 2},
                                           2: {"one_error": 1, "coverage": 2}}
