"""The command ``study``: its data sets, classifiers, progress and run."""
import contextlib
import json
import os
import sys
import threading

from ._input import _csv, _load_dataset
from ._threads import _SILENCED, _STDERR_LOCK, _interruptible


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
        except RecursionError:
            raise ValueError(f"--set {key}: its JSON value is nested too deeply") from None
        out.setdefault(clf, {})[param] = value
    return out


def _dataset_specs(text):
    """``--dataset``: comma-separated names or files; a folder stands for the data files in
    it and in its subfolders (one level down), in name order."""
    from ..datasets._load import LOADERS_BY_EXTENSION
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
    except SyntaxError as exc:  # the file is not Python: one line, as for a JSON file
        del sys.modules[name]
        raise ValueError(f"{path}: line {exc.lineno}: {exc.msg}") from None
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
                except RecursionError:
                    raise ValueError(f"{path}: JSON nested too deeply") from None
            if not isinstance(specs, list):
                raise ValueError(f"{path} must hold a JSON list of estimator specs")
            for i, spec in enumerate(specs):
                if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                    raise ValueError(f"{path}[{i}]: each spec needs a \"name\"")
                try:
                    own.append((spec["name"], _estimator_from_json(spec, f"{path}[{i}]")))
                except RecursionError:
                    raise ValueError(f"{path}[{i}]: estimators nested too deeply") from None
    return own, local


class _Progress:
    """Progress of the study's classifier × fold tasks on stderr: a live bar with ETA when
    stderr is a terminal and tqdm is installed, plain lines otherwise, nothing with
    --quiet. The bar is drawn at the first task, so that a study refused before its first
    fold (a classifier failing its trial fit) prints its error line alone."""

    def __init__(self, total, quiet, stream=None):
        self.total, self.done, self.quiet = total, 0, quiet
        self.stream = sys.stderr if stream is None else stream
        self._tqdm = self._bar = None
        if not quiet and self.stream.isatty():
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            self._tqdm = tqdm

    @property
    def bar(self):
        if self._bar is None and self._tqdm is not None:
            self._bar = self._tqdm(total=self.total, file=self.stream, unit="task",
                                   dynamic_ncols=True, smoothing=0.1)
        return self._bar

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

    def note(self, msg):
        """Show ``msg`` (what is being written after the tasks) without counting a task."""
        if self.quiet:
            return
        with _STDERR_LOCK:
            if self.bar is not None:
                self.bar.set_postfix_str(msg)
            else:
                self.stream.write(msg + "\n")
                self.stream.flush()

    def close(self):
        if self._bar is not None:
            self._bar.close()


def _cmd_study(args):
    from ..report import (BENCHMARK_FILES, OUTPUT_FILES, benchmark_summary, check_output_dir,
                          terminal_summary, write_benchmark, write_study)
    from ..study import CLASSIFIERS, run_study
    from ..study._plan import check_classifiers
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
        from ..dask import connect
        cluster = connect(args.scheduler)
        import cloudpickle  # type: ignore[import-untyped]  # a dependency of Dask's
        for module in local:  # the workers cannot import them: their classes go by value
            cloudpickle.register_pickle_by_value(module)
    progress = _Progress(len(specs) * (len(classifiers) + len(own)) * args.folds, args.quiet)
    report = dict(pdf=not args.no_pdf, progress=progress.note)
    try:
        with cluster as client:  # reached, or started, before anything is computed
            def study():
                if len(specs) == 1:
                    return run_study(_load_dataset(specs[0], args.format, args.labels),
                                     classifiers=[*classifiers, *own], progress=progress,
                                     scheduler=client, **options)
                from ..study.compare import run_benchmark
                # each finished data set's output set is written as it finishes (resumable)
                return run_benchmark(specs, [*classifiers, *own], out_dir=args.out,
                                     progress=progress, scheduler=client, pdf=report["pdf"],
                                     **options)

            result = _interruptible(study)
        # in the main thread: interrupted, it writes nothing
        if len(specs) == 1:
            paths = write_study(result, args.out, **report)
            summary = terminal_summary
        else:
            paths = write_benchmark(result, args.out, **report)
            summary = benchmark_summary
    finally:
        progress.close()
    print(summary(result, report_path=next(p for p in paths if p.endswith("report.html"))))
    return 0
