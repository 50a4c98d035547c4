"""ARFF files (Mulan and MEKA conventions).
"""
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .._typing import PathLikeStr
from ._base import Dataset, _check_label_matrix


def _unquote(s):
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return re.sub(r"\\(.)", r"\1", s[1:-1])
    return s


def _split_quoted(s, sep):
    """Split ``s`` on ``sep`` outside single/double quotes; pieces stripped and unquoted."""
    if "'" not in s and '"' not in s:
        return [p.strip() for p in s.split(sep)]
    out, cur, quote, k = [], [], None, 0
    while k < len(s):
        c = s[k]
        if quote:
            cur.append(c)
            if c == "\\" and k + 1 < len(s):
                cur.append(s[k + 1])
                k += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == sep:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        k += 1
    if quote:
        raise ValueError("unterminated quote")
    out.append("".join(cur).strip())
    return [_unquote(p) for p in out]


def _name_and_rest(s):
    """Split ``<name> <rest>`` where the name may be quoted."""
    s = s.strip()
    if not s:
        raise ValueError("expected '@attribute <name> <type>'")
    if s[:1] in ("'", '"'):
        k = 1
        while k < len(s) and s[k] != s[0]:
            k += 2 if s[k] == "\\" else 1
        if k >= len(s):
            raise ValueError("unterminated quoted name")
        return _unquote(s[:k + 1]), s[k + 1:].strip()
    parts = s.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _read_arff_header(f, path):
    """Read up to and including ``@data``; returns (relation, attributes, next line number).
    Each attribute is (name, None for numeric or the list of nominal values, line)."""
    relation, attrs, lineno, first = "", [], 0, {}  # first: where each name was declared
    for raw in f:
        lineno += 1
        try:
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").strip()
        except UnicodeDecodeError:
            raise ValueError(f"{path}: line {lineno}: not valid UTF-8") from None
        if not line or line.startswith("%"):
            continue
        key = line.split(None, 1)[0].lower()
        body = line[len(key):].strip()
        try:
            if key == "@relation":
                relation = _unquote(body)
            elif key == "@attribute":
                name, kind = _name_and_rest(body)
                if name in first:
                    raise ValueError(f"attribute {name!r} declared again (first on line "
                                     f"{first[name]})")
                first[name] = lineno
                if kind.startswith("{"):
                    if not kind.endswith("}"):
                        raise ValueError("nominal declaration must end with '}'")
                    values = _split_quoted(kind[1:-1], ",")
                    twice = next((v for k, v in enumerate(values) if v in values[:k]), None)
                    if twice is not None:
                        raise ValueError(f"attribute {name!r} lists the value {twice!r} twice")
                    attrs.append((name, values, lineno))
                elif kind.lower() in ("numeric", "real", "integer"):
                    attrs.append((name, None, lineno))
                else:
                    raise ValueError(f"attribute {name!r} has type {kind!r}; supported: "
                                     "numeric, real, integer, {nominal values}")
            elif key == "@data":
                if not attrs:
                    raise ValueError("@data before any @attribute")
                return relation, attrs, lineno + 1
            else:
                raise ValueError(f"expected @relation, @attribute or @data, found {line[:40]!r}")
        except ValueError as exc:
            if str(exc).startswith(str(path)):
                raise
            raise ValueError(f"{path}: line {lineno}: {exc}") from None
    raise ValueError(f"{path}: line {lineno}: file ends before the @data section (truncated?)")


def _labels_from_xml(xml_path):
    try:
        root = ET.parse(xml_path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"{xml_path}: line {exc.position[0]}: malformed XML ({exc.msg})") from None
    names = [el.get("name") for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "label"]
    if not names or None in names:
        raise ValueError(f"{xml_path}: expected <label name=\"...\"> elements (Mulan label file)")
    return names


def _label_positions(labels, attrs, relation, path):
    """Indices of the label attributes: from an XML file, a list of names, a count (the last
    n attributes, Mulan's layout), a sibling ``<stem>.xml``, or MEKA's ``-C n`` relation
    option (n > 0: the first n attributes, n < 0: the last -n)."""
    n_attrs = len(attrs)
    if labels is None:
        sibling = os.path.splitext(os.fspath(path))[0] + ".xml"
        meka = re.search(r"-C\s+(-?\d+)", relation)
        if os.path.isfile(sibling):
            labels = sibling
        elif meka:
            c = int(meka.group(1))
            if c == 0 or abs(c) >= n_attrs:
                raise ValueError(f"{path}: relation option -C {c} does not fit {n_attrs} "
                                 "attributes")
            return np.arange(c) if c > 0 else np.arange(n_attrs + c, n_attrs)
        else:
            raise ValueError(f"{path}: which attributes are labels? pass labels= (the Mulan XML "
                             "file, a label count or label names); no sibling .xml and no "
                             "MEKA '-C n' in @relation")
    if isinstance(labels, (int, np.integer)) and not isinstance(labels, bool):
        if not 0 < labels < n_attrs:
            raise ValueError(f"{path}: labels={labels} must be between 1 and {n_attrs - 1}")
        return np.arange(n_attrs - labels, n_attrs)
    if isinstance(labels, (str, os.PathLike)):
        labels = _labels_from_xml(labels)
    index = {name: a for a, (name, _, _) in enumerate(attrs)}
    missing = [name for name in labels if name not in index]
    if missing:
        raise ValueError(f"{path}: label(s) {missing[:5]} are not attributes of the file "
                         f"(wrong label file?)")
    pos = np.sort(np.fromiter((index[name] for name in labels), dtype=np.intp))
    if np.unique(pos).size != pos.size or pos.size == n_attrs:
        raise ValueError(f"{path}: labels must be distinct and leave at least one feature")
    return pos


