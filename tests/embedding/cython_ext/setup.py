"""A downstream Cython extension that embeds fastrank through ``cimport fastrank``:
built against the installed fastrank (``fastrank.get_include()``), linked with nothing."""
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

import fastrank

setup(
    name="fastrank-embed-cython",
    ext_modules=cythonize(
        [Extension("embed_cython", ["embed_cython.pyx"], include_dirs=[fastrank.get_include()],
                   extra_compile_args=[] if sys.platform == "win32" else ["-O1", "-g0"])],
        # where fastrank/__init__.pxd is: on sys.path already for an installed fastrank, not
        # for an editable install of a source tree
        include_path=[str(Path(fastrank.__file__).parents[1])],
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False},
    ),
)
