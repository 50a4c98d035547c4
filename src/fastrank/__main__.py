"""Command line: ``fastrank <command>`` (also ``python -m fastrank``).

Commands: ``study`` (the whole cross-validated tie study), ``evaluate`` (the 19 metrics of a
user's own belief matrix), ``rank`` (rank a belief matrix; without a file, a worked example
with a tie, the thesis' Fig. 2.1), ``datasets`` (list, fetch or describe data sets),
``config`` (versions, build, CPU and the kernels' instruction-set paths). Errors in the
input end the program with one readable line on stderr and exit code 2, leaving no partial
output file. Input files must be regular files (``-`` is standard input); a text line may
hold :data:`MAX_LINE` characters, and the compressed members of a ``.npz`` file may inflate
to :data:`INFLATE_FACTOR` times the file's size or :data:`INFLATE_FLOOR` bytes, whichever is
larger (checked before anything is read). Ctrl-C and SIGTERM end it at once with one line
and exit code 130 / 143 (``study`` computes in a worker thread, so a long kernel call does
not delay them), a closed pipe quietly with 141; output files are only ever replaced whole.
"""
import argparse
import contextlib
import functools
import io
import itertools
import json
import os
import signal
import stat
import sys
import threading
import tokenize
import warnings
import zipfile
import zlib

import numpy as np
import scipy.sparse as sp

from ._version import __version__
from .ranking import RANK_METHODS, rank, resolve_method

STUDY_FORMATS = {"arff": "load_arff", "libsvm": "load_libsvm", "json": "load_text",
                 "csv": "load_text"}

#: a worked example with a tie (the thesis' Fig. 2.1): four labels, two of them tied
EXAMPLE = np.array([[0.5, 0.2, 0.2, 0.1]])


def _cmd_rank(args):
    if args.scores is None:  # the worked example, every method
        print("Example: beliefs " + " ".join(f"{v:g}" for v in EXAMPLE[0])
              + " (the second and third tied)")
        methods = RANK_METHODS if args.method in (None, "all") else (args.method,)
        for method in methods:
            for row in rank(EXAMPLE, method, random_state=args.seed):
                print(f"{method:>10}: " + " ".join(f"{r:g}" for r in row))
        return 0
    method = resolve_method(args.method or "modified")
    ranks = rank(_read_matrix(args.scores), method, random_state=args.seed)
    if args.out is None:  # CSV on stdout, one row per document
        text = io.StringIO()
        np.savetxt(text, ranks, delimiter=",", fmt="%.10g")
        sys.stdout.write(text.getvalue())
        return 0
    from ._atomic import atomic_file
    with atomic_file(args.out) as f:
        if args.out.lower().endswith(".npy"):
            np.save(f, ranks)
        else:
            np.savetxt(f, ranks, delimiter=",", fmt="%.10g")
    return 0


#: Longest line of CSV or whitespace-separated text input, in characters (its newline
#: included): wider rows belong in a .npy or .npz file.
MAX_LINE = 2**24
#: A .npz file's compressed members may inflate to this many times the file's size ...
INFLATE_FACTOR = 64
#: ... or to this many bytes, whichever is larger.
INFLATE_FLOOR = 2**28


