"""Slow, obviously-correct NumPy reference of VG-RAM WNN and VG-RAM WNN-COR (Melotti
2009, §2.6), written from the definitions and independent of the kernel:

* patterns are unpacked boolean arrays; a Minchinton cell compares x[s_i] with x[s_{i+1}]
  (np.roll pairs the last synapse with the first);
* one explicit Hamming distance matrix per neuron;
* VG-RAM WNN entries are explicit (document, label) pairs, one per label, as in the thesis;
* a random choice takes, among the entries at the minimum, the one with the smallest key
  splitmix64(state + entry * gamma) (Python integers), state = row_state(seed, test row *
  n_neurons + neuron) of ``_tiesort.pxd`` and entry the entry's number: its stored
  document's index among the stored documents (VGRAM: the labelled ones), times the number
  of labels plus the label for VGRAM.
"""
import numpy as np

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def splitmix64(state):
    state = (state + GAMMA) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def row_state(seed, row):
    s = (seed ^ ((row * 0xD1B54A32D192ED03) & MASK)) & MASK
    return splitmix64(s)[1]


def entry_key(state, entry):
    return splitmix64((state + int(entry) * GAMMA) & MASK)[1]


def encode(X, synapses):
    """Boolean patterns (n_documents, n_neurons, n_synapses)."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    return X[:, synapses] > X[:, np.roll(synapses, -1, axis=1)]


def distance_matrices(train_bits, test_bits):
    """(n_neurons, n_test, n_train) Hamming distances, from unpacked bits."""
    return np.stack([(test_bits[:, n, None, :] != train_bits[None, :, n, :]).sum(axis=2)
                     for n in range(train_bits.shape[1])])


def tied_entries(model_kind, Y, dist_row):
    """The entries at minimum distance of one neuron for one test document, as (entry
    number, output) in enumeration order: VGRAM -> one per (document, label), output the
    label; COR -> one per document, output its label tuple."""
    Y = np.asarray(Y)
    if model_kind == "VGRAM":
        stored = [t for t in range(Y.shape[0]) if Y[t].any()]
        entries = [(s * Y.shape[1] + c, t, c) for s, t in enumerate(stored)
                   for c in np.flatnonzero(Y[t])]
        d = np.array([dist_row[t] for _, t, _ in entries])
        return [(e, c) for (e, t, c), dt in zip(entries, d) if dt == d.min()]
    tied = np.flatnonzero(dist_row == dist_row.min())
    return [(t, tuple(np.flatnonzero(Y[t]))) for t in tied]


def tied_outputs(model_kind, Y, dist_row):
    """The outputs of tied_entries alone."""
    return [out for _, out in tied_entries(model_kind, Y, dist_row)]


def beliefs(model_kind, tie_policy, X_train, Y, X_test, synapses, seed=0):
    """Belief matrix (n_test, n_labels) of the network wired by ``synapses``."""
    Y = np.asarray(Y)
    n_neurons, q = synapses.shape[0], Y.shape[1]
    D = distance_matrices(encode(X_train, synapses), encode(X_test, synapses))
    F = np.zeros((D.shape[1], q))
    for j in range(D.shape[1]):
        votes = np.zeros(q)
        total = 0.0
        for n in range(n_neurons):
            entries = tied_entries(model_kind, Y, D[n, j])
            outs = [out for _, out in entries]
            if tie_policy == "random":
                state = row_state(seed, j * n_neurons + n)
                chosen = min(entries, key=lambda entry: entry_key(state, entry[0]))[1]
                if model_kind == "VGRAM":
                    votes[chosen] += 1.0
                else:
                    votes[list(chosen)] += 1.0
                    total += len(chosen)
            else:
                cnt = np.zeros(q, dtype=np.int64)
                if model_kind == "VGRAM":
                    np.add.at(cnt, outs, 1)
                    votes += cnt / len(outs)
                else:
                    for labels in outs:
                        cnt[list(labels)] += 1
                    votes += cnt / len(outs)
                    total += sum(len(labels) for labels in outs) / len(outs)
        if model_kind == "VGRAM":
            F[j] = votes / n_neurons
        elif total > 0:
            F[j] = votes / total
    return F
