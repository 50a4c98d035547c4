"""Build the Cython kernels in src/fastrank/_ext as private modules ``fastrank._ext.<name>``.

Every ``src/fastrank/_ext/*.pyx`` is an extension; the C core it drives (``core/``: C
headers and the C files of ``CORE_SOURCES``, no Python) is compiled into it. OpenMP is used
when the compiler accepts it (probed by compiling a tiny program); otherwise the kernels
build serial (``prange`` degrades to ``range``). Set ``FASTRANK_NO_OPENMP=1`` to force the
serial build.
For development, ``FASTRANK_EXT=tie_ranks,tie_metrics`` builds only the named modules (and
``_cyutility``, the Cython runtime support they all import, when it is out of date).
"""
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, find_namespace_packages, setup
from setuptools.command.build_ext import build_ext

EXT_DIR = Path("src") / "fastrank" / "_ext"

# Extra compile flags of every kernel module (probed like OpenMP; dropped when the compiler
# refuses them). Floating-point rules: instruction sets are chosen at run time inside the
# kernels, and every rounding is the one written (fused multiply-adds only where fma() is
# called): no contraction of a * b + c by the compiler, which GCC does by default wherever
# the target has a fused multiply-add (AArch64, or a function compiled for AVX2/AVX-512), so
# results are the same bits on every CPU and code path. Symbols: a module exports its
# PyInit_ function only, so the C core's functions are called directly (no PLT) and inlined
# within their file like static ones. Aliasing: the kernels read beliefs' bits as sort keys
# and reuse one scratch buffer for keys and for doubles, so the compiler must not assume that
# a store through one type leaves a load through the other unchanged. Unwind tables: the
# kernels are C called from Python, with no C++ exception or thread cancellation to unwind
# through them, so none are emitted (a seventh of each module's size; the wheel stays
# under 2 MB).
KERNEL_FLAGS = ["-ffp-contract=off", "-fvisibility=hidden", "-fno-strict-aliasing",
                "-fno-asynchronous-unwind-tables"]
# Modules that -O3 makes larger but not faster are built for size (the wheel stays under
# 2 MB): Cython's memoryview support at -O2 (a sixth smaller, as fast on a 10 µs call), the
# instruction-set level at -Os (a quarter smaller); the ROC/AUC kernels and the term counts
# at -O2 (a tenth smaller, as fast in benchmarks/bench_roc.py and bench_text.py; the file
# parsers, 5-15 % slower so, stay at -O3). The input checks write one loop per case
# themselves, so the copies of every loop that -O3's unswitching made for each flag
# (doubling ten truth types' code) are left out: a quarter smaller, as fast.
OPTIMIZATION = {"fastrank._ext._cyutility": ["-O2"], "fastrank._ext._simd": ["-Os"],
                "fastrank._ext.roc": ["-O2"], "fastrank._ext.term_counts": ["-O2"],
                "fastrank._ext.checks": ["-O3", "-fno-unswitch-loops"]}


def _compiler_accepts(compiler, flags, link_flags=(), source="int main(void){return 0;}\n"):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write(source)
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=list(flags))
            compiler.link_executable(objs, os.path.join(tmp, "probe"),
                                     extra_postargs=list(link_flags))
        except Exception:
            return False
    return True


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:  # compile the modules side by side, one per core
            self.parallel = os.cpu_count() or 1

    def build_extensions(self):
        is_msvc = self.compiler.compiler_type == "msvc"
        if is_msvc:
            omp_compile, omp_link = ["/openmp"], []
            base = ["/O2"]
        else:
            omp_compile, omp_link = ["-fopenmp"], ["-fopenmp"]
            base = ["-O3", "-fno-math-errno", "-g0"]  # no debug info: 5x smaller, faster build
        use_omp = os.environ.get("FASTRANK_NO_OPENMP") != "1" and _compiler_accepts(
            self.compiler, omp_compile, omp_link,
            "#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        if not use_omp:
            print("fastrank: building without OpenMP (kernels run on one thread)", file=sys.stderr)
        extra = [f for f in KERNEL_FLAGS if not is_msvc and _compiler_accepts(self.compiler, [f])]
        for ext in self.extensions:
            level = OPTIMIZATION.get(ext.name, []) if not is_msvc else []
            ext.extra_compile_args = base + level + extra + (omp_compile if use_omp else [])
            ext.extra_link_args = omp_link if use_omp else []
        super().build_extensions()


# The C core (no Python): headers, and the C files compiled into the module that drives them
CORE_DIR = EXT_DIR / "core"
CORE_SOURCES = {"vgram": ["vgram.c"], "cosine_topk": ["cosine.c"]}
CORE_HEADERS = sorted(str(h) for h in CORE_DIR.rglob("*.h"))
# the C API's public header (fastrank.get_include()), which the capi module implements
INCLUDE_DIR = Path("src") / "fastrank" / "include"

extensions = [
    Extension(
        f"fastrank._ext.{pyx.stem}",
        [str(pyx), *(str(CORE_DIR / c) for c in CORE_SOURCES.get(pyx.stem, []))],
        include_dirs=[np.get_include(), str(CORE_DIR), str(INCLUDE_DIR)],
        depends=CORE_HEADERS + [str(INCLUDE_DIR / "fastrank.h")],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for pyx in sorted(EXT_DIR.glob("*.pyx"))
    if not os.environ.get("FASTRANK_EXT") or pyx.stem in os.environ["FASTRANK_EXT"].split(",")
]
# Cython's runtime support (memoryviews, buffer formats) is generated once, into one module that
# every kernel module imports, instead of being compiled into each of them (40 % less code);
# first, as one of the longest to compile, so that no core waits for it at the end
SHARED_UTILITY = "fastrank._ext._cyutility"
extensions.insert(0, Extension(SHARED_UTILITY, [str(EXT_DIR / "_cyutility.c")]))

setup(
    package_dir={"fastrank": "src/fastrank"},
    # fastrank.data (the embedded data files) has no __init__: a namespace package
    packages=find_namespace_packages("src", include=["fastrank", "fastrank.*"],
                                     exclude=["fastrank._ext.core", "fastrank._ext.core.*",
                                              "fastrank.include"]),
    # the C API's header and the Cython API's declarations (``cimport fastrank``) are public
    package_data={"fastrank": ["py.typed", "__init__.pxd", "include/fastrank.h"],
                  "fastrank.data": ["*.xz", "*.md"]},
    # generated C, the C core (core/) and annotation files are build inputs, not package
    # contents
    # the kernels' sources stay in the sdist: the public C and Cython APIs are fastrank.h and
    # fastrank/__init__.pxd, and nothing downstream cimports the private drivers
    exclude_package_data={"fastrank._ext": ["*.c", "*.cpp", "*.h", "*.html", "*.pyx", "*.pxd"]},
    ext_modules=cythonize(
        extensions,
        nthreads=os.cpu_count() or 1,   # the modules are translated side by side too
        include_path=[str(EXT_DIR)],
        shared_utility_qualified_name=SHARED_UTILITY,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
    cmdclass={"build_ext": BuildExt},
)
