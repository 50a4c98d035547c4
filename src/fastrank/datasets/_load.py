"""One entry point for a data set named by a study or the command line: an embedded name, a
file by its extension, or a Mulan name to fetch.
"""
import os
from collections.abc import Callable
from typing import Any

from .._typing import PathLikeStr
from ._arff import load_arff
from ._base import Dataset
from ._embedded import _EMBEDDED, _load_embedded
from ._libsvm import load_libsvm
from ._mulan import _MULAN, fetch
from ._text import load_text


LOADERS_BY_EXTENSION: dict[str, Callable[..., Dataset]] = {
    ".arff": load_arff, ".svm": load_libsvm, ".libsvm": load_libsvm, ".svmlight": load_libsvm,
    ".json": load_text, ".jsonl": load_text, ".ndjson": load_text, ".csv": load_text}


def load(name: PathLikeStr = "yeast", **kwargs: Any) -> Dataset:
    """Load an embedded data set by name, or a data file by its extension.

    Embedded names (see :func:`list`) win over files of the same name; so the CLI's
    ``--dataset NAME|PATH`` can hand its argument straight to this function.

    Parameters
    ----------
    name : str or os.PathLike, default "yeast"
        An embedded data set's name, or a file: ``.arff`` -> :func:`load_arff`,
        ``.svm``/``.libsvm``/``.svmlight`` -> :func:`load_libsvm`,
        ``.json``/``.jsonl``/``.ndjson``/``.csv`` -> :func:`load_text`.
    **kwargs
        Passed on to the file's loader.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        An unknown name or extension, or what the loader raises.
    FileNotFoundError
        No such file.
    TypeError
        Options given for an embedded data set.

    References
    ----------
    .. [1] A. Elisseeff and J. Weston, "A kernel method for multi-labelled classification",
       Advances in Neural Information Processing Systems 14, 2001 (the yeast data).

    Examples
    --------
    >>> from fastrank import datasets
    >>> datasets.load("yeast")  # doctest: +ELLIPSIS
    Dataset('yeast': 2417 documents, 103 features, 14 labels, cardinality 4.237, ...)
    """
    key = os.fspath(name)
    if key in _EMBEDDED:
        if kwargs:
            raise TypeError(f"embedded data set {key!r} takes no options, got {sorted(kwargs)}")
        return _load_embedded(key)
    ext = os.path.splitext(key)[1].lower()
    if ext in LOADERS_BY_EXTENSION:
        if not os.path.isfile(key):
            raise FileNotFoundError(f"no such file: {key}")
        return LOADERS_BY_EXTENSION[ext](key, **kwargs)
    hint = f" (a Mulan set: fetch({key!r}) downloads it)" if key in _MULAN else ""
    raise ValueError(f"unknown data set {key!r}{hint}; embedded: "
                     f"{', '.join(map(repr, _EMBEDDED))}; or a file ending in "
                     f"{', '.join(LOADERS_BY_EXTENSION)}")


def load_dataset(spec):
    """The data set a study names.

    Parameters
    ----------
    spec : Dataset, str or path
        A :class:`fastrank.datasets.Dataset` (returned as is); an embedded name
        (:func:`fastrank.datasets.load`); a file path (``.arff`` with the Mulan label file
        ``<stem>.xml`` beside it, ``.svm``/``.libsvm``, ``.json``, ``.csv``: see
        :func:`fastrank.datasets.load`); any other name is fetched into the local cache by
        :func:`fastrank.datasets.fetch`.

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError
        For a path with a data file extension that does not exist.
    ValueError
        For a name that is neither embedded nor known to :func:`fastrank.datasets.fetch`.

    Examples
    --------
    >>> from fastrank.study import load_dataset
    >>> load_dataset("yeast").n_documents
    2417
    """
    if isinstance(spec, Dataset):
        return spec
    key = os.fspath(spec)
    ext = os.path.splitext(key)[1].lower()
    if key in _EMBEDDED or ext in LOADERS_BY_EXTENSION:
        return load(key)
    return fetch(key)


def dataset_name(spec):
    """The name under which a study reports a data set.

    Parameters
    ----------
    spec : Dataset, str or path
        As for :func:`load_dataset`.

    Returns
    -------
    str
        The Dataset's name, the file's stem for a path, else the name itself (known without
        loading anything).

    Examples
    --------
    >>> from fastrank.study import dataset_name
    >>> dataset_name("data/emotions/emotions.arff"), dataset_name("yeast")
    ('emotions', 'yeast')
    """
    if isinstance(spec, Dataset):
        return spec.name
    key = os.fspath(spec)
    if os.path.splitext(key)[1].lower() in LOADERS_BY_EXTENSION:
        return os.path.splitext(os.path.basename(key))[0]
    return key
