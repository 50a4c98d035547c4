"""Multi-label data in: ARFF (Mulan and MEKA), libsvm/svmlight, raw text, embedded and
synthetic data sets, and the Mulan benchmark sets downloaded on demand (:func:`fetch`), all
as one :class:`Dataset` value.

Notes
-----
Conventions of every loader:

* ``X`` is a canonical CSR float64 matrix (sorted indices, zeros not stored), ``Y`` a
  C-contiguous uint8 0/1 matrix of shape (documents, labels); a raw-text data set has
  ``X = None`` and ``texts`` set until it is indexed (:class:`fastrank.text.TfidfIndexer`).
* Bad files raise ``ValueError("<file>: line <n>: <what was expected>")``.
* ARFF nominal feature values are encoded by their position in the declaration (Weka's and
  liac-arff's ``encode_nominal`` convention: ``{YES, NO}`` gives YES=0, NO=1); omitted
  sparse entries are 0. Label attributes must be ``{0,1}`` nominal or numeric 0/1. Missing
  values (``?``), ``string``/``date``/``relational`` attributes and instance weights are
  rejected with a clear error.
* Limits: a file may declare more columns than it fills (a libsvm header, a large feature
  or label index), but at most ``MAX_COLUMNS`` = 2**31 - 1 (the kernels' int32 positions);
  and the labels a file makes a loader build -- the dense matrix ``Y`` and the label names,
  counted as (documents + 64) x labels bytes -- may take at most ``LABEL_MATRIX_FACTOR`` =
  64 times the file's size or ``LABEL_MATRIX_FLOOR`` = 256 MiB, whichever is larger.
  Beyond either the loader raises ValueError before allocating, so a small file never
  claims gigabytes. Default feature names ("f0", "f1", ...) are built only when first read.
"""
from ._arff import load_arff
from ._base import LABEL_MATRIX_FACTOR, LABEL_MATRIX_FLOOR, Dataset, DefaultNames
from ._libsvm import load_libsvm, save_libsvm
from ._load import load
from ._mulan import FETCH_DEADLINE, MULAN_URL, ChecksumError, FetchError, fetch, list
from ._synthetic import make_multilabel
from ._text import load_text

__all__ = ["Dataset", "DefaultNames", "load", "list", "fetch", "FetchError", "ChecksumError",
           "MULAN_URL", "FETCH_DEADLINE", "load_arff", "load_libsvm", "save_libsvm",
           "load_text", "make_multilabel"]
