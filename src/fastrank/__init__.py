"""fastrank: tie-aware multi-label ranking metrics and lazy classifiers on compiled kernels.

The ranking types, metrics, classifiers and study of Melotti (2009) [1]_, and the ROC
analysis and calibration of Matsubara (2008) [2]_.

Public names are imported lazily from their submodules on first use, so ``import fastrank``
stays cheap and each concept lives in exactly one module:

- ``fastrank.ranking``   -- ranking kernel: :func:`rank`, :func:`tie_groups`
- ``fastrank.metrics``   -- the tie-aware metric suite, :func:`evaluate`, ROC/AUC
- ``fastrank.neighbors`` -- :func:`topk_cosine`, :class:`KNN`, :class:`MLkNN`
- ``fastrank.wnn``       -- :class:`VGRAM`, :class:`VGRAMCor`
- ``fastrank.datasets``, ``fastrank.text``, ``fastrank.model_selection``,
  ``fastrank.calibration``, ``fastrank.stats``, ``fastrank.study``, ``fastrank.report``,
  ``fastrank.study.compare`` (:func:`run_benchmark`, the study over many data sets)
- ``fastrank.dask`` -- the same on a Dask cluster (the ``dask`` extra)
- :func:`show_config` -- versions, build, CPU and the kernels' instruction-set paths
- :func:`use_simd` -- run the kernels on another instruction-set path (``FASTRANK_SIMD``)
- :func:`load` -- a model file saved by any fastrank classifier (``model.save(path)``)
- :func:`get_include` -- the directory of ``fastrank.h``, the C API (``cimport fastrank``:
  the Cython API); see the guide, "Embedding fastrank"

References
----------
.. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo de
   texto*, master's thesis, Universidade Federal do Espírito Santo, 2009.
.. [2] E. T. Matsubara, *Relações entre ranking, análise ROC e calibração em aprendizado de
   máquina*, PhD thesis, ICMC-USP, 2008.

Examples
--------
>>> import fastrank
>>> fastrank.rank([[.5, .2, .2, .1]], "modified")
array([[1, 3, 3, 4]], dtype=int32)
>>> round(fastrank.coverage([{0, 1}], [[.5, .2, .2, .1]], ties="dense"), 4)
1.0
"""
import importlib

from ._version import __version__

_EXPORTS = {
    "rank": "ranking",
    "tie_groups": "ranking",
    "TieGroups": "ranking",
    "RANK_METHODS": "ranking",
    "evaluate": "metrics",
    "Evaluator": "metrics",
    "cutoff": "metrics",
    "one_error": "metrics",
    "coverage": "metrics",
    "ranking_loss": "metrics",
    "average_precision": "metrics",
    "r_precision": "metrics",
    "hamming_loss": "metrics",
    "exact_match": "metrics",
    "zero_one_loss": "metrics",
    "accuracy": "metrics",
    "precision": "metrics",
    "recall": "metrics",
    "fbeta": "metrics",
    "f1": "metrics",
    "contingency": "metrics",
    "label_problem_rates": "metrics",
    "evaluate_at_k": "metrics",
    "TopKEvaluator": "metrics",
    "precision_at_k": "metrics",
    "recall_at_k": "metrics",
    "dcg_at_k": "metrics",
    "ndcg_at_k": "metrics",
    "psprecision_at_k": "metrics",
    "psdcg_at_k": "metrics",
    "psndcg_at_k": "metrics",
    "propensity": "metrics",
    "auc": "metrics",
    "roc_curve": "metrics",
    "roc_convex_hull": "metrics",
    "topk_cosine": "neighbors",
    "KNN": "neighbors",
    "MLkNN": "neighbors",
    "VGRAM": "wnn",
    "VGRAMCor": "wnn",
    "run_study": "study",
    "run_benchmark": "study.compare",
    "show_config": "_config",
    "load": "_base",
    "use_simd": "_config",
}

_SUBMODULES = {"ranking", "metrics", "neighbors", "wnn", "datasets", "text", "model_selection",
               "calibration", "stats", "study", "benchmark"}

__all__ = ["__version__", "get_include", *_EXPORTS]


def get_include() -> str:
    """The directory of ``fastrank.h``, the header of fastrank's C API (and of the Cython
    API, ``cimport fastrank``): the ``include_dirs`` of an extension that embeds fastrank,
    as ``numpy.get_include()`` is for NumPy's."""
    import os
    return os.path.join(os.path.dirname(__file__), "include")


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'fastrank' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)
