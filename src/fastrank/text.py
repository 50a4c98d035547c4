"""Text indexing as in melotti2009 §2.3 and §3.3: lexical analysis, stop-word removal, an
optional lemmatiser, then tf-idf (eq. 2.1) with cosine normalisation (eq. 2.2)::

    tfidf(t_k, d_j) = #(t_k, d_j) * ln(|TV| / #TV(t_k))                      (2.1)
    w_kj = tfidf(t_k, d_j) / sqrt(sum_s tfidf(t_s, d_j)**2)                  (2.2)

``#(t_k, d_j)`` is the raw count of term t_k in document d_j, ``|TV|`` the number of
training documents and ``#TV(t_k)`` the number of training documents containing t_k; the
lexicon (the columns) is every term of the training documents, in sorted order.

How this differs from scikit-learn's ``TfidfVectorizer`` (defaults: ``smooth_idf=True``,
``sublinear_tf=False``, ``norm="l2"``):

* idf: sklearn uses ``ln((1 + n) / (1 + df)) + 1`` (or ``ln(n / df) + 1`` with
  ``smooth_idf=False``); here it is exactly ``ln(n / df)``, natural log, no smoothing and
  no "+ 1" -- so a term present in every training document weighs 0 (sklearn keeps it).
* tf: raw counts in both (no sublinear ``1 + ln(tf)``); cosine (l2) normalisation in both.
* A document whose every term is unseen or has idf 0 is an all-zero row here too (no NaN).
* Tokens: sklearn's default pattern ``(?u)\\b\\w\\w+\\b`` keeps digits and drops one-letter
  words; here digits are deleted first and every run of letters (any length, accented letters
  included) is a word, as in the thesis ("Cultivo de arroz,banana em 1995." -> cultivo, de,
  arroz, banana, em).
* Stop words: sklearn's ``"english"`` list is the same list as :data:`STOP_WORDS`
  ``["english"]``; the Portuguese list (prepositions, as in the thesis) is only here.

Without a lemmatiser, :class:`TfidfIndexer` splits and counts the words of all documents in
one compiled pass (``fastrank._ext.term_counts``, without the GIL and without a Python object per
word) that applies the rules of :func:`analyze` character by character, with the
interpreter's own Unicode tables; with a lemmatiser (a Python callable) the words go through
:func:`analyze` one document at a time. Both give the same lexicon and the same matrix, bit
for bit.
"""
import functools
import re
from collections.abc import Callable, Iterable
from itertools import chain, repeat
import unicodedata
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ._base import NotFittedError
from ._ext import cosine_topk as _search_kernel
from ._ext.term_counts import count_terms
from ._typing import MatrixLike
from ._validation import check_csr

__all__ = ["STOP_WORDS", "analyze", "tfidf_from_counts", "TfidfIndexer"]

# Portuguese prepositions (melotti2009 §3.3 removes only prepositions): the essential
# prepositions and their contractions with the definite and indefinite articles.
_PORTUGUESE = """
a ante após até com contra de desde em entre para per perante por sem sob sobre trás
ao aos à às do da dos das no na nos nas pelo pela pelos pelas num numa nuns numas dum duma
duns dumas
"""

# The Glasgow Information Retrieval Group list, as shipped by scikit-learn
# (sklearn.feature_extraction.text.ENGLISH_STOP_WORDS, BSD-3-Clause).
_ENGLISH = """
a about above across after afterwards again against all almost alone along already also
although always am among amongst amoungst amount an and another any anyhow anyone anything
anyway anywhere are around as at back be became because become becomes becoming been before
beforehand behind being below beside besides between beyond bill both bottom but by call can
cannot cant co con could couldnt cry de describe detail do done down due during each eg
eight either eleven else elsewhere empty enough etc even ever every everyone everything
everywhere except few fifteen fifty fill find fire first five for former formerly forty
found four from front full further get give go had has hasnt have he hence her here
hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in
inc indeed interest into is it its itself keep last latter latterly least less ltd made many
may me meanwhile might mill mine more moreover most mostly move much must my myself name
namely neither never nevertheless next nine no nobody none noone nor not nothing now nowhere
of off often on once one only onto or other others otherwise our ours ourselves out over own
part per perhaps please put rather re same see seem seemed seeming seems serious several she
should show side since sincere six sixty so some somehow someone something sometime
sometimes somewhere still such system take ten than that the their them themselves then
thence there thereafter thereby therefore therein thereupon these they thick thin third this
those though three through throughout thru thus to together too top toward towards twelve
twenty two un under until up upon us very via was we well were what whatever when whence
whenever where whereafter whereas whereby wherein whereupon wherever whether which while
whither who whoever whole whom whose why will with within without would yet you your yours
yourself yourselves
"""

