"""What fastrank runs on: versions, the build of its kernels, the CPU and the instruction-set
path the kernels take (:func:`show_config`, ``fastrank config``), and the choice of that path
(:func:`use_simd`, ``FASTRANK_SIMD``)."""
import importlib
import importlib.metadata
import os
import platform
import sys

from ._ext import _simd
from ._version import __version__

#: CPU features the kernels' paths need, as /proc/cpuinfo names them: POPCNT and AVX-512
#: VPOPCNTDQ count the bits of VG-RAM's binary patterns, AVX2 with FMA (AVX-512 F/DQ) runs
#: the cosine neighbour search, AVX-512 F/BW/VL runs VG-RAM's search and encoding, and VBMI
#: its byte-permute encoding (the kernels' own table, core/simd.h).
KERNEL_FEATURES = _simd.FEATURES

#: the instruction-set paths, in order: each needs the CPU features of those before it and
#: more (:func:`use_simd`)
SIMD_PATHS = _simd.PATHS

#: kernel modules that report the instruction-set path they take (``simd_path()``): the
#: best code each has at or below the path in use
SIMD_KERNELS = ("cosine_topk", "vgram")

#: ``_OPENMP`` dates and the OpenMP version they stand for
OPENMP_VERSIONS = {200505: "2.5", 200805: "3.0", 201107: "3.1", 201307: "4.0", 201511: "4.5",
                   201811: "5.0", 202011: "5.1", 202111: "5.2", 202411: "6.0"}


def _version_of(distribution):
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpuinfo(path="/proc/cpuinfo"):
    """The first processor's fields in ``path`` (Linux), or {} where there is no such file."""
    fields = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if fields:
                        break  # the first processor's block is enough
                    continue
                key, sep, value = line.partition(":")
                if sep:
                    fields.setdefault(key.strip(), value.strip())
    except OSError:
        return {}
    return fields


def cpu_info(cpuinfo_path="/proc/cpuinfo"):
    """The CPU model, family/model numbers and the kernel-relevant features it has.

    Read from ``cpuinfo_path`` where it exists (Linux); elsewhere the model is
    :func:`platform.processor` (or the machine type) and the features are unknown (None).
    """
    fields = _cpuinfo(cpuinfo_path)
    model = fields.get("model name") or fields.get("Processor") or fields.get("cpu model")
    flags = fields.get("flags") or fields.get("Features")
    return {
        "model": model or platform.processor() or platform.machine() or "unknown",
        "family": int(fields["cpu family"]) if fields.get("cpu family", "").isdigit() else None,
        "model_number": int(fields["model"]) if fields.get("model", "").isdigit() else None,
        "machine": platform.machine(),
        "logical_cpus": os.cpu_count(),
        "features": None if flags is None else
        [f for f in KERNEL_FEATURES if f in set(flags.split())],
    }


def kernel_paths():
    """For each kernel in ``SIMD_KERNELS``, the instruction-set path its ``simd_path()``
    reports on this CPU, or None where the built kernel does not report one."""
    paths = {}
    for name in SIMD_KERNELS:
        module = importlib.import_module(f"fastrank._ext.{name}")
        report = getattr(module, "simd_path", None)
        paths[name] = report() if callable(report) else None
    return paths


def use_simd(path):
    """Run every kernel on the instruction-set path ``path`` from now on.

    Every path gives the same results, bit for bit; they differ in speed. At import the
    kernels take the best path the CPU runs, or the one the environment variable
    ``FASTRANK_SIMD`` names (read once, when the kernels are first loaded; an unknown or
    unsupported name is refused there with the same errors). :func:`show_config` reports
    the path in use and those the CPU runs.

    Parameters
    ----------
    path : {"portable", "popcnt", "avx2", "avx512", "avx512-vpopcntdq"}
        ``"portable"``: portable C, any CPU. ``"popcnt"``: x86-64 with POPCNT (VG-RAM
        counts bits with it; the dense dot products emulate fma, as CPUs without FMA3 need).
        ``"avx2"``: AVX2 and FMA3. ``"avx512"``: AVX-512 F, BW, VL and DQ.
        ``"avx512-vpopcntdq"``: also AVX-512 VPOPCNTDQ and VBMI (Ice Lake, Zen 4 and later).

    Returns
    -------
    str
        The path used before, e.g. to restore it.

    Raises
    ------
    ValueError
        ``path`` is not one of the above, or the CPU lacks a feature it needs (the
        features missing are named).

    Examples
    --------
    >>> import fastrank
    >>> previous = fastrank.use_simd("portable")
    >>> fastrank.show_config(mode="dict")["simd"]["path"]
    'portable'
    >>> _ = fastrank.use_simd(previous)
    """
    return _simd.use(path)


