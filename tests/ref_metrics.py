"""Slow, obviously-correct NumPy reference of every metric (Melotti 2009, ch. 2 and 4), for
the tests.

Written from the definitions on *rank numbers*, independently of the kernel's tie-group walk:
ranks come from scipy.stats.rankdata (dense/min/max) or, for ordinal, from a given rank
matrix (``fastrank.rank(..., "ordinal", random_state)``, whose shuffle the kernel reproduces).
"""
import numpy as np
from scipy.stats import rankdata

_SCIPY = {"dense": "dense", "standard": "min", "modified": "max"}


def ranks(y_score, ties, ordinal_ranks=None):
    if ties == "ordinal":
        return np.asarray(ordinal_ranks)
    return rankdata(-np.asarray(y_score, dtype=np.float64), method=_SCIPY[ties], axis=1)


def _docs(y_true, y_score, r):
    for yt, s, rr in zip(np.asarray(y_true, bool), np.asarray(y_score, np.float64), r):
        yield yt, s, rr


def one_error(y_true, y_score, r):
    vals = []
    for yt, _s, rr in _docs(y_true, y_score, r):
        top = rr == rr.min()
        vals.append(0.0 if yt[top].all() else 1.0)
    return np.array(vals)


def coverage(y_true, y_score, r):
    return np.array([rr[yt].max() - 1.0 if yt.any() else 0.0
                     for yt, s, rr in _docs(y_true, y_score, r)])


def ranking_loss(y_true, y_score, r):
    vals = []
    for yt, _s, rr in _docs(y_true, y_score, r):
        rel, irr = np.flatnonzero(yt), np.flatnonzero(~yt)
        if rel.size == 0 or irr.size == 0:
            vals.append(0.0)
            continue
        bad = sum(1 for a in rel for b in irr if rr[a] >= rr[b])
        vals.append(bad / (rel.size * irr.size))
    return np.array(vals)


def ranking_loss_f(y_true, y_score):
    """Eq. 4.6 on the beliefs themselves: pairs with f(a) <= f(b)."""
    vals = []
    for yt, s in zip(np.asarray(y_true, bool), np.asarray(y_score, np.float64)):
        rel, irr = np.flatnonzero(yt), np.flatnonzero(~yt)
        if rel.size == 0 or irr.size == 0:
            vals.append(0.0)
            continue
        vals.append(sum(1 for a in rel for b in irr if s[a] <= s[b]) / (rel.size * irr.size))
    return np.array(vals)


def ap_position(y_true, y_score, r):
    vals = []
    for yt, s, rr in _docs(y_true, y_score, r):
        if not yt.any():
            vals.append(1.0)
            continue
        precs = []
        for p in np.unique(rr[yt]):
            at_p = (rr == p) & yt
            upto = rr <= p
            if (s[at_p] == 0).any():
                precs.append(0.0)
            else:
                precs.append((upto & yt).sum() / upto.sum())
        vals.append(np.mean(precs))
    return np.array(vals)


def ap_label(y_true, y_score, r):
    vals = []
    for yt, _s, rr in _docs(y_true, y_score, r):
        if not yt.any():
            vals.append(1.0)
            continue
        vals.append(np.mean([((rr <= rr[c]) & yt).sum() / (rr <= rr[c]).sum()
                             for c in np.flatnonzero(yt)]))
    return np.array(vals)


def perfect_set(y_true, y_score, r, top_k=None):
    """Predicted sets of the perfect cutoff: whole rank positions until >= |C_j| labels,
    then belief-0 labels dropped; with top_k: whole positions until >= top_k labels."""
    out = np.zeros(np.shape(y_true), dtype=np.uint8)
    for j, (yt, s, rr) in enumerate(_docs(y_true, y_score, r)):
        want = yt.sum() if top_k is None else top_k
        taken = np.zeros(yt.size, bool)
        for p in np.unique(rr):
            if taken.sum() >= want:
                break
            taken |= rr == p
        out[j] = taken & (s != 0) if top_k is None else taken
    return out


def r_precision(y_true, y_score, r):
    pred = perfect_set(y_true, y_score, r).astype(bool)
    yt = np.asarray(y_true, bool)
    vals = []
    for p, t in zip(pred, yt):
        vals.append((p & t).sum() / p.sum() if p.any() else 0.0)
    return np.array(vals)


RANKING = {"one_error": one_error, "coverage": coverage, "ranking_loss": ranking_loss,
           "average_precision": ap_position, "r_precision": r_precision}


# ---- set-based ---------------------------------------------------------------------------

def _div(a, b, zd):
    return a / b if b > 0 else zd


def set_metrics(y_true, y_pred, zd=0.0, beta=1.0):
    """Every set metric by explicit loops over documents and labels."""
    t = np.asarray(y_true, bool)
    p = np.asarray(y_pred, bool)
    n, q = t.shape
    b2 = beta * beta
    out = {}
    out["hamming_loss"] = np.mean([(t[j] != p[j]).sum() / q for j in range(n)])
    out["exact_match"] = np.mean([float((t[j] == p[j]).all()) for j in range(n)])
    out["accuracy"] = np.mean([_div((t[j] & p[j]).sum(), (t[j] | p[j]).sum(), zd)
                               for j in range(n)])

    def unit_scores(tt, pp):
        tp = (tt & pp).sum()
        fp = (~tt & pp).sum()
        fn = (tt & ~pp).sum()
        return tp, fp, fn

    for orient, units in (("c", [(t[:, i], p[:, i]) for i in range(q)]),
                          ("d", [(t[j], p[j]) for j in range(n)])):
        stats = [unit_scores(a, b) for a, b in units]
        P = [_div(tp, tp + fp, zd) for tp, fp, fn in stats]
        R = [_div(tp, tp + fn, zd) for tp, fp, fn in stats]
        F = [_div((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zd) for tp, fp, fn in stats]
        TP = sum(s[0] for s in stats)
        FP = sum(s[1] for s in stats)
        FN = sum(s[2] for s in stats)
        out[f"precision_macro_{orient}"] = np.mean(P)
        out[f"recall_macro_{orient}"] = np.mean(R)
        out[f"f1_macro_{orient}"] = np.mean(F)
        mp, mr = np.mean(P), np.mean(R)
        out[f"f1_macro_pr_{orient}"] = _div((1 + b2) * mp * mr, b2 * mp + mr, zd)
        out[f"precision_micro_{orient}"] = _div(TP, TP + FP, zd)
        out[f"recall_micro_{orient}"] = _div(TP, TP + FN, zd)
        out[f"f1_micro_{orient}"] = _div((1 + b2) * TP, (1 + b2) * TP + b2 * FN + FP, zd)
    return out