def _read_matrix(path, part="X"):
    """A matrix from .npy, .npz (SciPy sparse, or one NumPy array), CSV/whitespace text
    (``-``: standard input), or a libsvm file (``part`` "X" = its features, "Y" = its
    labels). Whatever a corrupt file makes NumPy raise becomes one ValueError."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _read_matrix_unchecked(path, part)
    except (OSError, ValueError, EOFError, SyntaxError, tokenize.TokenError, OverflowError,
            MemoryError, zipfile.BadZipFile, zlib.error, KeyError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None


def _read_matrix_unchecked(path, part):
    if path == "-":
        return _read_text(sys.stdin)
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError("not a regular file (give a file, or - for CSV on standard input)")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":  # mapped first: a header claiming more than the file holds fails
        return np.array(np.load(path, mmap_mode="r", allow_pickle=False))
    if ext == ".npz":
        from ._npzfile import check_inflated_sizes
        check_inflated_sizes(path, max(INFLATE_FACTOR * os.path.getsize(path), INFLATE_FLOOR))
        with np.load(path, allow_pickle=False) as z:
            if "format" in z.files and "shape" in z.files:
                return sp.load_npz(path)
            if len(z.files) != 1:
                raise ValueError(f"expected one array, found {len(z.files)}")
            return z[z.files[0]]
    if ext in (".svm", ".libsvm", ".svmlight"):
        from .datasets import load_libsvm
        return getattr(load_libsvm(path), part)
    with open(path) as f:
        return _read_text(f)


def _read_text(f):
    """The matrix of CSV (a comma in the first line) or whitespace-separated text read from
    the stream f, each line checked against :data:`MAX_LINE` as it is read."""
    def lines():
        for number, line in enumerate(iter(functools.partial(f.readline, MAX_LINE + 1), ""),
                                      1):
            if len(line) > MAX_LINE:
                raise ValueError(f"line {number} is longer than {MAX_LINE} characters, the "
                                 "bound on text input (give a wide matrix as .npy or .npz)")
            yield line
    stream = lines()
    first = next(stream, "")
    return np.loadtxt(itertools.chain([first], stream), delimiter="," if "," in first else None,
                      ndmin=2)


def _load_dataset(name, fmt, labels):
    from . import datasets
    if fmt is None and labels is None:
        from .study import load_dataset
        return load_dataset(name)  # an embedded name, a file, or a Mulan name to fetch
    if not os.path.isfile(name):
        raise FileNotFoundError(f"no such file: {name}")
    loader = getattr(datasets, STUDY_FORMATS[fmt or "arff"])
    if labels is not None:
        if loader is not datasets.load_arff:
            raise ValueError("--labels applies to ARFF files only")
        return loader(name, labels=int(labels) if labels.isdigit() else labels)
    return loader(name)


def _csv(text):
    """'a, b,c' -> ('a', 'b', 'c')."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _parse_overrides(items, classifiers):
    """``--set vgram.n_neurons=64`` -> {"vgram": {"n_neurons": 64}} (values as JSON)."""
    out = {}
    for item in items:
        key, sep, raw = item.partition("=")
        clf, dot, param = key.partition(".")
        if not sep or not dot or not param:
            raise ValueError(f"--set expects CLASSIFIER.PARAM=VALUE, got {item!r}")
        if clf not in classifiers:
            raise ValueError(f"--set names classifier {clf!r}, which is not in the study "
                             f"({', '.join(classifiers)})")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out.setdefault(clf, {})[param] = value
    return out


def _dataset_specs(text):
    """``--dataset``: comma-separated names or files; a folder stands for the data files in
    it and in its subfolders (one level down), in name order."""
    from .datasets._load import LOADERS_BY_EXTENSION
    specs = []
    for item in _csv(text):
        if not os.path.isdir(item):
            specs.append(item)
            continue
        found = []
        for entry in sorted(os.listdir(item)):
            path = os.path.join(item, entry)
            inner = [os.path.join(path, e) for e in sorted(os.listdir(path))] \
                if os.path.isdir(path) else [path]
            found += [f for f in inner if os.path.isfile(f)
                      and os.path.splitext(f)[1].lower() in LOADERS_BY_EXTENSION]
        if not found:
            raise ValueError(f"folder {item} holds no data file (ending in "
                             f"{', '.join(LOADERS_BY_EXTENSION)})")
        specs += found
    if not specs:
        raise ValueError("--dataset names no data set")
    return specs


