"""benchmarks/RESULTS.md is the rendering of the committed benchmark JSON, so the two cannot
drift; the renderer's ratios are peer time / fastrank time and a row whose benchmark is
missing is an error, not a silently shorter table."""
import copy
import importlib.util
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("render_results",
                                               BENCHMARKS / "render_results.py")
render_results = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(render_results)


def test_results_md_equals_the_rendering_of_the_committed_json():
    assert (BENCHMARKS / "RESULTS.md").read_text() == render_results.render()


def test_every_committed_result_file_gives_rows():
    runs = render_results.load_runs()
    assert runs
    used = {row.file for row in render_results.ROWS}
    used |= {file for (cpu, file), run in runs.items()
             if render_results.memory_rows({(cpu, file): run})}
    assert {file for _, file in runs} <= used


def test_memory_rows_give_the_growth_above_the_imports():
    run = {"benchmarks": [{"name": "test_stream_peak_memory[fastrank]", "stats": {"min": 2.5},
                           "extra_info": {"rows": 10**7, "labels": 100, "growth_mib": 24.75}}]}
    assert render_results.memory_rows({("cpu", "bench_toy"): run}) == [
        f"| {render_results.STREAMED['fastrank']} | 10 000 000 × 100 | 25 MiB | 2.50 s "
        "| `cpu/bench_toy` |"]


def _toy_run(ours_1, ours_2, peer):
    bench = [("test_ours[1]", ours_1), ("test_ours[2]", ours_2), ("test_peer", peer)]
    return {"datetime": "2026-01-01T00:00:00", "machine_info": {"command": "pytest toy"},
            "benchmarks": [{"name": n, "stats": {"min": s}} for n, s in bench]}


def test_ratio_is_peer_time_over_fastrank_time(monkeypatch):
    row = render_results.Row("Toy", "toy kernel", "toy peer", "n", "bench_toy",
                             "test_ours[{t}]", "test_peer")
    monkeypatch.setattr(render_results, "ROWS", [row])
    lines = render_results.table_rows({("cpu", "bench_toy"): _toy_run(0.5, 0.25, 2.0)})
    assert lines == ["| toy kernel | toy peer | n | 1 / 2 | 500 ms / 250 ms | 2.00 s "
                     "| 4.00 / 8.00 | `cpu/bench_toy` |"]


def test_grid_rows_of_a_path_the_run_did_not_measure_are_left_out(monkeypatch):
    """A CPU without AVX-512 measures the grid's avx2 cells only: its run gives those rows
    and none of the avx512 ones; a measured path's missing cell is still an error."""
    rows = [render_results.Row("Toy", f"toy {path}", "toy peer", "n", "topk_grid",
                               f"ours[{path}]", f"peer[{path}]", (1,), path=path)
            for path in ("avx2", "avx512")]
    monkeypatch.setattr(render_results, "ROWS", rows)
    run = {"machine_info": {"fastrank": {"kernel_paths": {"cosine_topk": "avx2"}}},
           "benchmarks": [{"name": "ours[avx2]", "stats": {"min": 0.5}},
                          {"name": "peer[avx2]", "stats": {"min": 1.0}}]}
    lines = render_results.table_rows({("cpu", "topk_grid"): run})
    assert lines == ["| toy avx2 | toy peer | n | 1 | 500 ms | 1.00 s | 2.00 | `cpu/topk_grid` |"]
    run["machine_info"]["fastrank"]["kernel_paths"]["cosine_topk"] = "avx2 and avx512"
    with pytest.raises(KeyError, match=re.escape("ours[avx512]")):
        render_results.table_rows({("cpu", "topk_grid"): run})


def test_a_row_whose_benchmark_is_missing_is_an_error():
    runs = copy.deepcopy(render_results.load_runs())
    row = render_results.ROWS[0]
    key = next(k for k in runs if k[1] == row.file)
    name = row.ours.format(t=row.threads[0])
    runs[key]["benchmarks"] = [b for b in runs[key]["benchmarks"] if b["name"] != name]
    with pytest.raises(KeyError, match=re.escape(name)):
        render_results.render(runs=runs)
