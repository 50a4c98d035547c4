"""Command line: ``fastrank <command>`` (also ``python -m fastrank``).

Errors in the input end the program with one readable line on stderr and exit code 2.
"""
import argparse
import sys

import numpy as np

from .ranking import RANK_METHODS, rank

FIG_2_1 = np.array([[0.5, 0.2, 0.2, 0.1]])


def _cmd_rank(args):
    scores = FIG_2_1 if args.scores is None else _read_matrix(args.scores)
    if args.scores is None:
        print("melotti2009 Fig. 2.1: beliefs " + " ".join(f"{v:g}" for v in FIG_2_1[0]))
    methods = RANK_METHODS if args.method == "all" else (args.method,)
    for method in methods:
        ranks = rank(scores, method, random_state=args.seed)
        for row in ranks:
            print(f"{method:>10}: " + " ".join(f"{r:g}" for r in row))
    return 0


def _read_matrix(path):
    """A belief matrix from .npy or CSV (comma or whitespace separated)."""
    try:
        if path.endswith(".npy"):
            return np.load(path, allow_pickle=False)
        with open(path) as f:
            first = f.readline()
        return np.loadtxt(path, delimiter="," if "," in first else None, ndmin=2)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read scores from {path}: {exc}") from None


def build_parser():
    parser = argparse.ArgumentParser(
        prog="fastrank", description="Tie-aware multi-label ranking metrics and classifiers.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("rank", help="rank each row of a belief matrix (default: Fig. 2.1)")
    p.add_argument("scores", nargs="?", help=".npy or CSV belief matrix (rows = documents)")
    p.add_argument("--method", default="all", choices=("all",) + RANK_METHODS)
    p.add_argument("--seed", type=int, default=0, help="seed for the ordinal ranking")
    p.set_defaults(func=_cmd_rank)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"fastrank {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