def _import_object(spec):
    """'package.module:name' -> the object (the current folder is searched too)."""
    import importlib
    module, sep, attr = spec.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"expected module:Class, got {spec!r}")
    sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"cannot import {module!r} for {spec!r}: {exc}") from None
    finally:
        sys.path.pop(0)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _estimator_from_json(spec, where):
    """``{"class": "module:Class", "params": {...}}`` -> an instance; a parameter value
    that is itself such a dict becomes an estimator too (e.g. a meta-estimator's
    ``estimator``)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("class"), str):
        raise ValueError(f"{where}: an estimator is {{\"class\": \"module:Class\", "
                         f"\"params\": {{...}}}}, got {spec!r}")
    params = spec.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: params must be an object, got {params!r}")
    params = {k: _estimator_from_json(v, f"{where}.{k}")
              if isinstance(v, dict) and "class" in v else v for k, v in params.items()}
    cls = _import_object(spec["class"])
    try:
        return cls(**params)
    except TypeError as exc:
        raise ValueError(f"{where}: {spec['class']}: {exc}") from None


def _run_file(path):
    """Run the .py file ``path`` as a module of its own, with its folder first on
    ``sys.path`` meanwhile (so that it imports the modules beside it, as ``python FILE``
    would); return that module and the modules loaded from its folder (itself among them),
    which a Dask worker cannot import (see :func:`_cmd_study`)."""
    import importlib.util
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    name = f"_fastrank_classifiers_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # importable by name: classes and functions pickle by name
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        sys.path.remove(folder)
    local = [m for m in list(sys.modules.values())
             if os.path.dirname(os.path.abspath(getattr(m, "__file__", None) or os.sep))
             == folder]
    return module, local


def _own_classifiers(args):
    """The user's estimators: ``--classifier NAME=module:Class`` (a class, instantiated
    without arguments, or an estimator object) and ``--classifiers-from FILE`` (a .py file
    defining ``classifiers``: a list of (name, estimator) pairs or a dict, or a JSON list of
    ``{"name": ..., "class": "module:Class", "params": {...}}``). Returns them, and the
    modules of a .py file's folder that they may come from (:func:`_run_file`)."""
    own, local = [], []
    for item in args.classifier:
        name, sep, target = item.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--classifier expects NAME=module:Class, got {item!r}")
        obj = _import_object(target.strip())
        own.append((name.strip(), obj() if isinstance(obj, type) else obj))
    if args.classifiers_from:
        path = args.classifiers_from
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: {path}")
        if path.lower().endswith(".py"):
            module, local = _run_file(path)
            found = getattr(module, "classifiers", None)
            if isinstance(found, dict):
                found = list(found.items())
            if not isinstance(found, (list, tuple)):
                raise ValueError(f"{path} must define classifiers: a list of (name, "
                                 "estimator) pairs or a dict of them")
            own += [tuple(pair) if isinstance(pair, (list, tuple)) else pair
                    for pair in found]
        else:
            with open(path, encoding="utf-8") as f:
                try:
                    specs = json.load(f)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path} is not JSON: {exc}") from None
            if not isinstance(specs, list):
                raise ValueError(f"{path} must hold a JSON list of estimator specs")
            for i, spec in enumerate(specs):
                if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                    raise ValueError(f"{path}[{i}]: each spec needs a \"name\"")
                own.append((spec["name"], _estimator_from_json(spec, f"{path}[{i}]")))
    return own, local


