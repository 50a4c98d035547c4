"""What fastrank runs on: versions, the build of its kernels, the CPU and the instruction-set
path each kernel takes (:func:`show_config`, ``fastrank config``)."""
import importlib
import importlib.metadata
import os
import platform
import sys

from ._version import __version__

#: CPU features the kernels' paths need, as /proc/cpuinfo names them: POPCNT and AVX-512
#: VPOPCNTDQ count the bits of VG-RAM's binary patterns, AVX2 with FMA (AVX-512 F/DQ) runs
#: the cosine neighbour search, AVX-512 F/BW/VL runs VG-RAM's search and encoding, and VBMI
#: its byte-permute encoding.
KERNEL_FEATURES = ("popcnt", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq",
                   "avx512_vpopcntdq", "avx512vbmi")

#: kernel modules that report the instruction-set path they take (``simd_path()``)
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
        "kernel_paths": kernel_paths(),
    }


def _lines(info):
    cpu = info["cpu"]
    family = "" if cpu["family"] is None else \
        f" (family {cpu['family']}, model {cpu['model_number']})"
    features = "unknown" if cpu["features"] is None else " ".join(cpu["features"]) or "none"
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
        *(f"path {name:<8} {path or 'not reported by this build'}"
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
        has, None where they cannot be read) and ``kernel_paths`` (kernel name -> the
        instruction-set path it takes on this CPU, None where the kernel does not report
        it).

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
