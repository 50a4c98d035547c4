"""Type aliases of the public annotations (for readers and type checkers; no runtime checks)."""
from os import PathLike
from typing import Literal, Union

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

#: a 2-D matrix given as anything NumPy reads, or a SciPy sparse matrix/array
MatrixLike = Union[npt.ArrayLike, sp.spmatrix, sp.sparray]
#: a 0/1 indicator matrix, or a list of label sets (iterables of label indices or names)
LabelsLike = Union[MatrixLike, "list[object]"]
#: the seed of every random choice: None (fresh randomness), an int or a Generator
RandomStateLike = Union[None, int, np.random.Generator]
#: a file name
PathLikeStr = Union[str, "PathLike[str]"]
#: ranking types of the metrics (``"min"``/``"max"`` are aliases of standard/modified)
Ties = Literal["ordinal", "dense", "standard", "modified", "expected", "min", "max"]
