"""Text indexing (melotti2009 §2.3, §3.3; eq. 2.1-2.2) against a direct NumPy computation
and scikit-learn's CountVectorizer/TfidfVectorizer where the definitions coincide."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fastrank.text import STOP_WORDS, TfidfIndexer, analyze, tfidf_from_counts

CORPUS = ["Cultivo de arroz, banana em 1995.", "Cultivo de café e banana",
          "Comércio de ARROZ; comércio de café!", "banana banana banana", "Ação 2009 (ação)"]


def _reference_tfidf(train_docs, test_docs):
    """Eq. 2.1 and 2.2 with plain loops over already-analysed documents (lists of words)."""
    terms = sorted({w for d in train_docs for w in d})
    n = len(train_docs)
    df = {t: sum(t in d for d in train_docs) for t in terms}
    out = np.zeros((len(test_docs), len(terms)))
    for i, d in enumerate(test_docs):
        for k, t in enumerate(terms):
            out[i, k] = d.count(t) * math.log(n / df[t])
        norm = math.sqrt(sum(v * v for v in out[i]))
        if norm > 0:
            out[i] /= norm
    return terms, out


def test_lexical_analysis_thesis_example():
    # melotti2009 §3.3: "Cultivo de arroz,banana em 1995." -> cultivo, de, arroz, banana, em
    assert analyze("Cultivo de arroz,banana em 1995.") == ["cultivo", "de", "arroz", "banana", "em"]
    # removing only prepositions, as the thesis does
    words = analyze("Cultivo de arroz,banana em 1995.", "portuguese")
    assert words == ["cultivo", "arroz", "banana"]


def test_lexical_analysis_details():
    assert analyze("H2O and CO2_emissions") == ["ho", "and", "co", "emissions"]  # digits deleted
    assert analyze("AÇÃO Ação-çã über") == ["ação", "ação", "çã", "über"]  # accents are letters
    assert analyze("AÇÃO über", strip_accents=True) == ["acao", "uber"]
    assert analyze("the cat and the hat", "english") == ["cat", "hat"]
    assert analyze("à às pelo sobre casa", "portuguese") == ["casa"]
    assert analyze("Às casas", ["as"], strip_accents=True) == ["casas"]
    assert analyze("one two three", ["two"]) == ["one", "three"]
    assert analyze("One Two", frozenset({"TWO"})) == ["one"]  # user lists are normalised too
    lemma = {"casas": "casa", "foram": "ser", "x": ""}
    assert analyze("Casas foram x", lemmatizer=lambda w: lemma.get(w, w)) == ["casa", "ser"]
    with pytest.raises(ValueError, match="unknown stop_words='french'; valid: None, 'portuguese'"):
        analyze("x", "french")


def test_stop_word_lists():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    assert STOP_WORDS["english"] == ENGLISH_STOP_WORDS
    essential = "a ante após até com contra de desde em entre para perante por sem sob sobre trás"
    assert set(essential.split()) <= STOP_WORDS["portuguese"]
    assert {"do", "da", "no", "na", "ao", "pelo", "num"} <= STOP_WORDS["portuguese"]


def test_tfidf_matches_direct_computation_of_eq_2_1_2_2():
    train, test = CORPUS[:4], CORPUS[1:] + ["nothing known here", ""]
    idx = TfidfIndexer(stop_words="portuguese")
    X_train = idx.fit_transform(train)
    X_test = idx.transform(test)
    tr = [analyze(t, "portuguese") for t in train]
    te = [analyze(t, "portuguese") for t in test]
    terms, ref_train = _reference_tfidf(tr, tr)
    _, ref_test = _reference_tfidf(tr, te)
    assert list(idx.get_feature_names_out()) == terms
    assert idx.n_documents_ == 4
    assert isinstance(X_train, sp.csr_matrix) and X_train.dtype == np.float64
    assert X_train.has_canonical_format and not np.any(X_train.data == 0)
    np.testing.assert_allclose(X_train.toarray(), ref_train, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(X_test.toarray(), ref_test, rtol=1e-14, atol=1e-15)
    # fit + transform == fit_transform; unseen words and empty documents give zero rows
    np.testing.assert_array_equal(TfidfIndexer("portuguese").fit(train).transform(train).toarray(),
                                  X_train.toarray())
    assert X_test[-2].nnz == 0 and X_test[-1].nnz == 0


def test_term_in_every_document_weighs_zero():
    X = TfidfIndexer(stop_words=None).fit_transform(["a b", "a c", "a"])
    # ln(3/3) = 0: "a" disappears; document 3 has no weighted term and stays a zero row
    np.testing.assert_allclose(X.toarray(), [[0, 1, 0], [0, 0, 1], [0, 0, 0]])


def test_relation_to_sklearn():
    """Same counts and lexicon as CountVectorizer with our analyser; sklearn's idf with
    smooth_idf=False is ours + 1, and with the +1 removed the matrices coincide."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    docs = CORPUS * 3 + ["café com leite", "leite"]
    ours = TfidfIndexer(stop_words="english")
    X = ours.fit_transform(docs)
    an = ours.build_analyzer()
    assert an("The cat, 3 cats") == analyze("The cat, 3 cats", "english") == ["cat", "cats"]
    cv = CountVectorizer(analyzer=an)
    counts = cv.fit_transform(docs)
    assert list(cv.get_feature_names_out()) == list(ours.get_feature_names_out())
    skl = TfidfVectorizer(analyzer=an, smooth_idf=False, norm="l2", sublinear_tf=False)
    skl.fit(docs)
    np.testing.assert_allclose(skl.idf_ - 1.0, ours.idf_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(X.toarray(), tfidf_from_counts(counts)[0].toarray(), atol=1e-15)
    # sklearn with our idf gives our matrix
    skl.idf_ = ours.idf_
    np.testing.assert_allclose(skl.transform(docs).toarray(), X.toarray(), atol=1e-12)


def test_sklearn_protocol_and_errors():
    from sklearn.base import clone
    idx = TfidfIndexer(stop_words="portuguese", strip_accents=True)
    assert idx.get_params() == {"lemmatizer": None, "stop_words": "portuguese",
                                "strip_accents": True}
    c = clone(idx)
    assert c.get_params() == idx.get_params() and c is not idx
    assert idx.set_params(stop_words=None) is idx and idx.stop_words is None
    assert "TfidfIndexer(" in repr(idx)
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    pipe = make_pipeline(TfidfIndexer(stop_words=None), KNeighborsClassifier(1))
    pipe.fit(["arroz banana", "café leite", "arroz feijão"], [0, 1, 0])
    assert pipe.predict(["leite quente"]).tolist() == [1]
    with pytest.raises(ValueError, match="Invalid parameter 'norm'"):
        idx.set_params(norm="l1")
    with pytest.raises(ValueError, match="not fitted"):
        TfidfIndexer().transform(["x"])
    with pytest.raises(TypeError, match="single string"):
        TfidfIndexer().fit("a text")
    with pytest.raises(TypeError, match="document 1 is a int"):
        TfidfIndexer().fit(["a", 3])
    with pytest.raises(ValueError, match="no documents"):
        TfidfIndexer().fit([])
    with pytest.raises(ValueError, match="empty lexicon"):
        TfidfIndexer().fit(["the and", "1995"])
    with pytest.raises(ValueError, match=r"idf has shape \(2,\)"):
        tfidf_from_counts(sp.csr_matrix(np.ones((2, 3))), np.ones(2))


@pytest.mark.parametrize("power", [-1000, -700, -300, 300, 700, 1000])
def test_tfidf_rows_have_unit_norm_at_any_scale(power):
    """Counts scaled by a power of two give the same bits: a row whose squares overflow or
    underflow is scaled before it is normalised (none goes to 0 or infinity)."""
    rng = np.random.default_rng(power % 7)
    counts = rng.integers(0, 6, (40, 30)).astype(np.float64)
    counts[:, 0] = 1  # a term in every document: idf 0, left out
    want, idf = tfidf_from_counts(counts)
    got, got_idf = tfidf_from_counts(counts * 2.0**power)
    np.testing.assert_array_equal(got_idf, idf)
    np.testing.assert_array_equal(got.toarray(), want.toarray())
    norms = np.sqrt(np.asarray(want.multiply(want).sum(axis=1))).ravel()
    np.testing.assert_allclose(norms[norms > 0], 1.0, rtol=1e-15)


def test_tfidf_from_counts_rejects_bad_counts_and_idf():
    good = np.array([[1.0, 0, 2], [0, 3, 1]])
    for counts in (good, sp.csr_matrix(good), good.astype(int), good.tolist()):
        X, idf = tfidf_from_counts(counts)
        assert X.shape == (2, 3) and idf.shape == (3,)
    assert tfidf_from_counts(good, np.array([0.0, 1, 2]))[0].shape == (2, 3)
    with pytest.raises(ValueError, match=r"2-D matrix .*shape \(3,\)"):
        tfidf_from_counts(np.array([1.0, 0, 2]))
    with pytest.raises(ValueError, match="2-D matrix"):
        tfidf_from_counts(np.ones((2, 2, 2)))
    for bad in (np.array([[1.0, -1, 0], [0, 1, 1]]), sp.csr_matrix([[1.0, -1, 0], [0, 1, 1]])):
        with pytest.raises(ValueError, match="counts contain negative values"):
            tfidf_from_counts(bad)
    for v in (np.nan, np.inf):
        with pytest.raises(ValueError, match="counts contain NaN or infinity"):
            tfidf_from_counts(np.array([[1.0, v, 0], [0, 1, 1]]))
        with pytest.raises(ValueError, match="idf contains NaN or infinity"):
            tfidf_from_counts(good, np.array([1.0, v, 1]))
    with pytest.raises(ValueError, match="idf contains negative values"):
        tfidf_from_counts(good, np.array([1.0, -0.5, 1]))
    with pytest.raises(ValueError, match=r"idf has shape \(1, 3\), expected \(3,\)"):
        tfidf_from_counts(good, np.ones((1, 3)))
    with pytest.raises(TypeError, match="counts must be numbers"):
        tfidf_from_counts(np.array([["a", "b"]]))
    with pytest.raises(TypeError, match="idf must be numbers"):
        tfidf_from_counts(good, np.array(["1", "1", "1"]))


def test_lemmatizer_must_return_strings():
    with pytest.raises(TypeError, match="lemmatizer returned a int for 'casas'"):
        analyze("casas e barcos", lemmatizer=len)
    with pytest.raises(TypeError, match="lemmatizer returned a int"):
        TfidfIndexer(stop_words=None, lemmatizer=lambda w: 0 if w == "b" else 7).fit(["a b"])
    with pytest.raises(TypeError, match="lemmatizer returned a list"):
        analyze("casas", lemmatizer=lambda w: [w])
    # None and "" drop the word
    drop = {"e": None, "de": ""}
    assert analyze("casas e barcos de pesca", lemmatizer=lambda w: drop.get(w, w)) == \
        ["casas", "barcos", "pesca"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abc dé1,.", max_size=25), min_size=1, max_size=12),
       st.lists(st.text(alphabet="abcdx é9", max_size=25), max_size=6))
def test_property_unit_rows_and_reference(train, test):
    idx = TfidfIndexer(stop_words=None)
    tr = [analyze(t) for t in train]
    if not any(tr):
        with pytest.raises(ValueError, match="empty lexicon"):
            idx.fit(train)
        return
    X = idx.fit_transform(train)
    _, ref = _reference_tfidf(tr, tr)
    np.testing.assert_allclose(X.toarray(), ref, atol=1e-12)
    if test:
        Xt = idx.transform(test)
        _, ref_t = _reference_tfidf(tr, [analyze(t) for t in test])
        np.testing.assert_allclose(Xt.toarray(), ref_t, atol=1e-12)
        norms = np.sqrt(Xt.multiply(Xt).sum(axis=1)).A1
        assert np.all((np.abs(norms - 1) < 1e-12) | (norms == 0))
        assert np.all(Xt.data > 0)


@pytest.mark.shared_data
def test_reuters_subset_against_reference(shared_data):
    from fastrank.datasets import load_text
    ds = load_text(shared_data / "reuters" / "reuters21578-modapte-test.json")
    train, test = ds.texts[:80], ds.texts[80:110]
    idx = TfidfIndexer()
    X = idx.fit_transform(train)
    tr = [analyze(t, "english") for t in train]
    terms, ref = _reference_tfidf(tr, tr)
    assert list(idx.get_feature_names_out()) == terms
    np.testing.assert_allclose(X.toarray(), ref, atol=1e-13)
    _, ref_t = _reference_tfidf(tr, [analyze(t, "english") for t in test])
    np.testing.assert_allclose(idx.transform(test).toarray(), ref_t, atol=1e-13)


@pytest.mark.parametrize("text", [123, None, b"bytes", ["a list"]])
def test_analyze_refuses_non_strings(text):
    with pytest.raises(TypeError, match="text must be a str, got"):
        analyze(text)


# ---- the compiled scanner against the regular-expression path ---------------------------------

def _regex_path(train, test, stop_words="english", strip_accents=False):
    """The indexer as :func:`analyze` defines it, one Python word list per document: the
    lexicon, then the fit and transform matrices through :func:`tfidf_from_counts`."""
    def counts(texts, vocabulary):
        docs = [analyze(t, stop_words, strip_accents) for t in texts]
        rows = [i for i, d in enumerate(docs) for w in d if w in vocabulary]
        cols = [vocabulary[w] for d in docs for w in d if w in vocabulary]
        m = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(docs), len(vocabulary)))
        return m.tocsr()  # sums the duplicates, sorts the indices

    vocabulary = {t: j for j, t in enumerate(sorted({w for t in train
                                                     for w in analyze(t, stop_words,
                                                                      strip_accents)}))}
    X, idf = tfidf_from_counts(counts(train, vocabulary))
    return vocabulary, X, tfidf_from_counts(counts(test, vocabulary), idf)[0]


