"""Reading a model file (``.npz`` as :meth:`MultiLabelEstimator.save` writes it) without
trusting it: every member is checked against the zip directory, its CRC-32 and its ``.npy``
header before it is mapped, and arrays are memory-mapped, not copied.

``save`` writes an uncompressed zip (``numpy.savez``), so a member's size on disk is its
size in memory. A member that is compressed, whose sizes disagree, that reaches past the
end of the file or into another member, whose local header names another file, whose
bytes do not match the CRC-32 of the zip directory, or whose ``.npy`` header claims more
(or fewer) bytes than the member holds is refused: a file cannot make the loader allocate
more than the file's own size, nothing is inflated (no zip bomb), and a damaged byte is
found before it is used. Object arrays (pickles) are refused.

The CRC-32 is computed by reading the members once through a small buffer (the pages pass
through the operating system's cache, not into the process), so verifying costs one
sequential read of the file and no memory; the arrays are then mapped as before.

:func:`write_npz` writes what ``numpy.savez`` writes with every array's data at a file
offset that is a multiple of ``ALIGN`` (``numpy.savez`` leaves them wherever the zip
headers end), so that a mapped array's elements are aligned as the compiled kernels, which
read them as C types, require; an array of a file that does not align it (written by
``numpy.savez``) is copied when it is read.
"""
import os
import struct
import time
import tokenize
import zipfile
import zlib

import numpy as np

# signature, version, flags, method, time, date, CRC-32, sizes, file name length, extra length
_LOCAL_HEADER = struct.Struct("<4sHHHHHLLLHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_UTF8_NAME = 0x800  # general purpose flag: the file name is UTF-8 (else cp437)
# flags that change what the bytes mean: encrypted, patched data, strong or directory encryption
_FOREIGN_FLAGS = 0x1 | 0x20 | 0x40 | 0x2000
MAX_HEADER_BYTES = 1 << 20  # the JSON header member
_CRC_CHUNK = 1 << 20
# what numpy's .npy header parser raises for bytes that are not a header (it evaluates a
# Python literal, and tokenizes it again for headers written by Python 2)
_NPY_HEADER_ERRORS = (ValueError, TypeError, SyntaxError, NotImplementedError, RecursionError,
                      tokenize.TokenError)


ALIGN = 64  # write_npz puts each array's data at a file offset that is a multiple of it
_PAD_FIELD = 0xD935  # the extra field that pads a local header (the one of Android's zipalign)


class ModelFileError(ValueError):
    """The file is not a well-formed uncompressed ``.npz`` (message: what is wrong)."""


def _zip(f):
    """The zip directory of the open file f; ModelFileError when it is not a zip file, or
    one that zipfile does not implement."""
    try:
        return zipfile.ZipFile(f)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError) as exc:
        raise ModelFileError(f"not a zip file ({exc})") from None


def _member_start(f, info, file_size):
    """Offset of one stored member's bytes, from its local header, which must be that of
    the member the zip directory describes (signature, file name, sizes within the file)."""
    if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
        raise ModelFileError(f"member {info.filename!r} is compressed (model files are "
                             "written uncompressed; refusing to inflate it)")
    if info.flag_bits & _FOREIGN_FLAGS:
        raise ModelFileError(f"member {info.filename!r} is encrypted or patched (zip flags "
                             f"{info.flag_bits:#06x})")
    f.seek(info.header_offset)
    raw = f.read(_LOCAL_HEADER.size)
    if len(raw) != _LOCAL_HEADER.size:
        raise ModelFileError(f"member {info.filename!r} lies past the end of the file")
    signature, _, flags, _, _, _, _, _, _, name_len, extra_len = _LOCAL_HEADER.unpack(raw)
    if signature != _LOCAL_SIGNATURE:
        raise ModelFileError(f"member {info.filename!r} has no local zip header")
    try:
        name = f.read(name_len).decode("utf-8" if flags & _UTF8_NAME else "cp437")
    except UnicodeDecodeError:
        name = None
    if name != info.orig_filename:
        raise ModelFileError(f"member {info.filename!r}: its local header names another "
                             f"file ({name!r})")
    start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
    if start + info.file_size > file_size:
        raise ModelFileError(f"member {info.filename!r} lies past the end of the file "
                             "(truncated?)")
    return start


def _member(f, info, file_size):
    """Offset, dtype, shape and order of one ``.npy`` member, from its local header."""
    start = _member_start(f, info, file_size)
    f.seek(start)
    shape, fortran, dtype = _npy_header(f, info, start)
    return f.tell(), dtype, tuple(shape), "F" if fortran else "C"