#: Stop-word lists by name: "portuguese" (the prepositions the thesis removes) and
#: "english" (scikit-learn's list).
STOP_WORDS = {"portuguese": frozenset(_PORTUGUESE.split()),
              "english": frozenset(_ENGLISH.split())}

_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]+")
_ASCII_DIGITS = str.maketrans("", "", "0123456789")
_ASCII_WORD = re.compile(r"[A-Za-z]+")  # upper case: NFKD of "𝔸" is "A"
_COMBINING = re.compile("[\u0300-\u036f]+")


def _strip_accents(text):
    return _COMBINING.sub("", unicodedata.normalize("NFKD", text))


def _normalise(text, strip_accents):
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    text = text.lower()
    return _strip_accents(text) if strip_accents else text


def _stop_set(stop_words, strip_accents):
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words not in STOP_WORDS:
            raise ValueError(f"unknown stop_words={stop_words!r}; valid: None, "
                             f"{', '.join(map(repr, STOP_WORDS))} or an iterable of words")
        stop_words = STOP_WORDS[stop_words]
    words = [*stop_words]
    if not all(isinstance(w, str) for w in words):
        raise TypeError("stop_words must be None, a list name or an iterable of strings")
    return frozenset(_normalise(w, strip_accents) for w in words)


StopWords = str | Iterable[str] | None
Lemmatizer = Callable[[str], str | None] | None


