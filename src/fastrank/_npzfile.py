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

import numpy as np

_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra length
_LOCAL_SIGNATURE = b"PK\x03\x04"
MAX_HEADER_BYTES = 1 << 20  # the JSON header member


class ModelFileError(ValueError):
    """The file is not a well-formed uncompressed ``.npz`` (message: what is wrong)."""


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
    return data_start, dtype, tuple(shape), "F" if fortran else "C"


def read_npz(path):
    """``{name: array}`` of the members of ``path`` (names without ``.npy``), memory-mapped
    read-only (nothing is read until used). A malformed or duplicate member raises
    :class:`ModelFileError` before any array is mapped."""
    file_size = os.path.getsize(path)
    with open(path, "rb") as f:
        try:
            infos = zipfile.ZipFile(f).infolist()
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
            raise ModelFileError(f"not a zip file ({exc})") from None
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
