"""Deprecated alias of :mod:`fastrank.study.compare`, the tie study over many data sets.

``fastrank.benchmark`` collided in name with the project's benchmarks; its names are now
imported from :mod:`fastrank.study.compare`, and this module will be removed.
"""
import warnings

from .study.compare import BENCHMARK_FORMAT, BenchmarkResult, PairwiseComparison, run_benchmark

__all__ = ["run_benchmark", "BenchmarkResult", "PairwiseComparison"]

warnings.warn("fastrank.benchmark is deprecated: import from fastrank.study.compare",
              DeprecationWarning, stacklevel=2)