class _Progress:
    """Progress of the study's classifier × fold tasks on stderr: a live bar with ETA when
    stderr is a terminal and tqdm is installed, plain lines otherwise, nothing with
    --quiet."""

    def __init__(self, total, quiet, stream=None):
        self.total, self.done, self.quiet = total, 0, quiet
        self.stream = sys.stderr if stream is None else stream
        self.bar = None
        if not quiet and self.stream.isatty():
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.bar = tqdm(total=total, file=self.stream, unit="task", dynamic_ncols=True,
                                smoothing=0.1)

    def __call__(self, msg, done=None):
        step = 1 if done is None else done - self.done
        self.done += step
        if self.quiet:
            return
        with _STDERR_LOCK:
            if threading.current_thread() in _SILENCED:
                return
            if self.bar is not None:
                self.bar.set_postfix_str(msg.split(" (")[0], refresh=False)
                self.bar.update(step)
            else:
                self.stream.write(f"[{self.done:>{len(str(self.total))}}/{self.total}] {msg}\n")
                self.stream.flush()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _cmd_study(args):
    from .report import (BENCHMARK_FILES, OUTPUT_FILES, check_output_dir, terminal_summary,
                         write_benchmark, write_study)
    from .study import CLASSIFIERS, run_study
    from .study._plan import check_classifiers
    specs = _dataset_specs(args.dataset)
    # everything that depends on the arguments only is checked before anything is computed
    # (or a cluster started)
    check_output_dir(args.out, OUTPUT_FILES if len(specs) == 1 else BENCHMARK_FILES)
    if len(specs) > 1 and (args.format is not None or args.labels is not None):
        raise ValueError("--format and --labels apply to a single data set")
    classifiers = _csv(args.classifiers)
    own, local = _own_classifiers(args)
    if not classifiers and not own:
        raise ValueError(f"--classifiers names no classifier; choose from "
                         f"{', '.join(CLASSIFIERS)}, or add --classifier NAME=module:Class")
    overrides = _parse_overrides(args.set, classifiers)
    check_classifiers([*classifiers, *own], overrides)
    options = dict(folds=args.folds, ties=_csv(args.ties), random_state=args.seed,
                   calibrate=args.calibrate, n_jobs=args.n_jobs, params=overrides)
    cluster = contextlib.nullcontext()  # yields None: the study runs in this process
    if args.scheduler is not None:
        from .dask import connect
        cluster = connect(args.scheduler)
        import cloudpickle  # type: ignore[import-untyped]  # a dependency of Dask's
        for module in local:  # the workers cannot import them: their classes go by value
            cloudpickle.register_pickle_by_value(module)
    with cluster as client:  # reached, or started, before anything is computed
        progress = _Progress(len(specs) * (len(classifiers) + len(own)) * args.folds,
                             args.quiet)

        def study():
            if len(specs) == 1:
                return run_study(_load_dataset(specs[0], args.format, args.labels),
                                 classifiers=[*classifiers, *own], progress=progress,
                                 scheduler=client, **options)
            from .study.compare import run_benchmark
            # each finished data set's output set is written as it finishes (resumable)
            return run_benchmark(specs, [*classifiers, *own], out_dir=args.out,
                                 progress=progress, scheduler=client, **options)

        try:
            result = _interruptible(study)
        finally:
            progress.close()
    # in the main thread: interrupted, it writes nothing
    if len(specs) == 1:
        paths = write_study(result, args.out)
        report = next(p for p in paths if p.endswith("report.html"))
        print(terminal_summary(result, report_path=report))
    else:
        paths = write_benchmark(result, args.out)
        print(f"{len(result.datasets)} data sets: "
              + ", ".join(result.datasets) + "\nReport: "
              + next(p for p in paths if p.endswith("report.html")))
    return 0


# the "finished" flags of computations interrupted in _interruptible
_ABANDONED: list[threading.Event] = []
# stderr is written by the computing thread (progress) and the main thread (the stop line):
# each line is written whole under this lock, and an abandoned computing thread (in
# _SILENCED) writes no more lines
_STDERR_LOCK = threading.Lock()
_SILENCED: set[threading.Thread] = set()


