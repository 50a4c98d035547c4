"""A downstream C extension that embeds fastrank through its C API (fastrank.h): built
against the installed fastrank (``fastrank.get_include()``), linked with nothing of it."""
import sys

from setuptools import Extension, setup

import fastrank

FLAGS = [] if sys.platform == "win32" else ["-O1", "-g0", "-pthread"]

setup(
    name="fastrank-embed-c",
    ext_modules=[Extension("embed_c", ["embed_c.c"], include_dirs=[fastrank.get_include()],
                           extra_compile_args=FLAGS, extra_link_args=FLAGS[2:])],
)
