"""The data sets shipped inside the package (``fastrank/data``).
"""
from importlib import resources

import numpy as np
import scipy.sparse as sp

from ._base import Dataset


_EMBEDDED = {
    "yeast": {
        "name": "yeast",
        "file": "yeast.z32.xz",
        # SHA-256 of the CSV, the content of river's yeast.csv.gz, which the cells of the
        # file rebuild byte for byte (_embedded_cells)
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


def _embedded_cells(key):
    """The column names and the cells of an embedded data set, each cell an integer number
    of millionths (int32, documents x columns). Its file holds, compressed with xz, the
    CSV's header line, then the cells, column after column, each zigzag-encoded (2c for
    c >= 0, -2c - 1 below: small magnitudes, small numbers) as a uint32 whose four bytes
    lie in four planes, the low bytes of all cells first: each cell of the CSV is such a
    number in decimal with six places, its trailing zeros (and a point left bare) dropped,
    so that the CSV is rebuilt byte for byte (SHA-256 ``csv_sha256``). Stored so, the
    yeast data take 596 KB, against 624 KB for the cells as plain int32 with bzip2 and
    704 KB for its CSV compressed alone."""
    import lzma  # here: a Python built without it still imports fastrank

    raw = lzma.decompress(
        resources.files("fastrank").joinpath("data", _EMBEDDED[key]["file"]).read_bytes())
    header, planes = raw.split(b"\n", 1)
    names = header.decode("ascii").strip().split(",")
    zigzag = np.frombuffer(planes, dtype=np.uint8).reshape(4, -1).T.copy().view("<u4")
    cells = ((zigzag >> 1).astype(np.int32) ^ -(zigzag & 1).astype(np.int32)).ravel()
    return names, cells.reshape(len(names), -1).T


def _load_embedded(key):
    info = _EMBEDDED[key]
    names, cells = _embedded_cells(key)
    features = info["features"]
    # a number of millionths over 10**6, rounded once: the double its decimal reads as
    X = sp.csr_matrix(cells[:, :features] / 1e6)
    Y = (cells[:, features:] // 1_000_000).astype(np.uint8)
    meta = {k: info[k] for k in ("description", "source", "licence", "citation")}
    return Dataset(X, Y, feature_names=names[:features], label_names=names[features:],
                   name=key, info=meta)


def _embedded_entries():
    return [{"name": info["name"], "origin": "embedded", "cached": True,
             **{k: v for k, v in info.items() if k not in ("name", "file", "csv_sha256")}}
            for info in _EMBEDDED.values()]
