"""Arrays of other libraries as NumPy arrays: the one conversion every input check makes.

An object that exports DLPack (``__dlpack__``: PyTorch tensors, JAX and CuPy arrays, any
array-API array) is read through :func:`numpy.from_dlpack`: in host memory it is a view,
never a copy; in device memory (a GPU) it is copied to host memory once, which costs one
transfer of its bytes over the device's link (PCIe: a few GB/s, so milliseconds per 10 MB)
and as much host memory. Anything else (NumPy arrays, buffer-protocol objects, pandas and
polars frames and series, nested lists) goes through :func:`numpy.asarray`, a view wherever the
object's memory layout allows one. Results are always NumPy, their elements aligned as the
compiled kernels read them (as C types): a view whose elements are not (an array over a
byte buffer at an odd offset) is copied. pandas' nullable columns (Float64, Int64,
boolean) are read in their NumPy types, and values of other real types become float64
only where that is exact (:func:`exact_float64`).
"""
import numpy as np
import scipy.sparse as sp

#: DLPack device types whose memory the CPU reads directly: CPU, CUDA pinned host memory,
#: ROCm pinned host memory, CUDA managed memory (``DLDeviceType`` in ``dlpack.h``).
HOST_DEVICES = (1, 3, 11, 13)


def as_numpy(x, name):
    """``x`` as an ndarray: a view of host memory where one exists, one copy of device
    memory; TypeError naming ``name`` when a DLPack producer refuses the export (a tensor
    that requires gradients, a dtype NumPy lacks such as bfloat16)."""
    if isinstance(x, np.ndarray) or not hasattr(x, "__dlpack_device__"):
        return _aligned(_nullable_to_numpy(x, name) if hasattr(x, "dtypes") else np.asarray(x))
    try:
        if x.__dlpack_device__()[0] in HOST_DEVICES:
            return _aligned(np.from_dlpack(x))
        return np.from_dlpack(x, device="cpu", copy=True)  # one copy to host memory
    except (BufferError, RuntimeError, TypeError, ValueError) as exc:
        raise TypeError(f"{name}: cannot read this {type(x).__module__}.{type(x).__name__} "
                        f"as a NumPy array ({exc}); give it detached, in a dtype NumPy has "
                        "(bool, integers, float32/float64)") from None


def _nullable_to_numpy(x, name):
    """A pandas frame or series whose columns are nullable extension types (Float64,
    Int64, boolean: NumPy reads them as objects) in their NumPy types; ValueError naming
    ``name`` where one holds a missing value. Anything else as NumPy reads it."""
    dtypes = x.dtypes  # a frame's: a series of them; a series': one
    dtypes = list(dtypes) if hasattr(dtypes, "__iter__") else [dtypes]
    plain = [d if isinstance(d, np.dtype) else getattr(d, "numpy_dtype", None) for d in dtypes]
    if not dtypes or any(p is None for p in plain) or all(isinstance(d, np.dtype) for d in dtypes):
        return np.asarray(x)
    if np.asarray(x.isna()).any():
        raise ValueError(f"{name} holds missing values (pandas.NA)")
    return x.to_numpy(dtype=np.result_type(*plain))


def _aligned(arr):
    return arr if arr.flags.aligned else arr.copy(order="K")


def converted(x, name):
    """``x`` itself when it is already NumPy, SciPy sparse or a Python container (a list of
    label sets or a top-k pair), else :func:`as_numpy` of it: the one conversion of an
    argument that is read more than once."""
    if x is None or isinstance(x, (np.ndarray, list, tuple)) or sp.issparse(x):
        return x
    return as_numpy(x, name)


def exact_float64(values, name, row_of):
    """The real ``values`` (not float32/float64) as float64, refused when a value does not
    convert exactly: beliefs tie exactly when they are equal, and integers beyond 2**53
    or long doubles rounded to float64 would tie where they differ. ValueError naming
    ``name`` and the row (``row_of`` a position in ``values.ravel(order="K")``)."""
    out = values.astype(np.float64)
    if values.dtype.itemsize < 8:
        return out  # booleans, float16 and integers of 32 bits or fewer fit float64
    flat, got = values.ravel(order="K"), out.ravel(order="K")
    if values.dtype.kind in "iu":  # only magnitudes past 2**53 can round
        at = np.flatnonzero(np.abs(got) >= 2.0**53)
        limit = 2.0**63 if values.dtype.kind == "i" else 2.0**64
        f = got[at]
        lost = (f >= limit) | (np.where(f < limit, f, 0).astype(values.dtype) != flat[at])
    else:
        at = np.arange(flat.size)
        lost = ~((got.astype(values.dtype) == flat) | np.isnan(flat))
    if lost.any():
        first = at[np.argmax(lost)]
        raise ValueError(f"{name} holds {str(flat[first])} (first in row {int(row_of(first))}"
                         f"), which float64 cannot hold exactly: beliefs would tie that "
                         f"differ; convert them to float64 first if that is meant")
    return out