def _assert_identical(A, B):
    """The same CSR matrix bit for bit: structure, order and values."""
    assert A.shape == B.shape and A.has_canonical_format and B.has_canonical_format
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    assert A.data.tobytes() == B.data.tobytes()


# characters whose classification or lowercasing is unusual: precomposed and combining
# accents, dotted capital I (lowercases to two code points), sharp s, final sigma, decimal
# digits of other scripts (deleted), superscript two and vulgar half (digits / numerics, not
# decimal: word characters), a Roman numeral (Nl), a connector punctuation, Devanagari with a
# spacing vowel sign (Mc: a separator), CJK, Hangul, an astral emoji and letter, a lone
# surrogate, underscores and ASCII digits
TRICKY = ("aé\u0301ÉİßΣσς٣５²½Ⅻ‿_कि中한😀𝔸\ud800 1,.-'Ææ\u00a0\t\nZz9"
          "ǅǈ\u0130\u212aΩ\u2126")


@pytest.mark.parametrize("strip_accents", [False, True])
@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=TRICKY, max_size=30) | st.text(max_size=30), min_size=1,
                max_size=10),
       st.lists(st.text(alphabet=TRICKY, max_size=30) | st.text(max_size=30), max_size=5))
def test_property_compiled_scanner_equals_regex_path(strip_accents, train, test):
    stop = ["", "σ", "ǆ", "ab"]  # the empty word first: the compiled table's first key
    if not any(analyze(t, stop, strip_accents) for t in train):
        return  # empty lexicon (its error is tested elsewhere)
    idx = TfidfIndexer(stop_words=stop, strip_accents=strip_accents)
    X = idx.fit_transform(train)
    vocabulary, X_ref, Xt_ref = _regex_path(train, test, stop, strip_accents)
    assert idx.vocabulary_ == vocabulary and [*idx.vocabulary_] == [*vocabulary]
    _assert_identical(X, X_ref)
    _assert_identical(idx.transform(test), Xt_ref)


