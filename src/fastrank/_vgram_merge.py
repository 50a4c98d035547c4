"""Merging the outcomes of searches of parts of one VG-RAM WNN memory into the beliefs of one
search of the whole memory, bit for bit (the sharded VG-RAM of :mod:`fastrank.dask`)."""
import numpy as np

from ._ext import vgram as _kernel


def _merge_outcomes(parts, model, tie_policy, label_indptr, label_indices, n_neurons, q):
    """Beliefs from the neuron outcomes of searches of parts of one memory.

    ``parts``: one ``_kernel.new_summary`` dict per part, for the same test rows;
    ``label_indptr``/``label_indices``: the label lists of the whole memory's stored
    documents (indexed by the global numbers in the outcomes). Per (row, neuron), the parts
    at the smallest distance are the tied ones: "random" takes the smallest key among them
    (keys are unique), "all" adds their label counts. Votes are added per neuron in
    ascending order and divided as in the kernel, so the beliefs equal, bit for bit, those
    of one search of the whole memory.
    """
    dist = np.stack([p["dist"] for p in parts])
    n_rows = dist.shape[1]
    out = np.zeros((n_rows, q))
    if n_rows == 0:
        return out
    if tie_policy == "random":
        part = np.lexsort((np.stack([p["key"] for p in parts]), dist), axis=0)[0]
        chosen = np.take_along_axis(np.stack([p["doc"] for p in parts]), part[None], 0)[0]
        rows = np.broadcast_to(np.arange(n_rows)[:, None], chosen.shape)
        if model == _kernel.MODELS["vgram_cor"]:
            lengths = (label_indptr[chosen + 1] - label_indptr[chosen]).ravel()
            starts = np.repeat(label_indptr[chosen].ravel(), lengths)
            within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            labels = label_indices[starts + within]
            rows = np.repeat(rows.ravel(), lengths)
            total = np.bincount(rows, minlength=n_rows).astype(np.float64)
        else:
            labels = np.take_along_axis(np.stack([p["label"] for p in parts]), part[None],
                                        0)[0].ravel()
            rows = rows.ravel()
        out[:] = np.bincount(rows * q + labels, minlength=n_rows * q).reshape(n_rows, q)
    else:
        tied = dist == dist.min(axis=0)
        counts = sum(np.where(t[..., None], p["counts"], 0) for t, p in zip(tied, parts))
        ndocs = sum(np.where(t, p["ndocs"], 0) for t, p in zip(tied, parts))
        outputs = counts.sum(axis=2)   # labels output by the tied documents
        per_neuron = counts / (outputs if model == _kernel.MODELS["vgram"] else ndocs)[..., None]
        out[:] = _sum_over_neurons(per_neuron)
        if model == _kernel.MODELS["vgram_cor"]:
            total = _sum_over_neurons(outputs / ndocs)
    if model == _kernel.MODELS["vgram"]:
        return out / n_neurons
    np.divide(out, total[:, None], out=out, where=total[:, None] > 0)
    return out


def _sum_over_neurons(votes):
    """Sum over the neurons in the kernel's order: in order within each chunk of
    ``NEURONS_PER_CHUNK`` neurons, then the chunks' sums in order (zeros pad the last chunk:
    adding 0 changes no sum), so the result equals the kernel's bit for bit.

    Parameters
    ----------
    votes : ndarray, shape (n_rows, n_neurons, ...)

    Returns
    -------
    ndarray, shape (n_rows, ...)
    """
    chunk = _kernel.NEURONS_PER_CHUNK
    pad = [(0, 0)] * votes.ndim
    pad[1] = (0, -votes.shape[1] % chunk)
    chunks = np.pad(votes, pad).reshape(votes.shape[0], -1, chunk, *votes.shape[2:])
    return np.add.accumulate(np.add.accumulate(chunks, axis=2)[:, :, -1], axis=1)[:, -1]
