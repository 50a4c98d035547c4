"""Sphinx configuration of the fastrank documentation.

Build, with fastrank installed or built in place: ``pip install --group docs`` (pip >= 25.1;
the tools only, nothing compiled) and ``python -m sphinx -W --keep-going -b html docs
docs/_build``.
The API pages are generated (autosummary) from the docstrings of the installed package; the
figures of the user guide are computed at build time by the matplotlib plot directive from
real fastrank calls.
"""
import importlib
import re
from pathlib import Path

from sphinx.ext import autosummary

import fastrank

project = "fastrank"
author = "fastrank developers"
copyright = "2026, fastrank developers"
release = version = fastrank.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
]

exclude_patterns = ["_build"]
templates_path = ["_templates"]
html_theme = "pydata_sphinx_theme"
html_title = f"fastrank {version}"
html_static_path = ["_static"]
html_css_files = ["fastrank.css"]
html_sidebars = {"**": []}   # the guide is short: the top bar and the page's own contents
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}

autosummary_generate = True
autosummary_ignore_module_all = False   # a module's __all__ is its public surface
autodoc_typehints = "none"              # the numpydoc Parameters sections state the types
numpydoc_show_class_members = False     # one page per class, members listed by autosummary
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False
# numpydoc's docstring validation: the checks that flag a docstring that would mislead a
# reader (a documented parameter that does not exist, a malformed section); style checks
# (summary punctuation, missing Examples/See Also, ...) are left to review.
numpydoc_validation_checks = {"PR02", "GL07", "GL08"}
numpydoc_validation_exclude = {r"\.__init__$", r"\._[a-z]", r"\.__[a-z_]+__$"}

plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.figsize": (7.0, 3.6), "font.size": 9}

# Every name in a documented module's __all__ must appear in the API reference; for the
# modules without __all__, api.rst's list is the public surface.
API_MODULES = ("fastrank", "fastrank.metrics", "fastrank.ranking", "fastrank.neighbors",
               "fastrank.wnn", "fastrank.calibration", "fastrank.stats", "fastrank.study",
               "fastrank.study.compare", "fastrank.datasets", "fastrank.text",
               "fastrank.model_selection", "fastrank.report", "fastrank.dask")


def _check_api_reference(app):
    from sphinx.util import logging
    log = logging.getLogger(__name__)
    text = (Path(app.srcdir) / "api.rst").read_text()
    listed, module = {}, None
    for line in text.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
        elif module and re.match(r"^   [A-Za-z_][\w.]*$", line):
            listed.setdefault(module, set()).add(line.strip())
    documented = {id(getattr(importlib.import_module(module), name))
                  for module, names in listed.items() for name in names}
    for name in API_MODULES:
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            if name not in listed:
                log.warning(f"api.rst: module {name} is not documented")
            continue
        # a re-export (the top level) counts as documented under its defining module
        missing = sorted(n for n in set(exported) - {"__version__"}
                         if n not in listed.get(name, set())
                         and id(getattr(module, n)) not in documented)
        if missing:
            log.warning(f"api.rst: {name}.__all__ names not in the reference: {missing}")


def _skip_metadata_routing(app, what, name, obj, skip, options):
    """scikit-learn's generated ``set_*_request`` methods are not fastrank's API."""
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def _summary_keeping_literals_whole(doc, settings, _extract=autosummary.extract_summary):
    """autosummary cuts the summary at the first ". ", also inside an inline literal (e.g.
    ``l1,l2,... idx:val``), leaving an unbalanced literal; then use the whole first line."""
    summary = _extract(doc, settings)
    if summary.count("``") % 2:
        return next(line.strip() for line in doc if line.strip())
    return summary


autosummary.extract_summary = _summary_keeping_literals_whole


def setup(app):
    app.connect("builder-inited", _check_api_reference)
    app.connect("autodoc-skip-member", _skip_metadata_routing)
