"""The commands ``rank``, ``evaluate``, ``datasets`` and ``config``."""
import io
import json
import sys

import numpy as np

from ..ranking import RANK_METHODS, rank, resolve_method
from ._input import _csv, _load_dataset, _read_matrix

#: a worked example with a tie (the thesis' Fig. 2.1): four labels, two of them tied
EXAMPLE = np.array([[0.5, 0.2, 0.2, 0.1]])


def _cmd_rank(args):
    if args.scores is None:  # the worked example, every method
        methods = RANK_METHODS if args.method in (None, "all") else (args.method,)
        rows = [(m, rank(EXAMPLE, m, random_state=args.seed)[0]) for m in methods]  # checked
        print("Example: beliefs " + " ".join(f"{v:g}" for v in EXAMPLE[0])
              + " (the second and third tied)")
        for method, row in rows:
            print(f"{method:>10}: " + " ".join(f"{r:g}" for r in row))
        return 0
    method = resolve_method("modified" if args.method is None else args.method)
    ranks = rank(_read_matrix(args.scores, header=args.header), method,
                 random_state=args.seed)
    if args.out is None:  # CSV on stdout, one row per document
        text = io.StringIO()
        np.savetxt(text, ranks, delimiter=",", fmt="%.10g")
        sys.stdout.write(text.getvalue())
        return 0
    from .._atomic import atomic_file
    with atomic_file(args.out) as f:
        if args.out.lower().endswith(".npy"):
            np.save(f, ranks)
        else:
            np.savetxt(f, ranks, delimiter=",", fmt="%.10g")
    return 0


def _cmd_evaluate(args):
    from ..metrics import evaluate
    truth = _read_matrix(args.truth, part="Y", header=args.header)
    scores = _read_matrix(args.scores, part="X", header=args.header)
    if np.ndim(truth) == 2 and np.ndim(scores) == 2 and truth.shape != scores.shape:
        raise ValueError(f"--scores is {scores.shape[0]} x {scores.shape[1]} but --truth is "
                         f"{truth.shape[0]} x {truth.shape[1]} (documents x labels)")
    cutoff = int(args.cutoff) if args.cutoff.isdigit() else args.cutoff  # top-k as an int
    result = evaluate(truth, scores, ties=_csv(args.ties), cutoff=cutoff,
                      random_state=args.seed)
    print(json.dumps(result.to_dict(), indent=1) if args.json else str(result))
    return 0


def _cmd_datasets(args):
    from .. import datasets
    if args.fetch is not None:
        dataset = datasets.fetch(args.fetch, args.data_home)
    elif args.name is None:
        for info in datasets.list(args.data_home):
            status = "embedded" if info["origin"] == "embedded" else \
                "mulan, cached" if info["cached"] else "mulan, fetchable (--fetch)"
            print(f"{info['name']:<10} {status:<28} {info['documents']:>6} documents "
                  f"{info['features']:>5} features {info['labels']:>4} labels")
        return 0
    else:
        dataset = _load_dataset(args.name, args.format, args.labels)
    for key, value in dataset.summary().items():
        print(f"{key}: {value}")
    return 0


def _cmd_config(args):
    from .._config import show_config
    if args.json:
        print(json.dumps(show_config(mode="dict"), indent=1))
    else:
        show_config()
    return 0