def _check_crc(f, info, start):
    """The member's bytes against the CRC-32 of the zip directory, read through a buffer."""
    f.seek(start)
    buf = bytearray(min(_CRC_CHUNK, info.file_size))
    view, crc, left = memoryview(buf), 0, info.file_size
    while left:
        got = f.readinto(view[:min(left, len(buf))])
        if not got:
            raise ModelFileError(f"member {info.filename!r} lies past the end of the file")
        crc = zlib.crc32(view[:got], crc)
        left -= got
    if crc != info.CRC:
        raise ModelFileError(f"member {info.filename!r} is damaged: its CRC-32 is "
                             f"{crc:08x}, the zip directory records {info.CRC:08x}")


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
    except _NPY_HEADER_ERRORS as exc:
        raise ModelFileError(f"member {info.filename!r} is not a .npy array "
                             f"({type(exc).__name__}: {exc})") from None
    if dtype.hasobject:
        raise ModelFileError(f"member {info.filename!r} holds Python objects (refused: model "
                             "files never contain pickles)")
    if dtype.itemsize == 0 or any(n < 0 for n in shape):  # any shape would fit 0 bytes
        raise ModelFileError(f"member {info.filename!r}: its header claims {dtype} {shape} "
                             "(elements of 0 bytes or a negative dimension)")
    data_start = f.tell()
    n_bytes = dtype.itemsize * int(np.prod(shape, dtype=object))
    if data_start + n_bytes != start + info.file_size:
        raise ModelFileError(f"member {info.filename!r}: its header claims {n_bytes} bytes "
                             f"of {dtype} {shape}, the member holds "
                             f"{start + info.file_size - data_start}")
    return shape, fortran, dtype


def write_npz(f, arrays):
    """Write ``{name: array}`` to the binary file ``f`` as ``numpy.savez`` does (a stored
    zip of ``.npy`` members, Zip64 headers), each array's data at a file offset that is a
    multiple of ALIGN: the ``.npy`` header fills a multiple of 64 bytes, and an extra field
    pads the member's local header (30 bytes, the name, the padding field, the 20-byte Zip64
    field) to end on a multiple of ALIGN."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", time.localtime()[:6])
            pad = -(archive.fp.tell() + _LOCAL_HEADER.size + len(info.filename.encode())
                    + 4 + 20) % ALIGN
            info.extra = struct.pack("<HH", _PAD_FIELD, pad) + bytes(pad)
            with archive.open(info, "w", force_zip64=True) as member:  # streamed, no copy
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def read_npz(path):
    """``{name: array}`` of the members of ``path`` (names without ``.npy``), memory-mapped
    read-only (nothing is read into the process until used); an array whose data the file
    does not align to its elements (a file written by ``numpy.savez``) is copied. A
    malformed, overlapping, duplicate or damaged member raises :class:`ModelFileError`
    before any array is mapped."""
    file_size = os.path.getsize(path)
    with open(path, "rb") as f:
        starts = {}
        for info in _zip(f).infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else None
            if name is None:
                raise ModelFileError(f"member {info.filename!r} is not a .npy array")
            if name in starts:
                raise ModelFileError(f"member {info.filename!r} appears twice")
            starts[name] = (info, _member_start(f, info, file_size))
        ordered = sorted(starts.values(), key=lambda member: member[1])
        for (a, a_start), (b, b_start) in zip(ordered, ordered[1:]):
            if b_start < a_start + a.file_size:  # each byte is read (and checked) once
                raise ModelFileError(f"members {a.filename!r} and {b.filename!r} overlap")
        layout = {}
        for name, (info, start) in starts.items():
            _check_crc(f, info, start)
            layout[name] = _member(f, info, file_size)
    arrays = {}
    for name, (offset, dtype, shape, order) in layout.items():
        if dtype.itemsize == 0 or 0 in shape:
            arrays[name] = np.empty(shape, dtype=dtype, order=order)
        else:
            arrays[name] = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                                     order=order).view(np.ndarray)
            if not arrays[name].flags.aligned:
                arrays[name] = arrays[name].copy(order="K")
                arrays[name].flags.writeable = False
    return arrays


def read_member(path, name, max_bytes):
    """The array of member ``name`` of ``path``, read into memory after the checks
    :func:`read_npz` makes of it (its local header, its CRC-32, its ``.npy`` header) and
    none of the other members': a look at one small member (at most ``max_bytes``) of a
    file that is then loaded whole. Raises :class:`ModelFileError`."""
    file_size = os.path.getsize(path)
    with open(path, "rb") as f:
        try:
            info = _zip(f).getinfo(f"{name}.npy")
        except KeyError:
            raise ModelFileError(f"no member {name!r}") from None
        if info.file_size > max_bytes:
            raise ModelFileError(f"member {name!r} holds {info.file_size} bytes, more than "
                                 f"{max_bytes}")
        start = _member_start(f, info, file_size)
        _check_crc(f, info, start)
        offset, dtype, shape, order = _member(f, info, file_size)
        f.seek(offset)
        count = int(np.prod(shape, dtype=object))
        return np.frombuffer(f.read(count * dtype.itemsize), dtype, count).reshape(
            shape, order=order)


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
