"""The data sets shipped inside the package (``fastrank/data``).
"""
import bz2
from importlib import resources

import numpy as np

from ._arff import _parse_rows
from ._base import Dataset


_EMBEDDED = {
    "yeast": {
        "name": "yeast",
        "file": "yeast.i32.bz2",
        # SHA-256 of the CSV, the content of river's yeast.csv.gz, which _embedded_csv
        # rebuilds byte for byte
        "csv_sha256": "fd17cb9b53acaaf5e82a9e0795e2667167775915c0e32c1f6fe0fadb0d3bd703",
        "documents": 2417, "features": 103, "labels": 14,
        "description": "Gene functional classes of the yeast Saccharomyces cerevisiae: "
                       "micro-array expression and phylogenetic profiles (103 numeric "
                       "features), 14 functional categories; the Mulan version.",
        "source": "river 0.26.1 wheel on PyPI, file river/datasets/yeast.csv.gz, its CSV "
                  "rebuilt byte for byte (see fastrank/data/PROVENANCE.md)",
        "licence": "BSD-3-Clause (river, Copyright (c) 2020, the river developers)",
        "citation": "A. Elisseeff and J. Weston (2001). A kernel method for multi-labelled "
                    "classification. Advances in Neural Information Processing Systems 14.",
    },
}


def _embedded_csv(key):
    """The CSV of an embedded data set, byte for byte (SHA-256 ``csv_sha256``). Its file holds,
    compressed with bzip2, the CSV's header line, then every cell as an integer number of
    millionths (int32, little-endian), column after column: each cell of the CSV is such a
    number in decimal with six places, its trailing zeros (and a point left bare) dropped.
    Stored so, the yeast data take 624 KB, against 704 KB for its CSV compressed alone."""
    raw = bz2.decompress(
        resources.files("fastrank").joinpath("data", _EMBEDDED[key]["file"]).read_bytes())
    header, cells = raw.split(b"\n", 1)
    columns = len(header.split(b","))
    millionths = np.frombuffer(cells, dtype="<i4").reshape(columns, -1).T.tolist()
    rows = (",".join(_decimal(v) for v in row) for row in millionths)
    return header + b"\n" + "".join(row + "\n" for row in rows).encode("ascii")


def _decimal(millionths):
    """An integer number of millionths as the CSV writes it: 4168 -> '0.004168', -1700 ->
    '-0.0017', 1000000 -> '1'."""
    size = abs(millionths)
    text = f"{size // 1_000_000}.{size % 1_000_000:06d}".rstrip("0").rstrip(".")
    return "-" + text if millionths < 0 else text


def _load_embedded(key):
    info = _EMBEDDED[key]
    header, body = _embedded_csv(key).split(b"\n", 1)
    names = header.decode("ascii").strip().split(",")
    is_label = (np.arange(len(names)) >= info["features"]).astype(np.uint8)
    X, Y = _parse_rows(body, 2, f"fastrank/data/{info['file']}", names, is_label,
                       [None] * len(names))
    meta = {k: info[k] for k in ("description", "source", "licence", "citation")}
    return Dataset(X, Y, feature_names=names[:info["features"]],
                   label_names=names[info["features"]:], name=key, info=meta)


def _embedded_entries():
    return [{"name": info["name"], "origin": "embedded", "cached": True,
             **{k: v for k, v in info.items() if k not in ("name", "file", "csv_sha256")}}
            for info in _EMBEDDED.values()]