def analyze(text: str, stop_words: StopWords = None, strip_accents: bool = False,
            lemmatizer: Lemmatizer = None) -> list[str]:
    """Lexical analysis of one document: its list of terms.

    Melotti (2009) §3.3: lowercase, delete digits, split on everything that is not a letter
    (blanks, punctuation, underscores), drop stop words, then apply ``lemmatizer``. Letters
    are Unicode letters, so accented words stay whole ("ação").

    Parameters
    ----------
    text : str
        The document.
    stop_words : None, "english", "portuguese" or iterable of str, default None
        Words to drop (see :data:`STOP_WORDS`).
    strip_accents : bool, default False
        Also remove combining accents (NFKD), from the text and the stop words.
    lemmatizer : callable, optional
        Word -> word; it must return a str, and an empty string or None drops the word.

    Returns
    -------
    list of str

    Raises
    ------
    TypeError
        ``text`` is not a str, ``stop_words`` not strings, a lemma neither str nor None.
    ValueError
        An unknown stop-word list name.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §3.3.

    Examples
    --------
    >>> from fastrank.text import analyze
    >>> analyze("Cultivo de arroz,banana em 1995.")          # the thesis' example
    ['cultivo', 'de', 'arroz', 'banana', 'em']
    >>> analyze("Cultivo de arroz,banana em 1995.", stop_words="portuguese")
    ['cultivo', 'arroz', 'banana']
    >>> analyze("Produção de AÇÚCAR", strip_accents=True)
    ['producao', 'de', 'acucar']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _analyze(text, _stop_set(stop_words, strip_accents), strip_accents, lemmatizer)


def _analyze(text, stop, strip_accents, lemmatizer):
    text = _normalise(text, strip_accents).translate(_ASCII_DIGITS)
    if text.isascii():  # same result as the Unicode patterns, several times faster
        words = _ASCII_WORD.findall(text)
    else:
        words = _WORD.findall(_DIGITS.sub("", text))
    if stop:
        words = [w for w in words if w not in stop]
    if lemmatizer is not None:
        lemmas = [*map(lemmatizer, words)]
        for w, lemma in zip(words, lemmas):
            if lemma is not None and not isinstance(lemma, str):
                raise TypeError(f"lemmatizer returned a {type(lemma).__name__} for {w!r}; "
                                f"expected a str (or None or '' to drop the word)")
        words = [w for w in lemmas if w]
    return words


def tfidf_from_counts(counts: MatrixLike, idf: npt.ArrayLike | None = None
                      ) -> tuple[Any, np.ndarray]:
    """Tf-idf weights (eq. 2.1) with cosine normalisation (eq. 2.2) of a term-count matrix.

    Parameters
    ----------
    counts : array-like or sparse matrix, shape (n_documents, n_terms)
        Finite, non-negative term counts.
    idf : array-like of shape (n_terms,), optional
        The per-term ``ln(|TV| / #TV(t_k))`` learned on training documents (finite,
        non-negative); None computes it from ``counts`` itself (0 for a term in no
        document).

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n_documents, n_terms)
        Canonical CSR; non-zero rows have unit Euclidean norm, rows with no weighted term
        stay all-zero.
    idf : ndarray of float64, shape (n_terms,)
        The idf used.

    Raises
    ------
    ValueError
        ``counts`` not 2-D, negative or non-finite; ``idf`` of the wrong shape, negative or
        non-finite.
    TypeError
        ``counts`` or ``idf`` not numbers.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009,
       §2.3, eq. 2.1-2.2.

    Examples
    --------
    >>> from fastrank.text import tfidf_from_counts
    >>> X, idf = tfidf_from_counts([[2, 1, 0], [0, 1, 1]])
    >>> idf.round(4)                    # the middle term is in every document: weight 0
    array([0.6931, 0.    , 0.6931])
    >>> X.toarray()
    array([[1., 0., 0.],
           [0., 0., 1.]])
    """
    if not sp.issparse(counts):
        counts = np.asarray(counts)
    if counts.ndim != 2:
        raise ValueError(f"counts must be a 2-D matrix (documents x terms), got shape "
                         f"{counts.shape}")
    if counts.dtype.kind not in "biuf":
        raise TypeError(f"counts must be numbers, got dtype {counts.dtype}")
    # a copy: the weighting below works in place
    X = check_csr(counts, "counts").astype(np.float64, copy=True) if sp.issparse(counts) \
        else sp.csr_matrix(counts, dtype=np.float64)
    if not np.isfinite(X.data).all():
        raise ValueError("counts contain NaN or infinity")
    if (X.data < 0).any():
        raise ValueError("counts contain negative values")
    n_terms = X.shape[1]
    if idf is None:
        idf = _idf(X)
    else:
        idf = np.asarray(idf)
        if idf.dtype.kind not in "biuf":
            raise TypeError(f"idf must be numbers, got dtype {idf.dtype}")
        idf = idf.astype(np.float64)
        if idf.shape != (n_terms,):
            raise ValueError(f"idf has shape {idf.shape}, expected ({n_terms},)")
        if not np.isfinite(idf).all():
            raise ValueError("idf contains NaN or infinity")
        if (idf < 0).any():
            raise ValueError("idf contains negative values")
    return _weight(X, idf), idf


def _idf(X) -> np.ndarray:
    """``ln(|TV| / #TV(t_k))`` of every column of the CSR count matrix ``X`` (its rows the
    training documents), 0 for a term in no document."""
    n, n_terms = X.shape
    df = np.bincount(X.indices[X.data != 0], minlength=n_terms)
    idf = np.zeros(n_terms)
    np.log(np.divide(n, df, out=np.ones(n_terms), where=df > 0), out=idf)
    return idf


def _weight(X, idf):
    """Eq. 2.1-2.2 in place, unchecked: ``X`` a CSR float64 matrix of finite, non-negative
    counts that the caller owns, ``idf`` float64 of shape (n_terms,), finite, non-negative
    (as :func:`tfidf_from_counts` checks them, or as :class:`TfidfIndexer` builds them).
    Returns ``X``."""
    X.data *= idf[X.indices]
    X.eliminate_zeros()
    # each row first times the power of two that brings its largest weight into [1/2, 1)
    # (the search's scaling): exact, so the same bits, and no square overflows or underflows
    scaled = np.empty_like(X.data)
    _search_kernel.scale_csr(X.data, X.indptr, scaled)
    X.data = scaled
    n = X.shape[0]
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    norm = np.sqrt(np.bincount(rows, weights=X.data * X.data, minlength=n))
    X.data /= norm[rows]
    return X


def _check_texts(texts) -> list[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError("expected a list of documents (strings), got a single string")
    texts = [*texts]
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"document {bad} is a {type(texts[bad]).__name__}, expected str")
    return texts


class TfidfIndexer(BaseEstimator):
    """Index raw documents as tf-idf vectors (eq. 2.1) with cosine normalisation (eq. 2.2);
    the lexicon and the idf come from the documents given to :meth:`fit` only, and terms
    unseen there are ignored by :meth:`transform`. scikit-learn transformer protocol
    (``get_params``/``set_params``, ``fit``/``transform``/``fit_transform``,
    ``get_feature_names_out``); output CSR float64. See the module docstring for the exact
    differences from ``sklearn.feature_extraction.text.TfidfVectorizer``.

    Parameters
    ----------
    stop_words : None, "english", "portuguese" or iterable of str, default "english"
        As for :func:`analyze`; "english" is the language of the Reuters test data (the
        thesis removes only Portuguese prepositions, ``stop_words="portuguese"``).
    strip_accents : bool, default False
        As for :func:`analyze`.
    lemmatizer : callable, optional
        As for :func:`analyze`.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Term -> column.
    idf_ : ndarray of float64, shape (n_terms,)
        ``ln(|TV| / #TV(t_k))`` of every term.
    n_documents_ : int
        ``|TV|``, the number of training documents.

    References
    ----------
    .. [1] B. Z. Melotti, *Efeito do ranking sobre métricas de categorização multi-rótulo
       de texto*, master's thesis, Universidade Federal do Espírito Santo, 2009, §2.3, §3.3.

    Examples
    --------
    >>> from fastrank.text import TfidfIndexer
    >>> indexer = TfidfIndexer(stop_words="portuguese")
    >>> X = indexer.fit_transform(["cultivo de arroz", "cultivo de banana", "banana e arroz"])
    >>> indexer.get_feature_names_out()
    array(['arroz', 'banana', 'cultivo', 'e'], dtype=object)
    >>> X.toarray().round(4)
    array([[0.7071, 0.    , 0.7071, 0.    ],
           [0.    , 0.7071, 0.7071, 0.    ],
           [0.3272, 0.3272, 0.    , 0.8865]])
    >>> indexer.transform(["arroz doce"]).toarray()      # "doce" is unseen: ignored
    array([[1., 0., 0., 0.]])
    """

    def __init__(self, stop_words: StopWords = "english", strip_accents: bool = False,
                 lemmatizer: Lemmatizer = None) -> None:
        self.stop_words = stop_words
        self.strip_accents = strip_accents
        self.lemmatizer = lemmatizer

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags(),
                    input_tags=InputTags(two_d_array=False, string=True))

    def build_analyzer(self) -> Callable[[str], list[str]]:
        """The callable text -> list of terms used by this indexer (see :func:`analyze`).

        Raises
        ------
        ValueError
            An unknown stop-word list name.
        TypeError
            ``stop_words`` not strings.
        """
        return functools.partial(_analyze, stop=_stop_set(self.stop_words, self.strip_accents),
                                 strip_accents=self.strip_accents, lemmatizer=self.lemmatizer)

    def _term_counts(self, texts, vocabulary=None):
        """The term counts of ``texts`` (a new canonical CSR float64 matrix: sorted, distinct
        indices; what :func:`_weight` takes without checks) and the lexicon: the
        given ``vocabulary`` (term -> column; other terms are ignored), or, when None, the
        sorted terms of ``texts``. Without a lemmatiser the words are split and counted by
        the compiled scanner (``fastrank._ext.term_counts``); a lemmatiser, a Python callable, is
        applied word by word through :meth:`build_analyzer`."""
        if self.lemmatizer is not None:
            return self._term_counts_analyzed(texts, vocabulary)
        stop = _stop_set(self.stop_words, self.strip_accents)
        docs = [_normalise(t, self.strip_accents) for t in texts]
        terms, indptr, indices, data = count_terms(docs, stop, vocabulary)
        if vocabulary is None:
            vocabulary = dict(zip(terms, range(len(terms))))
        counts = sp.csr_matrix((data, indices, indptr), shape=(len(docs), len(vocabulary)))
        return counts, vocabulary

    def _term_counts_analyzed(self, texts, vocabulary):
        docs = [*map(self.build_analyzer(), texts)]
        words = [*chain.from_iterable(docs)]
        if vocabulary is None:
            vocabulary = {t: j for j, t in enumerate(sorted(set(words)))}
        ids = np.fromiter(map(vocabulary.get, words, repeat(-1)), dtype=np.int64,
                          count=len(words))
        rows = np.repeat(np.arange(len(docs)), np.fromiter(map(len, docs), dtype=np.int64,
                                                           count=len(docs)))
        keep = ids >= 0
        counts = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], ids[keep])),
                               shape=(len(docs), len(vocabulary)))
        counts.sum_duplicates()
        return counts, vocabulary

    def fit_transform(self, texts: Iterable[str], y: Any = None) -> Any:
        """Learn the lexicon and idf from ``texts`` and return their tf-idf matrix.

        Parameters
        ----------
        texts : iterable of str
            The training documents.
        y : None
            Ignored (scikit-learn's transformer protocol).

        Returns
        -------
        scipy.sparse.csr_matrix of float64, shape (n_documents, n_terms)

        Raises
        ------
        ValueError
            No documents, or no word left after lexical analysis.
        TypeError
            A single string, or a document that is not a str.
        """
        texts = _check_texts(texts)
        if not texts:
            raise ValueError("no documents to fit")
        counts, vocabulary = self._term_counts(texts)
        if not vocabulary:
            raise ValueError("empty lexicon: no words left after lexical analysis and "
                             "stop-word removal")
        self.idf_ = _idf(counts)
        X = _weight(counts, self.idf_)
        self.vocabulary_ = vocabulary
        self.n_documents_ = len(texts)
        return X

    def fit(self, texts: Iterable[str], y: Any = None) -> "TfidfIndexer":
        """Learn the lexicon and idf from the training documents ``texts``.

        As :meth:`fit_transform`, returning the fitted indexer.
        """
        self.fit_transform(texts)
        return self

    def transform(self, texts: Iterable[str]) -> Any:
        """Tf-idf vectors of ``texts`` over the fitted lexicon (unseen terms ignored).

        Parameters
        ----------
        texts : iterable of str
            Documents.

        Returns
        -------
        scipy.sparse.csr_matrix of float64, shape (n_documents, n_terms)

        Raises
        ------
        NotFittedError
            The indexer is not fitted.
        TypeError
            A single string, or a document that is not a str.
        """
        if not hasattr(self, "vocabulary_"):
            raise NotFittedError("this TfidfIndexer is not fitted yet; call fit first")
        counts, _ = self._term_counts(_check_texts(texts), self.vocabulary_)
        return _weight(counts, self.idf_)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The terms, in column order (an object array of str).

        Raises
        ------
        NotFittedError
            The indexer is not fitted.
        """
        if not hasattr(self, "vocabulary_"):
            raise NotFittedError("this TfidfIndexer is not fitted yet; call fit first")
        return np.asarray(sorted(self.vocabulary_, key=self.vocabulary_.__getitem__),
                          dtype=object)
