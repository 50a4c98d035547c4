"""Raw-text data sets: JSON, JSON Lines and CSV records of a text and its labels.
"""
import csv
import io
import json
import os
from typing import Literal

import numpy as np

from .._typing import PathLikeStr
from ._base import Dataset, _check_label_matrix


def _read_text_file(path):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{path}: line {line}: not valid UTF-8") from None


def _records(path, fmt):
    """(line, record) pairs of a JSON list, JSON Lines or CSV file."""
    text = _read_text_file(path)
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
        out, start = [], 1  # start: the line the next record (the header first) starts on
        try:
            if reader.fieldnames is not None:
                start = reader.line_num + 1
            for row in reader:  # a record of more or fewer fields than the header: refused
                if None in row or None in row.values():
                    n = sum(k is not None and v is not None for k, v in row.items()) \
                        + len(row.get(None, ()))
                    raise ValueError(f"{path}: line {start}: a record of {n} field(s) under "
                                     f"a header of {len(reader.fieldnames)}")
                out.append((reader.line_num, row))
                start = reader.line_num + 1
        except csv.Error as exc:  # an unterminated quote included
            raise ValueError(f"{path}: line {start}: malformed CSV ({exc})") from None
        return out
    if fmt == "jsonl":
        out = []
        # lines end at '\n' alone: JSON strings may hold U+2028, U+0085, ... as they are
        for k, line in enumerate(text.split("\n"), 1):
            if line.strip():
                try:
                    out.append((k, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}: line {k}: malformed JSON ({exc.msg})") from None
                except RecursionError:
                    raise ValueError(f"{path}: line {k}: JSON nested too deeply") from None
                except ValueError as exc:  # an integer of 4 300 digits or more
                    raise ValueError(f"{path}: line {k}: {exc}") from None
        return out
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:  # an integer of 4 300 digits or more
        raise ValueError(f"{path}: {exc}") from None
    if not isinstance(doc, list):
        raise ValueError(f"{path}: line 1: expected a JSON list of records")
    return [(None, rec) for rec in doc]


_TEXT_FORMATS: dict[str, Literal["json", "jsonl", "csv"]] = {
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def load_text(path: PathLikeStr, text_field: str = "text", labels_field: str = "labels",
              format: Literal["json", "jsonl", "csv"] | None = None, label_sep: str = ",",
              name: str | None = None) -> Dataset:
    """Load raw documents with label lists from JSON (a list of objects), JSON Lines or CSV.

    ``format`` is "json", "jsonl" or "csv" (default: from the extension). In JSON a record's
    labels are a list of strings (a single string is one label); in CSV the labels cell is
    split on ``label_sep``. Label columns are the distinct labels in sorted order. The result
    has ``X = None`` and ``texts``: index it with :class:`fastrank.text.TfidfIndexer` fitted
    on the training documents only.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    text_field, labels_field : str, default "text", "labels"
        The record fields (CSV columns) of the text and of the labels.
    format : {"json", "jsonl", "csv"}, optional
        Default: from the extension (.json; .jsonl or .ndjson; .csv).
    label_sep : str, default ","
        Separator of the labels in a CSV cell.
    name : str, optional
        The Dataset's name (default: the file's stem).

    Returns
    -------
    Dataset
        With ``X = None``.

    Raises
    ------
    ValueError
        An unknown format, a malformed file or record (missing field, text not a string,
        labels not strings).
    OSError
        The file cannot be read.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from fastrank.datasets import load_text
    >>> records = [{"text": "cultivo de arroz", "labels": ["agro"]},
    ...            {"text": "venda de carros", "labels": ["comercio", "auto"]}]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "docs.json")
    ...     with open(path, "w") as f:
    ...         json.dump(records, f)
    ...     data = load_text(path)
    >>> data.texts, data.label_names
    (['cultivo de arroz', 'venda de carros'], ['agro', 'auto', 'comercio'])
    >>> data.Y
    array([[1, 0, 0],
           [0, 1, 1]], dtype=uint8)
    """
    path = os.fspath(path)
    if format is None:
        ext = os.path.splitext(path)[1].lower()
        if ext not in _TEXT_FORMATS:
            raise ValueError(f"{path}: cannot tell the format from {ext!r}; pass format= one "
                             f"of 'json', 'jsonl', 'csv'")
        format = _TEXT_FORMATS[ext]
    elif format not in ("json", "jsonl", "csv"):
        raise ValueError(f"unknown format={format!r}; valid: 'json', 'jsonl', 'csv'")
    if not isinstance(label_sep, str) or not label_sep:
        raise ValueError(f"label_sep must be a non-empty string, got {label_sep!r}")
    texts, label_lists = [], []
    for k, (line, rec) in enumerate(_records(path, format)):
        where = f"{path}: line {line}" if line is not None else f"{path}: record {k}"
        if not isinstance(rec, dict) or text_field not in rec or labels_field not in rec:
            raise ValueError(f"{where}: expected an object with fields {text_field!r} and "
                             f"{labels_field!r}")
        text, labels = rec[text_field], rec[labels_field]
        if format == "csv":
            labels = [s.strip() for s in (labels or "").split(label_sep) if s.strip()]
        elif isinstance(labels, str):
            labels = [labels]
        if not isinstance(text, str) or not isinstance(labels, list) \
                or not all(isinstance(s, (str, int)) and not isinstance(s, bool)
                           for s in labels):  # a JSON true is no label
            raise ValueError(f"{where}: {text_field!r} must be a string and {labels_field!r} a "
                             "list of labels")
        texts.append(text)
        label_lists.append([str(s) for s in labels])
    if not texts:
        raise ValueError(f"{path}: no documents")
    names = sorted({s for labels in label_lists for s in labels})
    if not names:
        raise ValueError(f"{path}: no labels in any document")
    _check_label_matrix(path, len(texts), len(names), os.path.getsize(path))
    index = {s: j for j, s in enumerate(names)}
    Y = np.zeros((len(texts), len(names)), dtype=np.uint8)
    for i, labels in enumerate(label_lists):
        Y[i, [index[s] for s in labels]] = 1
    return Dataset(None, Y, texts=texts, label_names=names,
                   name=name or os.path.splitext(os.path.basename(path))[0],
                   info={"source": os.path.abspath(path)})
