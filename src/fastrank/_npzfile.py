"""Reading a model file (``.npz`` as :meth:`MultiLabelEstimator.save` writes it) without
trusting it: every member is checked against the zip directory and its ``.npy`` header
before a byte of its data is read, and arrays are memory-mapped, not copied.

``save`` writes an uncompressed zip (``numpy.savez``), so a member's size on disk is its
size in memory. A member that is compressed, whose sizes disagree, that reaches past the
end of the file, or whose ``.npy`` header claims more (or fewer) bytes than the member holds
is refused: a file cannot make the loader allocate more than the file's own size, and
nothing is inflated (no zip bomb). Object arrays (pickles) are refused.
"""
import os
import struct
import zipfile
import zlib

import numpy as np

_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra length
_LOCAL_SIGNATURE = b"PK\x03\x04"
MAX_HEADER_BYTES = 1 << 20  # the JSON header member


class ModelFileError(ValueError):
    """The file is not a well-formed uncompressed ``.npz`` (message: what is wrong)."""


def _zip(f):
    """The zip directory of the open file f; ModelFileError when it is not a zip file."""
    try:
        return zipfile.ZipFile(f)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise ModelFileError(f"not a zip file ({exc})") from None


def _member(f, info, file_size):
    """Offset, dtype, shape and order of one ``.npy`` member, from its local header."""
    if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
        raise ModelFileError(f"member {info.filename!r} is compressed (model files are "
                             "written uncompressed; refusing to inflate it)")
    f.seek(info.header_offset)
    raw = f.read(_LOCAL_HEADER.size)
    if len(raw) != _LOCAL_HEADER.size:
        raise ModelFileError(f"member {info.filename!r} lies past the end of the file")
    signature, name_len, extra_len = _LOCAL_HEADER.unpack(raw)
    if signature != _LOCAL_SIGNATURE:
        raise ModelFileError(f"member {info.filename!r} has no local zip header")
    start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
    if start + info.file_size > file_size:
        raise ModelFileError(f"member {info.filename!r} lies past the end of the file "
                             "(truncated?)")
    f.seek(start)
    shape, fortran, dtype = _npy_header(f, info, start)
    return f.tell(), dtype, tuple(shape), "F" if fortran else "C"


def _npy_header(f, info, start):
    """(shape, fortran, dtype) from the ``.npy`` header of member ``info``, which starts at
    offset ``start`` of ``f`` (``f`` positioned there); the array's data must fill the rest
    of the member exactly, and hold no Python objects."""
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except ValueError as exc:
        raise ModelFileError(f"member {info.filename!r} is not a .npy array ({exc})") from None
    if dtype.hasobject:
        raise ModelFileError(f"member {info.filename!r} holds Python objects (refused: model "
                             "files never contain pickles)")
    data_start = f.tell()
    n_bytes = dtype.itemsize * int(np.prod(shape, dtype=object))
    if data_start + n_bytes != start + info.file_size:
        raise ModelFileError(f"member {info.filename!r}: its header claims {n_bytes} bytes "
                             f"of {dtype} {shape}, the member holds "
                             f"{start + info.file_size - data_start}")
    return shape, fortran, dtype


def read_npz(path):
    """``{name: array}`` of the members of ``path`` (names without ``.npy``), memory-mapped
    read-only (nothing is read until used). A malformed or duplicate member raises
    :class:`ModelFileError` before any array is mapped."""
    file_size = os.path.getsize(path)
    with open(path, "rb") as f:
        infos = _zip(f).infolist()
        layout = {}
        for info in infos:
            name = info.filename[:-4] if info.filename.endswith(".npy") else None
            if name is None:
                raise ModelFileError(f"member {info.filename!r} is not a .npy array")
            if name in layout:
                raise ModelFileError(f"member {info.filename!r} appears twice")
            layout[name] = _member(f, info, file_size)
    arrays = {}
    for name, (offset, dtype, shape, order) in layout.items():
        if dtype.itemsize == 0 or 0 in shape:
            arrays[name] = np.empty(shape, dtype=dtype, order=order)
        else:
            arrays[name] = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                                     order=order).view(np.ndarray)
    return arrays


def check_inflated_sizes(path, max_inflated):
    """Check a ``.npz`` data file (``numpy.savez``, ``numpy.savez_compressed``,
    ``scipy.sparse.save_npz``) before NumPy reads it: every member a ``.npy`` array whose
    header matches the member's size, stored members within the file (as :func:`read_npz`
    checks them), and the compressed members declaring at most ``max_inflated`` bytes
    together. Only the headers are inflated; ``zipfile`` stops inflating a member at its
    declared size (and checks its CRC-32), so reading the file then allocates at most its
    own size plus ``max_inflated``. Raises :class:`ModelFileError`."""
    file_size = os.path.getsize(path)
    with open(path, "rb") as f:
        archive = _zip(f)
        infos = archive.infolist()
        inflated = sum(i.file_size for i in infos if i.compress_type != zipfile.ZIP_STORED)
        if inflated > max_inflated:
            raise ModelFileError(
                f"its compressed members would inflate to {inflated} bytes, more than the "
                f"{max_inflated} allowed for a file of {file_size} bytes (save it "
                "uncompressed: numpy.savez, scipy.sparse.save_npz(..., compressed=False))")
        for info in infos:
            if not info.filename.endswith(".npy"):
                raise ModelFileError(f"member {info.filename!r} is not a .npy array")
            if info.compress_type == zipfile.ZIP_STORED:
                _member(f, info, file_size)
                continue
            try:
                with archive.open(info) as member:
                    _npy_header(member, info, 0)
            except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError,
                    OSError, EOFError) as exc:
                raise ModelFileError(f"member {info.filename!r} cannot be inflated "
                                     f"({exc})") from None