def _parse_rows(data, first_line, source, names, is_label, nominal):
    """X (CSR) and Y (uint8) from ARFF-style data rows (dense CSV or sparse), through the
    compiled tokenizer; ``nominal[a]`` is None (numeric) or a dict bytes -> float."""
    from .._ext.text_formats import ATTRIBUTE_KINDS, parse_arff_data

    col = np.empty(len(names), dtype=np.int32)
    n_labels = int(is_label.sum())
    col[is_label == 1] = np.arange(n_labels)
    col[is_label == 0] = np.arange(len(names) - n_labels)
    binary = {b"0": 0.0, b"1": 1.0}
    kind = np.array([ATTRIBUTE_KINDS["numeric" if m is None else "binary" if m == binary
                                     else "nominal"] for m in nominal], dtype=np.uint8)
    xp, xi, xv, yp, yi = parse_arff_data(data, first_line, source, names, col, is_label,
                                         nominal, kind)
    n = xp.size - 1
    if n == 0:
        raise ValueError(f"{source}: line {first_line}: no data rows")
    _check_label_matrix(source, n, n_labels, len(data))
    X = sp.csr_matrix((xv, xi, xp), shape=(n, len(names) - n_labels))
    Y = np.zeros((n, n_labels), dtype=np.uint8)
    Y[np.repeat(np.arange(n), np.diff(yp)), yi] = 1
    return X, Y


def load_arff(path: PathLikeStr, labels: PathLikeStr | Sequence[str] | int | None = None,
              name: str | None = None, *, dense: bool = False) -> Dataset:
    """Load a Mulan or MEKA ARFF file (dense and sparse ``{index value, ...}`` rows).

    Features and labels keep the attribute order of the file (also when the XML lists the
    labels in another order). The data section is tokenized in one compiled pass into CSR,
    which ``X`` is, whether the file's rows are dense or sparse, unless ``dense=True``.

    Parameters
    ----------
    path : str or os.PathLike
        The ``.arff`` file.
    labels : str, os.PathLike, sequence of str, int or None, default None
        Which attributes are labels -- the Mulan XML label file's path, a list of attribute
        names, or an int n (the last n attributes, Mulan's layout). None: the sibling
        ``<stem>.xml`` if it exists, else MEKA's ``-C n`` in ``@relation`` (n > 0: first n
        attributes, n < 0: last -n).
    name : str, optional
        The Dataset's name (default: the file's stem).
    dense : bool, default False
        ``X`` as a float64 NumPy array instead of CSR (:class:`Dataset`'s ``dense``): for a
        pipeline whose steps refuse sparse input, e.g. ``StandardScaler`` (which centres).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        A malformed file (``"<file>: line <n>: <what was expected>"``), labels that cannot
        be found, unsupported attribute types or missing values, limits exceeded (see
        :mod:`fastrank.datasets`).
    OSError
        The file cannot be read.

    References
    ----------
    .. [1] G. Tsoumakas, E. Spyromitros-Xioufis, J. Vilcek and I. Vlahavas, "Mulan: a Java
       library for multi-label learning", Journal of Machine Learning Research 12,
       2411-2414, 2011.

    Examples
    --------
    >>> import os, tempfile
    >>> from fastrank.datasets import load_arff
    >>> arff = '''@relation toy
    ... @attribute f0 numeric
    ... @attribute f1 numeric
    ... @attribute a {0,1}
    ... @attribute b {0,1}
    ... @data
    ... 0.5,1,1,0
    ... {1 2,3 1}
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "toy.arff")
    ...     with open(path, "w") as f:
    ...         _ = f.write(arff)
    ...     data = load_arff(path, labels=2)          # the last two attributes, as Mulan
    >>> data.X.toarray(), data.Y, data.label_names
    (array([[0.5, 1. ],
           [0. , 2. ]]), array([[1, 0],
           [0, 1]], dtype=uint8), ['a', 'b'])
    """
    path = os.fspath(path)
    if not isinstance(dense, bool):
        raise TypeError(f"dense must be True or False, got {dense!r}")
    with open(path, "rb") as f:
        relation, attrs, first_line = _read_arff_header(f, path)
        data = f.read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise ValueError(f"{path}: line {line}: not valid UTF-8") from None
    label_pos = _label_positions(labels, attrs, relation, path)
    is_label = np.zeros(len(attrs), dtype=np.uint8)
    is_label[label_pos] = 1
    nominal: list[dict[bytes, float] | None] = []
    for a, (attr, values, line) in enumerate(attrs):
        if values is None:
            nominal.append(None)
        elif is_label[a]:
            if values not in (["0", "1"], ["0"]):  # a sparse row leaves out its first value
                raise ValueError(f"{path}: line {line}: label attribute {attr!r} must be "
                                 f"{{0,1}} or numeric, declared {{{', '.join(values)}}}")
            nominal.append({b"0": 0.0, b"1": 1.0})
        else:
            nominal.append({v.encode("utf-8"): float(k) for k, v in enumerate(values)})
    names = [a[0] for a in attrs]
    X, Y = _parse_rows(data, first_line, path, names, is_label, nominal)
    return Dataset(X, Y, feature_names=[names[a] for a in np.flatnonzero(is_label == 0)],
                   label_names=[names[a] for a in label_pos],
                   name=name or os.path.splitext(os.path.basename(path))[0],
                   info={"source": os.path.abspath(path), "relation": relation},
                   dense=dense)
