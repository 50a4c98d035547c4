"""The tie-policy conformance page (docs/guide/xmlc.rst), row by row: each tool runs on the
same tied input and is compared with the ``ties=`` value that reproduces it, or with the
optimistic/pessimistic bounds where its order among ties is unspecified."""
import numpy as np
import scipy.sparse as sp

from fastrank.metrics import evaluate_at_k

KS = (1, 3, 5)


def tied(seed, n=40, q=30, levels=4):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, (n, q)) / levels
    truth = (rng.random((n, q)) < 0.15).astype(np.uint8)
    truth[np.arange(n), rng.integers(0, q, n)] = 1     # trec_eval skips queries without one
    return truth, scores


def test_pytrec_eval_is_ties_trec():
    """trec_eval: score (as a C float) descending, then docno descending by strcmp."""
    import pytrec_eval
    truth, scores = tied(0)
    scores[:, 1] += 1e-12   # ties with float32 scores, not with float64 ones
    qrels = {str(i): {str(j): 1 for j in np.flatnonzero(t)} for i, t in enumerate(truth)}
    run = {str(i): {str(j): float(s[j]) for j in range(s.size)} for i, s in enumerate(scores)}
    names = {f"{m}_{k}" for m in ("P", "recall", "ndcg_cut") for k in KS}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    got = evaluate_at_k(truth, scores, k=KS, ties="trec")["trec"]
    for m, ours in (("P", "precision"), ("recall", "recall"), ("ndcg_cut", "ndcg")):
        for k in KS:
            want = np.mean([per_query[str(i)][f"{m}_{k}"] for i in range(len(truth))])
            assert abs(got[f"{ours}@{k}"] - want) < 1e-12, (m, k)


def test_ir_measures_is_ties_trec():
    import ir_measures
    from ir_measures import P, R, nDCG
    truth, scores = tied(1)
    qrels = [ir_measures.Qrel(str(i), str(j), 1) for i, t in enumerate(truth)
             for j in np.flatnonzero(t)]
    run = [ir_measures.ScoredDoc(str(i), str(j), float(s[j])) for i, s in enumerate(scores)
           for j in range(s.size)]
    want = ir_measures.calc_aggregate([P @ k for k in KS] + [R @ k for k in KS]
                                      + [nDCG @ k for k in KS], qrels, run)
    got = evaluate_at_k(truth, scores, k=KS, ties="trec")["trec"]
    for k in KS:
        assert abs(got[f"precision@{k}"] - want[P @ k]) < 1e-12
        assert abs(got[f"recall@{k}"] - want[R @ k]) < 1e-12
        assert abs(got[f"ndcg@{k}"] - want[nDCG @ k]) < 1e-12


def test_sklearn_ndcg_score_is_ties_expected():
    from sklearn.metrics import ndcg_score
    truth, scores = tied(2)
    got = evaluate_at_k(truth, scores, k=KS, ties="expected")["expected"]
    for k in KS:
        assert abs(got[f"ndcg@{k}"] - ndcg_score(truth, scores, k=k)) < 1e-12


def bounds(truth, scores, metrics):
    r = evaluate_at_k(truth, scores, k=KS, ties=("optimistic", "pessimistic"))
    return {m: (r["pessimistic"][m], r["optimistic"][m]) for m in metrics}


def test_napkinxc_lies_between_the_bounds():
    """napkinXC ranks by NumPy's argsort (not stable): no ties= value reproduces its order,
    which lies between the pessimistic and optimistic orders."""
    from napkinxc import metrics as nxc
    truth, scores = tied(3)
    y = sp.csr_matrix(truth)
    values = {"precision": nxc.precision_at_k(y, scores, k=5),
              "ndcg": nxc.ndcg_at_k(y, scores, k=5)}
    b = bounds(truth, scores, [f"{m}@{k}" for m in values for k in KS])
    for m, v in values.items():
        for k in KS:
            lo, hi = b[f"{m}@{k}"]
            assert lo - 1e-12 <= v[k - 1] <= hi + 1e-12, (m, k)


def test_ranx_lies_between_the_bounds():
    """ranx sorts each run with an unstable sort: between the bounds, no ties= value."""
    from ranx import Qrels, Run, evaluate
    truth, scores = tied(4)
    qrels = Qrels({str(i): {str(j): 1 for j in np.flatnonzero(t)} for i, t in enumerate(truth)})
    run = Run({str(i): {str(j): float(s[j]) for j in range(s.size)} for i, s in enumerate(scores)})
    keys = [f"{m}@{k}" for m in ("precision", "ndcg") for k in KS]
    want = evaluate(qrels, run, keys)
    b = bounds(truth, scores, keys)
    for key in keys:
        assert b[key][0] - 1e-12 <= want[key] <= b[key][1] + 1e-12, key


def _torchmetrics_retrieval(truth, scores):
    """torchmetrics' retrieval precision, recall and nDCG at each k, each document a query."""
    import torch
    from torchmetrics.retrieval import RetrievalNormalizedDCG, RetrievalPrecision, \
        RetrievalRecall
    preds = torch.from_numpy(scores).ravel()
    target = torch.from_numpy(truth).ravel().bool()
    indexes = torch.arange(truth.shape[0]).repeat_interleave(truth.shape[1])
    out = {}
    for name, cls in (("precision", RetrievalPrecision), ("recall", RetrievalRecall),
                      ("ndcg", RetrievalNormalizedDCG)):
        for k in KS:
            out[f"{name}@{k}"] = float(cls(top_k=k)(preds, target, indexes=indexes))
    return out


def test_torchmetrics_retrieval_on_untied_scores_equals_every_mode():
    truth, scores = tied(5)
    scores = scores + np.random.default_rng(5).permutation(scores.size).reshape(scores.shape) \
        * 1e-6                                           # distinct scores, same data
    want = _torchmetrics_retrieval(truth, scores)
    r = evaluate_at_k(truth, scores, k=KS, ties=("expected", "optimistic", "pessimistic",
                                                 "stable"))
    for t in r.ties:
        for key, v in want.items():
            assert abs(r[t][key] - v) < 1e-6, (t, key)  # torchmetrics averages in float32


def test_torchmetrics_retrieval_on_tied_scores():
    """nDCG averages the gains over ties (``"expected"``); precision and recall take
    ``torch.topk``'s order, unspecified: between the bounds."""
    truth, scores = tied(6)
    want = _torchmetrics_retrieval(truth, scores)
    expected = evaluate_at_k(truth, scores, k=KS, ties="expected")["expected"]
    b = bounds(truth, scores, [f"{m}@{k}" for m in ("precision", "recall") for k in KS])
    for k in KS:
        assert abs(want[f"ndcg@{k}"] - expected[f"ndcg@{k}"]) < 1e-6, k  # float32 mean
        for m in ("precision", "recall"):
            lo, hi = b[f"{m}@{k}"]
            assert lo - 1e-6 <= want[f"{m}@{k}"] <= hi + 1e-6, (m, k)
