"""Type aliases of the public annotations (for readers and type checkers; no runtime checks).

The matrix aliases are ``Any`` to a type checker: SciPy ships no type information (so any
union with its sparse types is partly ``Any`` already), NumPy's ``ArrayLike`` admits
scalars and strings, and every public function validates its matrices at run time with a
clear error. Their names say what is expected.
"""
from os import PathLike
from typing import Any, Literal, Union

import numpy as np

#: A 2-D matrix: anything ``numpy.asarray`` reads as one (``numpy.typing.ArrayLike``), or a
#: SciPy sparse matrix/array.
MatrixLike = Any
#: Labels: a 0/1 indicator matrix (dense or sparse, as :data:`MatrixLike`), or a list of
#: label sets (iterables of label indices or names).
LabelsLike = Any
#: The seed of every random choice: None (fresh randomness), an int or a Generator.
RandomStateLike = Union[None, int, np.random.Generator]
#: A file name.
PathLikeStr = Union[str, "PathLike[str]"]
#: Ranking types of the metrics (``"min"``/``"max"`` are aliases of standard/modified).
Ties = Literal["ordinal", "dense", "standard", "modified", "expected", "min", "max"]