def _info():
    from ._ext import _threads
    build = _threads.build_info()
    openmp = build["openmp"]
    return {
        "fastrank": __version__,
        "python": platform.python_version(),
        "numpy": _version_of("numpy"),
        "scipy": _version_of("scipy"),
        "scikit-learn": _version_of("scikit-learn"),
        "compiler": build["compiler"],
        "openmp": OPENMP_VERSIONS.get(openmp, str(openmp)) if openmp else None,
        "threads": _threads.get_max_threads(),
        "platform": platform.platform(),
        "cpu": cpu_info(),
        "simd": {"path": _simd.path(), "cpu_paths": list(_simd.cpu_paths()),
                 "FASTRANK_SIMD": _simd.ENV},
        "kernel_paths": kernel_paths(),
    }


def _lines(info):
    cpu = info["cpu"]
    family = "" if cpu["family"] is None else \
        f" (family {cpu['family']}, model {cpu['model_number']})"
    features = "unknown" if cpu["features"] is None else " ".join(cpu["features"]) or "none"
    simd = info["simd"]
    forced = "unset" if simd["FASTRANK_SIMD"] is None else repr(simd["FASTRANK_SIMD"])
    return [
        f"fastrank      {info['fastrank']}",
        f"python        {info['python']}",
        f"numpy         {info['numpy']}",
        f"scipy         {info['scipy']}",
        f"scikit-learn  {info['scikit-learn'] or 'not installed'}",
        f"compiler      {info['compiler']}",
        f"openmp        {info['openmp'] or 'no (kernels run on one thread)'}",
        f"threads       {info['threads']} (default for n_jobs=None)",
        f"platform      {info['platform']}",
        f"cpu           {cpu['model']}{family}, {cpu['logical_cpus']} logical CPUs",
        f"cpu features  {features}",
        f"simd          {simd['path']} (this CPU runs {' '.join(simd['cpu_paths'])}; "
        f"FASTRANK_SIMD {forced})",
        *(f"path {name:<11} {path or 'not reported by this build'}"
          for name, path in info["kernel_paths"].items()),
    ]


def show_config(mode="stdout"):
    """Print and return what fastrank runs on.

    Parameters
    ----------
    mode : {"stdout", "dict"}, default "stdout"
        "stdout" prints one line per item to standard output; "dict" only returns them.

    Returns
    -------
    dict
        ``fastrank``, ``python``, ``numpy``, ``scipy``, ``scikit-learn`` (versions; None for
        a package that is not installed), ``compiler`` (that built the kernels), ``openmp``
        (its version, None for a serial build), ``threads`` (the kernels' thread count for
        ``n_jobs=None``), ``platform``, ``cpu`` (``model``, ``family``, ``model_number``,
        ``machine``, ``logical_cpus``, ``features``: those of ``KERNEL_FEATURES`` the CPU
        has, None where they cannot be read), ``simd`` (``path``: the instruction-set path
        in use, :func:`use_simd`; ``cpu_paths``: those the CPU runs; ``FASTRANK_SIMD``: the
        environment variable as read at import, None when unset) and ``kernel_paths``
        (kernel name -> the path of its code it takes, its best at or below the path in
        use; None where the kernel does not report it).

    Raises
    ------
    ValueError
        For another ``mode``.
    """
    if mode not in ("stdout", "dict"):
        raise ValueError(f"unknown mode={mode!r}; valid: 'stdout', 'dict'")
    info = _info()
    if mode == "stdout":
        print("\n".join(_lines(info)), file=sys.stdout)
    return info