def _interruptible(compute):
    """``compute()`` run in a worker thread while the main thread waits for it.

    Python runs signal handlers only in the main thread, between bytecodes: a compiled
    kernel called from the main thread would hold off Ctrl-C and SIGTERM until it returns
    (a minute for a large VG-RAM prediction). Waiting on a thread is interruptible, so the
    command ends at once. The abandoned worker (a daemon thread) ends with the process (see
    :func:`_stop`) and writes nothing more: no progress line (:class:`_Progress`), and its
    file writes (a multi-data-set run writes each data set's output set as it finishes)
    are abandoned first -- a set being renamed into place is finished, every other
    temporary file removed (:class:`fastrank._atomic.WriteGuard`)."""
    from ._atomic import WriteGuard
    outcome, finished, writes = {}, threading.Event(), WriteGuard()

    def work():
        try:
            with writes.active():
                outcome["value"] = compute()
        except BaseException as exc:  # re-raised in the main thread
            outcome["error"] = exc
        finally:
            finished.set()

    worker = threading.Thread(target=work, name="fastrank-compute", daemon=True)
    worker.start()
    try:
        worker.join()
    except BaseException:  # Ctrl-C, SIGTERM (an interrupted join marks the thread stopped:
        with _STDERR_LOCK:
            _SILENCED.add(worker)
        writes.abandon()
        _ABANDONED.append(finished)  # whether it still runs is told by its own flag)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _cmd_evaluate(args):
    from .metrics import evaluate
    truth = _read_matrix(args.truth, part="Y")
    scores = _read_matrix(args.scores, part="X")
    if np.ndim(truth) == 2 and np.ndim(scores) == 2 and truth.shape != scores.shape:
        raise ValueError(f"--scores is {scores.shape[0]} x {scores.shape[1]} but --truth is "
                         f"{truth.shape[0]} x {truth.shape[1]} (documents x labels)")
    cutoff = int(args.cutoff) if args.cutoff.isdigit() else args.cutoff  # top-k as an int
    result = evaluate(truth, scores, ties=_csv(args.ties), cutoff=cutoff,
                      random_state=args.seed)
    print(json.dumps(result.to_dict(), indent=1) if args.json else str(result))
    return 0


def _cmd_datasets(args):
    from . import datasets
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
    from ._config import show_config
    if args.json:
        print(json.dumps(show_config(mode="dict"), indent=1))
    else:
        show_config()
    return 0


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
    p.set_defaults(func=_cmd_rank)
    p = sub.add_parser("config", help="versions, build, CPU and the kernels' instruction-set "
                       "paths")
    p.add_argument("--json", action="store_true", help="print JSON instead of lines")
    p.set_defaults(func=_cmd_config)
    parser.commands = sub.choices  # each command's parser, for its own usage line
    return parser


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that open output files are cleaned up."""


def _terminate(signum, frame):
    raise _Terminated()


def main(argv=None):
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own usage, not the top-level one
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    previous = signal.signal(signal.SIGTERM, _terminate) \
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else None
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, KeyError, ImportError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _closed_pipe()
        message = " ".join(str(exc).split())  # one line, whatever the exception held
        print(f"fastrank {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _stop(args.command, "interrupted", 130, own_process=argv is None)
    except _Terminated:
        return _stop(args.command, "terminated", 143, own_process=argv is None)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stop(command, what, code, own_process):
    """One line on stderr, then the exit code. When ``main`` runs as the program (no
    ``argv``) and an interrupted computation still runs in its abandoned thread, the process
    ends at once (``os._exit`` after flushing the standard streams): the interpreter's
    normal shutdown beside a kernel that keeps every core busy takes about a second. The
    abandoned computation's writes were stopped and their temporary files removed
    (:func:`_interruptible`); the main thread writes its outputs only after the
    computation: none is open."""
    with _STDERR_LOCK:
        sys.stderr.write(f"fastrank {command}: {what}\n")
    if own_process and not all(finished.is_set() for finished in _ABANDONED):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _closed_pipe():
    """The reader of standard output went away (``| head``): stop quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # so that the interpreter's final flush is silent
    return 141


if __name__ == "__main__":
    sys.exit(main())
