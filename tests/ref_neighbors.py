"""Slow, obviously-correct references for fastrank.neighbors (full similarity matrix,
explicit loops over melotti2009 Fig. 2.3), a tiny reader for Mulan's sparse ARFF files, and
random data whose cosines are exact in floating point (so tie order can be tested exactly)."""
import re

import numpy as np
import scipy.sparse as sp


def read_sparse_arff(arff_path, xml_path):
    """Mulan sparse ARFF ({index value, ...} rows): X (CSR float64) and Y (uint8), the labels
    being the last attributes, as many as the XML file names."""
    n_labels = len(re.findall(r"<label\s", open(xml_path, encoding="utf-8").read()))
    rows, cols, vals = [], [], []
    n_attr, n_rows, in_data = 0, 0, False
    with open(arff_path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if not in_data:
                low = line.lower()
                n_attr += low.startswith("@attribute")
                in_data = low.startswith("@data")
                continue
            for item in line.strip("{}").split(","):
                if item.strip():
                    c, v = item.split()
                    rows.append(n_rows)
                    cols.append(int(c))
                    vals.append(float(v))
            n_rows += 1
    M = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_attr))
    n_feat = n_attr - n_labels
    return M[:, :n_feat].tocsr(), M[:, n_feat:].toarray().astype(np.uint8)


def cosine_matrix(Q, B):
    """Full cosine matrix (eq. 2.3) in float64; zero rows have cosine 0; clipped to [-1, 1]."""
    Q = np.asarray(Q.toarray() if sp.issparse(Q) else Q, dtype=np.float64)
    B = np.asarray(B.toarray() if sp.issparse(B) else B, dtype=np.float64)
    nq = np.linalg.norm(Q, axis=1)
    nb = np.linalg.norm(B, axis=1)
    Qn = np.divide(Q, nq[:, None], out=np.zeros_like(Q), where=nq[:, None] > 0)
    Bn = np.divide(B, nb[:, None], out=np.zeros_like(B), where=nb[:, None] > 0)
    return np.clip(Qn @ Bn.T, -1, 1)


def ref_topk(Q, B, k, exclude_self=False):
    """Sort each full row by (similarity desc, index asc) and keep the first k."""
    S = cosine_matrix(Q, B)
    sims, idx = [], []
    for i, row in enumerate(S):
        cand = [j for j in range(len(row)) if not (exclude_self and j == i)]
        order = sorted(cand, key=lambda j: (-row[j], j))[:k]
        idx.append(order)
        sims.append(row[order])
    return np.array(sims), np.array(idx, dtype=np.int64)


def ref_knn(Xtr, Ytr, Xte, k, aggregate):
    """melotti2009 §2.4.2 (max), similarity summing / k, votes / k; negative cosines as 0."""
    k = Xtr.shape[0] if k is None else k
    sims, idx = ref_topk(Xte, Xtr, k)
    F = np.zeros((sims.shape[0], Ytr.shape[1]))
    for i in range(sims.shape[0]):
        for s, a in zip(sims[i], idx[i]):
            for c in np.flatnonzero(Ytr[a]):
                if aggregate == "max":
                    F[i, c] = max(F[i, c], max(s, 0.0))
                elif aggregate == "sum":
                    F[i, c] += max(s, 0.0) / k
                else:
                    F[i, c] += 1.0 / k
    return F


def ref_mlknn(Xtr, Ytr, Xte, k, s):
    """Fig. 2.3 step by step; returns (posterior beliefs, MAP predictions with a >= b)."""
    Ytr = np.asarray(Ytr, dtype=np.int64)  # counts, not uint8 (which wraps at 256)
    n, q = Ytr.shape
    prior1 = [(s + sum(Ytr[x, c] for x in range(n))) / (s * 2 + n) for c in range(q)]
    _, N_train = ref_topk(Xtr, Xtr, k, exclude_self=True)          # step 3
    like1 = np.zeros((q, k + 1))
    like0 = np.zeros((q, k + 1))
    for c in range(q):                                               # steps 4-13
        cnt = [0] * (k + 1)
        cnt_not = [0] * (k + 1)
        for x in range(n):
            delta = sum(Ytr[a, c] for a in N_train[x])
            if Ytr[x, c] == 1:
                cnt[delta] += 1
            else:
                cnt_not[delta] += 1
        for j in range(k + 1):
            like1[c, j] = (s + cnt[j]) / (s * (k + 1) + sum(cnt))
            like0[c, j] = (s + cnt_not[j]) / (s * (k + 1) + sum(cnt_not))
    _, N_test = ref_topk(Xte, Xtr, k)                                # step 14
    F = np.zeros((N_test.shape[0], q))
    P = np.zeros((N_test.shape[0], q), dtype=np.uint8)
    for i in range(N_test.shape[0]):
        for c in range(q):                                           # steps 15-18
            delta = sum(Ytr[a, c] for a in N_test[i])
            a = prior1[c] * like1[c, delta]
            b = (1 - prior1[c]) * like0[c, delta]
            F[i, c] = a / (a + b)
            P[i, c] = a >= b
    return F, P


def dyadic_docs(rng, n, n_features=48, zero_rows=True):
    """0/1 rows with 1, 4 or 16 ones (norms 1, 2, 4), some duplicated and some empty: every
    cosine is a dyadic rational computed exactly, so equal cosines are exact ties."""
    X = np.zeros((n, n_features))
    for i in range(n):
        m = rng.choice([1, 4, 16])
        X[i, rng.choice(n_features, m, replace=False)] = 1
    dup = rng.choice(n, n // 5, replace=False)
    X[dup] = X[rng.choice(n, len(dup))]
    if zero_rows:
        X[rng.choice(n, max(1, n // 20), replace=False)] = 0
    return X