def test_compiled_scanner_unicode_details():
    words = lambda text: [*TfidfIndexer(stop_words=None).fit([text]).vocabulary_]  # noqa: E731
    assert words("b2b ٣x٣y CO2_emissions") == ["bb", "co", "emissions", "xy"]
    assert words("x² ½ Ⅻ") == ["x²", "½", "ⅻ"]  # digits/numerics that are not decimal: words
    assert words("İstanbul") == ["i", "stanbul"]  # "i" then U+0307, a combining mark: it
    assert analyze("İstanbul") == ["i", "stanbul"]  # is no word character for re either
    # NFKD can make upper-case ASCII out of a character without lower case: still a letter
    assert analyze("𝔸bc é", strip_accents=True) == ["Abc", "e"] == \
        [*TfidfIndexer(stop_words=None, strip_accents=True).fit(["𝔸bc é"]).vocabulary_]
    assert words("कि 中文 😀 𝔸b") == ["क", "中文", "𝔸b"]
    assert analyze("कि 中文 😀 𝔸b") == ["क", "中文", "𝔸b"]


@pytest.mark.shared_data
@pytest.mark.parametrize("stop_words,strip_accents", [("english", False), (None, True),
                                                      ("portuguese", False)])
def test_reuters_bit_for_bit_against_regex_path_and_sklearn(shared_data, stop_words,
                                                            strip_accents):
    from sklearn.feature_extraction.text import CountVectorizer
    from fastrank.datasets import load_text
    texts = load_text(shared_data / "reuters" / "reuters21578-modapte-test.json").texts
    cut = len(texts) * 9 // 10
    idx = TfidfIndexer(stop_words=stop_words, strip_accents=strip_accents)
    X = idx.fit_transform(texts[:cut])
    vocabulary, X_ref, Xt_ref = _regex_path(texts[:cut], texts[cut:], stop_words, strip_accents)
    assert idx.vocabulary_ == vocabulary and len(vocabulary) > 10000
    _assert_identical(X, X_ref)
    _assert_identical(idx.transform(texts[cut:]), Xt_ref)
    # scikit-learn's CountVectorizer with the same analyser: the same lexicon and counts
    cv = CountVectorizer(analyzer=idx.build_analyzer())
    counts = cv.fit_transform(texts[:cut])
    assert cv.vocabulary_ == vocabulary
    _assert_identical(X, tfidf_from_counts(counts)[0])


