"""Thread scaling of fastrank's hot paths on a many-core machine, with peers in the same
process (FAISS ``IndexFlatIP`` on the CPU; torchmetrics' multilabel ranking metrics on the
CPU and, where PyTorch sees one, the GPU). Prints one JSON line per measurement and writes
them all to the file named by the first argument (default ``scaling.json``).

Sizes: 200 000 x 1 000 float32 beliefs with 21 levels and ~1 % relevant labels for the
ranking metrics (``SCALING_ROWS`` overrides the rows); a 100 000 x 128 dense base with 5 000
queries, k = 10; VG-RAM on a bibtex-shaped synthetic set (4 880 training, 2 515 test
documents, 1 836 features, 159 labels); the default study. Threads: ``SCALING_THREADS``
(default 1,2,4,8,16). Run: ``python benchmarks/thread_scaling.py results.json``.
"""
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

OUT_FILE = sys.argv[1] if len(sys.argv) > 1 else "scaling.json"
RECORDS = []
THREADS = [int(t) for t in os.environ.get("SCALING_THREADS", "1,2,4,8,16").split(",")]


def emit(**rec):
    RECORDS.append(rec)
    print(json.dumps(rec), flush=True)
    with open(OUT_FILE, "w") as f:
        json.dump(RECORDS, f, indent=1)


def best(f, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main():
    import fastrank
    from fastrank import _parallel
    emit(kind="machine", cpu=cpu_model(), cores=os.cpu_count(), python=sys.version.split()[0],
         numpy=np.__version__)
    fastrank.show_config()
    rng = np.random.default_rng(0)
    n, q = int(os.environ.get("SCALING_ROWS", 200_000)), 1_000
    S = (rng.integers(0, 21, size=(n, q)) / 20).astype(np.float32)
    Y = rng.random((n, q)) < 0.01
    Y[np.arange(n), rng.integers(0, q, n)] = True
    Y = Y.astype(np.uint8)

    ops = {
        "stream S.sum(1)": lambda: S.sum(1),
        "evaluate 19 x 4": lambda: fastrank.evaluate(Y, S),
        "rank standard": lambda: fastrank.rank(S, "standard"),
        "coverage": lambda: fastrank.coverage(Y, S),
        "LRAP (per label)": lambda: fastrank.average_precision(Y, S, per="label"),
        "ranking_loss": lambda: fastrank.ranking_loss(Y, S),
    }
    for name, f in ops.items():
        f()
        for t in THREADS:
            with _parallel.num_threads(t):
                emit(kind="scaling", op=name, n=n, q=q, threads=t, seconds=best(f, 2))

    # expected vs ordinal, 10 000 x 1 000
    S10, Y10 = S[:10_000], Y[:10_000]
    for t in sorted({1, 2, THREADS[-1]}):
        with _parallel.num_threads(t):
            for ties in ("ordinal", "expected"):
                emit(kind="ties_cost", ties=ties, threads=t,
                     seconds=best(lambda: fastrank.evaluate(Y10, S10, ties=ties), 3))

    # dense top-k vs FAISS IndexFlatIP
    import faiss
    B = rng.standard_normal((100_000, 128)).astype(np.float32)
    Qd = rng.standard_normal((5_000, 128)).astype(np.float32)
    Bn = B / np.linalg.norm(B, axis=1, keepdims=True)
    Qn = Qd / np.linalg.norm(Qd, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(128)
    index.add(Bn)
    for t in THREADS:
        faiss.omp_set_num_threads(t)
        with _parallel.num_threads(t):
            ft = best(lambda: fastrank.topk_cosine(Qd, B, 10), 3)
        fa = best(lambda: index.search(Qn, 10), 3)
        emit(kind="topk_dense", threads=t, base=B.shape, queries=Qd.shape[0], k=10,
             fastrank_s=ft, faiss_s=fa, ratio=fa / ft)

    # VG-RAM fit/predict, bibtex-shaped synthetic (7 395 x 1 836, 159 labels)
    ds = fastrank.datasets.make_multilabel(7395, 159, 1836, random_state=0)
    X = ds.X
    Xtr, Xte, Ytr = X[:4880], X[4880:], ds.Y[:4880]
    for t in THREADS:
        model = fastrank.VGRAM()
        with _parallel.num_threads(t):
            fit_s = best(lambda: model.fit(Xtr, Ytr), 2)
            pred_s = best(lambda: model.decision_function(Xte), 2)
        emit(kind="vgram", threads=t, fit_s=fit_s, predict_s=pred_s, train=Xtr.shape,
             test=Xte.shape[0])

    # the default study (yeast, 4 classifiers x 10 folds)
    for t in THREADS:
        t0 = time.perf_counter()
        fastrank.run_study(n_jobs=t)
        emit(kind="study", threads=t, seconds=time.perf_counter() - t0)

    torch_peer(S, Y)


def torch_peer(S, Y):
    """torchmetrics' multilabel ranking metrics on the GPU and CPU against fastrank."""
    try:
        import torch
        from torchmetrics.functional.classification import (
            multilabel_coverage_error, multilabel_ranking_average_precision,
            multilabel_ranking_loss)
    except Exception as e:  # noqa: BLE001
        emit(kind="torch", error=repr(e))
        return
    import fastrank
    from fastrank import _parallel
    q = S.shape[1]
    dev = torch.device("cuda") if torch.cuda.is_available() else None
    emit(kind="torch_env", torch=torch.__version__, gpu=torch.cuda.get_device_name(0)
         if dev else None)
    fns = {"coverage": (multilabel_coverage_error, lambda y, s: fastrank.coverage(y, s) + 1),
           "ranking_loss": (multilabel_ranking_loss, lambda y, s: fastrank.ranking_loss(y, s)),
           "LRAP": (multilabel_ranking_average_precision,
                    lambda y, s: fastrank.average_precision(y, s, per="label"))}
    for name, (tm, fr) in fns.items():
        rows = S.shape[0] if name != "LRAP" else 2_000
        s, y = S[:rows], Y[:rows]
        with _parallel.num_threads(16):
            fr_s = best(lambda: fr(y, s), 3)
            fr_v = float(fr(y, s))
        rec = dict(kind="torchmetrics", metric=name, rows=rows, q=q, fastrank_16t_s=fr_s,
                   fastrank_value=fr_v)
        if dev is not None:
            st, yt = torch.from_numpy(s).to(dev), torch.from_numpy(y.astype(np.int64)).to(dev)
            tm(st, yt, num_labels=q)
            torch.cuda.synchronize()

            def gpu():
                tm(st, yt, num_labels=q)
                torch.cuda.synchronize()
            rec["torchmetrics_gpu_s"] = best(gpu, 3)
            rec["torchmetrics_gpu_value"] = float(tm(st, yt, num_labels=q))
            del st, yt
        small = min(rows, 20_000)
        st, yt = torch.from_numpy(s[:small]), torch.from_numpy(y[:small].astype(np.int64))
        torch.set_num_threads(16)
        rec["torchmetrics_cpu16_s_rows"] = small
        rec["torchmetrics_cpu16_s"] = best(lambda: tm(st, yt, num_labels=q), 1)
        with _parallel.num_threads(16):
            rec["fastrank_16t_same_rows_s"] = best(lambda: fr(y[:small], s[:small]), 3)
        emit(**rec)


if __name__ == "__main__":
    subprocess.run(["lscpu"], check=False)
    main()
