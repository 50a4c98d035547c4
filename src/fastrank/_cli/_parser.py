"""The argument parser of every command."""
import argparse

from .._version import __version__
from ..ranking import RANK_METHODS
from ._commands import _cmd_config, _cmd_datasets, _cmd_evaluate, _cmd_rank
from ._input import STUDY_FORMATS
from ._study import _cmd_study

HEADER_HELP = "the first line of CSV or whitespace-separated input is a header row: skip it"


class _HelpFormatter(argparse.HelpFormatter):
    """Each option's help followed by its default, once: not when the help states it, nor
    for an option without one (None, off, an empty list)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or not action.option_strings or action.required or \
                action.default in (None, False, [], argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def build_parser():
    parser = argparse.ArgumentParser(
        prog="fastrank", description="Tie-aware multi-label ranking metrics and classifiers.")
    parser.add_argument("--version", action="version", version=f"fastrank {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    defaults = _HelpFormatter

    p = sub.add_parser("study", help="run the cross-validated tie study (default: yeast)",
                       formatter_class=defaults)
    p.add_argument("--dataset", default="yeast",
                   help="embedded name, file (.arff with .xml beside it, .svm, .json, .csv), "
                        "Mulan name (downloaded once), or a folder of data files; several, "
                        "comma-separated, run the study on each (in OUT/NAME/, resumed from "
                        "the finished ones) and compare the classifiers across them")
    p.add_argument("--format", choices=sorted(STUDY_FORMATS),
                   help="file format (default: from the extension)")
    p.add_argument("--labels", help="ARFF: the label XML file or the number of labels")
    p.add_argument("--classifiers", default="knn,mlknn,vgram,vgramcor",
                   help="comma-separated subset of knn,mlknn,vgram,vgramcor (empty: only "
                        "your own)")
    p.add_argument("--classifier", action="append", default=[], metavar="NAME=module:Class",
                   help="add your own scikit-learn estimator (a class, made without "
                        "arguments, or an estimator object) shown as NAME; repeatable")
    p.add_argument("--classifiers-from", metavar="FILE",
                   help="add your own estimators from a .py file defining 'classifiers' "
                        "(list of (name, estimator) pairs; it may import the modules beside "
                        "it, and with --scheduler they are sent to the workers by value) or "
                        "a JSON list of {\"name\", \"class\": \"module:Class\", \"params\"}")
    p.add_argument("--folds", type=int, default=10,
                   help="cross-validation folds (iterative stratification)")
    p.add_argument("--ties", default="ordinal,dense,standard,modified",
                   help="ranking types, comma-separated; add 'expected' for the exact mean "
                        "of ordinal over random orders")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the folds, the classifiers and the ordinal ranking")
    p.add_argument("--out", default="fastrank-study", help="output folder")
    p.add_argument("--calibrate", action="store_true",
                   help="choose k / neurons x synapses by ranking loss first (thesis §3.5)")
    p.add_argument("--set", action="append", default=[], metavar="CLS.PARAM=VALUE",
                   help="override a classifier parameter, e.g. vgram.n_neurons=64")
    p.add_argument("--n-jobs", type=int, default=None,
                   help="threads per task (default: all cores; 1 with --scheduler)")
    p.add_argument("--scheduler", metavar="SPEC",
                   help="run the folds x classifiers as tasks on a Dask cluster (needs "
                        "fastrank-mlc[dask]): 'local' (one single-threaded worker process per "
                        "core), 'local:N' (N of them) or a running scheduler's address "
                        "'tcp://HOST:PORT'; results.json is byte-identical to the run without "
                        "it. With no running worker for Dask's "
                        "distributed.scheduler.no-workers-timeout (environment: "
                        "DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT; default 60s) the "
                        "study fails and writes nothing")
    p.add_argument("--quiet", action="store_true",
                   help="no progress (a bar with ETA on a terminal, lines otherwise)")
    p.add_argument("--no-pdf", action="store_true",
                   help="write the figures as SVG only (report.html inlines them), not also "
                        "as PDF for a paper; the report is then written about 2.5 times faster")
    p.set_defaults(func=_cmd_study)

    p = sub.add_parser("evaluate", help="the 19 metrics of a belief matrix",
                       formatter_class=defaults)
    p.add_argument("--truth", required=True, help="0/1 matrix: .npy, .npz, CSV or libsvm")
    p.add_argument("--scores", required=True, help="belief matrix: .npy, .npz, CSV or libsvm")
    p.add_argument("--ties", default="ordinal,dense,standard,modified",
                   help="ranking types, comma-separated; add 'expected' for the exact mean "
                        "of ordinal over random orders")
    p.add_argument("--cutoff", default="perfect",
                   help="'perfect' (the thesis' policy) or an int k for the top-k sets")
    p.add_argument("--seed", type=int, default=0, help="seed for the ordinal ranking")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--header", action="store_true", help=HEADER_HELP)
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("datasets", help="list the embedded and the downloadable (Mulan) data "
                       "sets and which are cached, or describe one")
    p.add_argument("name", nargs="?", help="embedded name or file")
    p.add_argument("--format", choices=sorted(STUDY_FORMATS),
                   help="file format (default: from the extension)")
    p.add_argument("--labels", help="ARFF: the label XML file or the number of labels")
    p.add_argument("--fetch", metavar="NAME", help="download the Mulan set NAME into the "
                   "cache (if not there yet) and describe it")
    p.add_argument("--data-home", metavar="DIR", help="the download cache (default: "
                   "$FASTRANK_DATA, else ~/fastrank_data; the source URL is "
                   "$FASTRANK_DATA_URL, else Mulan's repository)")
    p.set_defaults(func=_cmd_datasets)

    p = sub.add_parser("rank", help="rank each row of a belief matrix (without one: a "
                       "worked example)",
                       formatter_class=defaults)
    p.add_argument("scores", nargs="?", help="belief matrix (rows = documents): .npy, .npz, "
                   "CSV, or - for CSV on standard input; without it, a worked example "
                   "with a tie under every method")
    p.add_argument("--method", default=None,
                   help=f"one of {', '.join(RANK_METHODS)} or an alias (min, max, average); "
                        "default: modified for a file, all for the example")
    p.add_argument("--out", help="write the ranks to this .npy or .csv file instead of CSV on "
                   "standard output")
    p.add_argument("--seed", type=int, default=0, help="seed for the ordinal ranking")
    p.add_argument("--header", action="store_true", help=HEADER_HELP)
    p.set_defaults(func=_cmd_rank)
    p = sub.add_parser("config", help="versions, build, CPU and the kernels' instruction-set "
                       "paths")
    p.add_argument("--json", action="store_true", help="print JSON instead of lines")
    p.set_defaults(func=_cmd_config)
    parser.commands = sub.choices  # each command's parser, for its own usage line
    return parser