@pytest.mark.shared_data
def test_reuters_tokens_coincide_with_sklearn_token_pattern(shared_data):
    """Without digits, a word is what sklearn's ``token_pattern=r"[^\\W\\d_]+"`` matches:
    the same lexicon and counts from sklearn's own analyser, and, with sklearn's idf set to
    ours, the same tf-idf matrix."""
    import re

    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from fastrank.datasets import load_text
    texts = [re.sub(r"\d", "", t) for t in
             load_text(shared_data / "reuters" / "reuters21578-modapte-test.json").texts]
    idx = TfidfIndexer(stop_words="english")
    X = idx.fit_transform(texts)
    pattern = dict(token_pattern=r"(?u)[^\W\d_]+", stop_words=sorted(STOP_WORDS["english"]))
    cv = CountVectorizer(**pattern)
    counts = cv.fit_transform(texts)
    assert cv.vocabulary_ == idx.vocabulary_
    _assert_identical(X, tfidf_from_counts(counts)[0])
    skl = TfidfVectorizer(smooth_idf=False, **pattern).fit(texts)
    np.testing.assert_allclose(skl.idf_ - 1, idx.idf_, rtol=0, atol=1e-12)
    skl.idf_ = idx.idf_
    np.testing.assert_allclose(skl.transform(texts).toarray(), X.toarray(), rtol=0, atol=1e-15)


def test_transform_follows_the_current_stop_words_and_checks_the_vocabulary():
    train = ["alpha beta gamma", "beta delta", "gamma alpha"]
    idx = TfidfIndexer(stop_words=None).fit(train)
    idx.set_params(stop_words=["beta"])  # as the regex path: stop words are never counted
    ref = TfidfIndexer(stop_words=None).fit(train)
    X = idx.transform(["beta alpha", "delta beta"])
    X_ref = ref.transform(["alpha", "delta"])
    _assert_identical(X, X_ref)
    idx.vocabulary_ = {"alpha": 0, "beta": 7, "gamma": 2, "delta": 3}
    with pytest.raises(ValueError, match=r"maps 'beta' to column 7; the columns must be 0\.\.3"):
        idx.transform(["alpha"])


def test_long_words_many_terms_and_concurrent_calls():
    import threading
    rng = np.random.default_rng(5)
    letters = np.array([*"abcdefghijklmnopqrstuvwxyzéüß"])
    docs = [" ".join("".join(rng.choice(letters, rng.integers(1, 9))) for _ in range(300))
            for _ in range(60)]
    docs.append("x" * 100_000 + " y")  # a word longer than any buffer's first size
    vocabulary, X_ref, Xt_ref = _regex_path(docs[:50], docs[50:], None)
    assert len(vocabulary) > 5000  # the term table grows several times
    results = [None] * 4

    def run(k):
        idx = TfidfIndexer(stop_words=None)
        results[k] = idx.fit_transform(docs[:50]), idx.transform(docs[50:]), idx.vocabulary_

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for X, Xt, voc in results:
        assert voc == vocabulary
        _assert_identical(X, X_ref)
        _assert_identical(Xt, Xt_ref)


@pytest.mark.parametrize("lemmatizer", [None, str.upper])
def test_indexer_weights_its_own_counts_without_checking_them_again(monkeypatch, lemmatizer):
    """fit_transform and transform weight the counts they just built (canonical CSR float64)
    directly: neither :func:`check_csr` nor the public :func:`tfidf_from_counts` (its
    checks and its copy) runs, and the matrices are bit for bit those of the public
    function on the same counts, with either way of counting."""
    import fastrank.text as text_module
    train, test = CORPUS[:3], CORPUS[2:]
    indexer = TfidfIndexer(stop_words="portuguese", lemmatizer=lemmatizer)
    counts_train, vocabulary = indexer._term_counts(train)
    counts_test, _ = indexer._term_counts(test, vocabulary)
    X_ref, idf = tfidf_from_counts(counts_train)
    Xt_ref = tfidf_from_counts(counts_test, idf)[0]

    def refuse(*args, **kwargs):
        raise AssertionError("the indexer checked its own counts again")

    monkeypatch.setattr(text_module, "check_csr", refuse)
    monkeypatch.setattr(text_module, "tfidf_from_counts", refuse)
    X = indexer.fit_transform(train)
    _assert_identical(X, X_ref)
    _assert_identical(indexer.transform(test), Xt_ref)
    assert indexer.idf_.tobytes() == idf.tobytes()
