"""The Mulan benchmark sets: their registry, and the download into a local cache with
checksums and a deadline.
"""
import builtins
import contextlib
import hashlib
import http.client
import math
import numbers
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any

from .._atomic import atomic_file, tidy
from .._typing import PathLikeStr
from ._arff import load_arff
from ._base import Dataset
from ._embedded import _embedded_entries


#: Where :func:`fetch` downloads from by default: the ``data/multi-label`` folder of the Mulan
#: project's repository (``tsoumakas/mulan`` on GitHub), one folder of plain files per set.
MULAN_URL = "https://raw.githubusercontent.com/tsoumakas/mulan/master/data/multi-label"

# Each set: its two files as (path under the source URL, bytes, SHA-256). The checksums are
# those of the plain files the Mulan repository serves (one folder per set, no archive).
_MULAN: dict[str, dict[str, Any]] = {
    "bibtex": {
        "files": {"arff": ("bibtex/bibtex.arff", 3457832,
                           "a282a6d1fb3cdaf39bde3f81cd4e6079850a7a538a6bc44f8b4ed95dfe1e5014"),
                  "xml": ("bibtex/bibtex.xml", 5880,
                          "08fe20013c1e75dcf1888c185f5187c95e76495b8518ce289b4d3afce38d1232")},
        "documents": 7395, "features": 1836, "labels": 159,
        "citation": "I. Katakis, G. Tsoumakas and I. Vlahavas (2008). Multilabel text "
                    "classification for automated tag suggestion. ECML/PKDD 2008 Discovery "
                    "Challenge."},
    "cal500": {
        "files": {"arff": ("cal500/cal500.arff", 492857,
                           "cfe6097ba5fd6e8584e54911ab9783dcab34e898446b7c9370c71d477eae56d3"),
                  "xml": ("cal500/cal500.xml", 7901,
                          "877e128531268d7661faa3e44f7bb43cbcda829c0895e49879168775b192728c")},
        "documents": 502, "features": 68, "labels": 174,
        "citation": "D. Turnbull, L. Barrington, D. Torres and G. Lanckriet (2008). Semantic "
                    "annotation and retrieval of music and sound effects. IEEE Transactions "
                    "on Audio, Speech and Language Processing 16(2), 467-476."},
    "delicious": {
        "files": {"arff": ("delicious/delicious.arff", 3773732,
                           "b944de0bca910050c11d97eed57d17b073110ea3646a587f3d15d127cf581aab"),
                  "xml": ("delicious/delicious.xml", 34303,
                          "4e0c0f93c7d86a39b9fca4aaefaa00e9428f2c80277732dfbf03ca48e2c14da2")},
        "documents": 16105, "features": 500, "labels": 983,
        "citation": "G. Tsoumakas, I. Katakis and I. Vlahavas (2008). Effective and efficient "
                    "multilabel classification in domains with large number of labels. "
                    "ECML/PKDD 2008 Workshop on Mining Multidimensional Data."},
    "emotions": {
        "files": {"arff": ("emotions/emotions.arff", 380476,
                           "6f2f790047073d1293ac0872c0d55f2dc98b6177802fc96c6b66b309dfee1e4b"),
                  "xml": ("emotions/emotions.xml", 323,
                          "dbce8e6ccbbb2fcbfd9e9edbb230d7ed12692c6e13f59fdbc0161fa9b6cf2dc0")},
        "documents": 593, "features": 72, "labels": 6,
        "citation": "K. Trohidis, G. Tsoumakas, G. Kalliris and I. Vlahavas (2008). Multilabel "
                    "classification of music into emotions. ISMIR 2008, 325-330."},
    "enron": {
        "files": {"arff": ("enron/enron.arff", 906705,
                           "d0889ef0576d4e7b5ec0df3b3e4760e476ac11a6e7d7ddeee4c4a34470dedf97"),
                  "xml": ("enron/enron.xml", 1604,
                          "ed40c92d7f613eed51714912cab10dddc4ce456262137d8fef230d44c7f4457b")},
        "documents": 1702, "features": 1001, "labels": 53,
        "citation": "B. Klimt and Y. Yang (2004). The Enron corpus: a new dataset for email "
                    "classification research. ECML 2004, 217-226."},
    "genbase": {
        "files": {"arff": ("genbase/genbase.arff", 3238276,
                           "cb23052a49191e36e9a59cd661e97d79bed2e3f2583030a206692b57bf1e3671"),
                  "xml": ("genbase/genbase.xml", 992,
                          "198e8a1d7070e9603119e02e626cedc589db7577339b307b06f5192047b69eb9")},
        "documents": 662, "features": 1186, "labels": 27,
        "citation": "S. Diplaris, G. Tsoumakas, P. Mitkas and I. Vlahavas (2005). Protein "
                    "classification with multiple algorithms. PCI 2005, 448-456."},
    "medical": {
        "files": {"arff": ("medical/medical.arff", 129626,
                           "ad0630a9a409ed0023c3bb56a0be7610b635c1ca185c6035e3b198b01167aac4"),
                  "xml": ("medical/medical.xml", 1818,
                          "51fa9d5c09e48caff3f0a0c75db1c9aa85944f8e35451f3ad8bd56fc422286ce")},
        "documents": 978, "features": 1449, "labels": 45,
        "citation": "J. P. Pestian et al. (2007). A shared task involving multi-label "
                    "classification of clinical free text. BioNLP 2007, 97-104."},
    "tmc2007": {  # the 500-feature version; the repository names its label file tmc2007.xml
        "files": {"arff": ("tmc2007/tmc2007-500.arff", 4193699,
                           "3ea7e95dd80a78a3e7d521d77c3371bfef888da1d364b5a3bb71c7222ad7f013"),
                  "xml": ("tmc2007/tmc2007.xml", 783,
                          "cb6a67c8ae72fd9b47d89f77aa5b7f6cafb4ba9c20b1124c65a95a3f2caec38d")},
        "documents": 28596, "features": 500, "labels": 22,
        "citation": "A. Srivastava and B. Zane-Ulman (2005). Discovering recurring anomalies "
                    "in text reports regarding complex space systems. IEEE Aerospace "
                    "Conference 2005."},
    "yeast": {
        "files": {"arff": ("yeast/yeast.arff", 2416688,
                           "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7"),
                  "xml": ("yeast/yeast.xml", 526,
                          "c3056cc26444b5158b1588d1b73bec9c45429e10f0957ad085903423cb81f247")},
        "documents": 2417, "features": 103, "labels": 14,
        "citation": "A. Elisseeff and J. Weston (2001). A kernel method for multi-labelled "
                    "classification. Advances in Neural Information Processing Systems 14."},
}

_DOWNLOAD_TIMEOUT = 60  # seconds without data before a download is abandoned
#: Default overall deadline of :func:`fetch`, in seconds (its ``deadline``).
FETCH_DEADLINE = 600


class FetchError(OSError):
    """A data set could not be brought into the cache: an HTTP error, a network failure, a
    truncated download or a cache folder that cannot be written."""


class ChecksumError(ValueError):
    """A downloaded file is not the published one: its SHA-256 (or size) differs."""


def _data_home(data_home):
    """The cache folder: ``data_home``, else ``$FASTRANK_DATA``, else ``~/fastrank_data``."""
    if data_home is None:
        data_home = os.environ.get("FASTRANK_DATA") or os.path.join("~", "fastrank_data")
    return os.path.abspath(os.path.expanduser(os.fspath(data_home)))


def _source_url(source):
    """The download base URL: ``source``, else ``$FASTRANK_DATA_URL``, else :data:`MULAN_URL`."""
    if source is None:
        source = os.environ.get("FASTRANK_DATA_URL") or MULAN_URL
    if not isinstance(source, str):
        raise TypeError(f"source must be a URL string, got {type(source).__name__}")
    return source.rstrip("/")


def _mulan_key(name):
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    if name not in _MULAN:
        raise ValueError(f"unknown Mulan data set {name!r}; known: {', '.join(_MULAN)}")
    return name


def _cache_path(home, relative):
    return os.path.join(home, "mulan", *relative.split("/"))


def _missing_folders(folder):
    """``folder`` and those of its parents that do not exist (which creating it creates)."""
    missing = []
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing


def _sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _is_cached(path, size, sha256):
    """Whether ``path`` holds the published file (a damaged copy counts as absent)."""
    try:
        return os.path.getsize(path) == size and _sha256_of(path) == sha256
    except OSError:
        return False


class _Deadline:
    """The overall deadline of one :func:`fetch`: when it passes, a timer shuts down every
    connection opened for the fetch (:meth:`opener`), so that a read blocked on a slow
    server returns at once, and :meth:`check` raises :class:`FetchError`."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds
        self._expired = False
        self._sockets = []
        self._lock = threading.Lock()
        self._timer = None
        if seconds is not None:
            self._timer = threading.Timer(seconds, self._expire)
            self._timer.daemon = True
            self._timer.start()

    def _expire(self):
        with self._lock:
            self._expired = True
            sockets = [*self._sockets]
        for sock in sockets:
            self._shut(sock)

    def _watch(self, sock):
        with self._lock:
            self._sockets.append(sock)
            expired = self._expired
        if expired:  # connected just after the deadline
            self._shut(sock)

    @staticmethod
    def _shut(sock):
        with contextlib.suppress(OSError):  # closed already
            sock.shutdown(socket.SHUT_RDWR)

    def timeout(self):
        """Seconds a network operation may wait: the time without data allowed, at most
        what is left before the deadline."""
        if self.end is None:
            return _DOWNLOAD_TIMEOUT
        return max(0.001, min(_DOWNLOAD_TIMEOUT, self.end - time.monotonic()))

    def check(self, name, url):
        """FetchError once the deadline has passed."""
        if self._expired or (self.end is not None and time.monotonic() >= self.end):
            raise FetchError(f"{name}: download of {url} stopped: the fetch did not end "
                             f"within its deadline of {self.seconds:g} s (a slower "
                             "connection needs fetch(..., deadline=...)); discarded")

    def cancel(self):
        if self._timer is not None:
            self._timer.cancel()

    def opener(self):
        """A urllib opener whose HTTP and HTTPS connections this deadline watches."""
        watch = self._watch

        def watched(connection_class):
            class Watched(connection_class):
                def connect(self):
                    super().connect()
                    watch(self.sock)
            return Watched

        class HTTP(urllib.request.HTTPHandler):
            def http_open(self, req):
                return self.do_open(watched(http.client.HTTPConnection), req)

        class HTTPS(urllib.request.HTTPSHandler):
            def https_open(self, req):
                return self.do_open(watched(http.client.HTTPSConnection), req,
                                    context=self._context)

        return urllib.request.build_opener(HTTP, HTTPS)


def _check_deadline(deadline):
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, numbers.Real):
        raise TypeError(f"deadline must be a number of seconds or None, got "
                        f"{type(deadline).__name__}")
    if not (deadline > 0 and math.isfinite(deadline)):
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    return float(deadline)


def _read(response, name, url, deadline):
    try:
        chunk = response.read(1 << 16)
    except (OSError, http.client.HTTPException) as exc:
        deadline.check(name, url)
        raise FetchError(f"{name}: download of {url} interrupted: {exc!r}") from None
    deadline.check(name, url)  # a connection shut down at the deadline reads as its end
    return chunk


def _download(name, url, target, size, sha256, deadline):
    """Download ``url`` to ``target`` through a temporary file beside it; rename only when
    the size and the SHA-256 are the published ones, and before ``deadline``."""
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"{name}: cannot create the cache folder {folder}: "
                         f"{exc.strerror or exc}") from None
    deadline.check(name, url)
    try:
        response = deadline.opener().open(url, timeout=deadline.timeout())
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{name}: {url}: HTTP error {exc.code} ({exc.reason})") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        deadline.check(name, url)
        raise FetchError(f"{name}: cannot download {url}: "
                         f"{getattr(exc, 'reason', None) or exc}; offline, a local copy of "
                         "Mulan's data/multi-label folder is fetched from "
                         "FASTRANK_DATA_URL=file:///PATH (or source='file:///PATH'), and a "
                         "lone ARFF file loads with load_arff(path, labels=...)") from None
    with response:
        announced = response.headers.get("Content-Length")
        digest, got = hashlib.sha256(), 0
        try:
            with atomic_file(target) as f:
                while chunk := _read(response, name, url, deadline):
                    got += len(chunk)
                    if got > size:
                        raise ChecksumError(f"{name}: {url} sends more than the published "
                                            f"{size} bytes (SHA-256 {sha256}); discarded")
                    digest.update(chunk)
                    f.write(chunk)
                if announced is not None and announced.isdigit() and got != int(announced):
                    raise FetchError(f"{name}: truncated download of {url}: {got} of "
                                     f"{announced} bytes received; discarded")
                if digest.hexdigest() != sha256:
                    raise ChecksumError(f"{name}: {url} has SHA-256 {digest.hexdigest()} "
                                        f"({got} bytes), expected {sha256} ({size} bytes); "
                                        "discarded")
        except FetchError:
            raise
        except OSError as exc:  # the temporary file or the rename: the cache is not writable
            raise FetchError(f"{name}: cannot write {target}: {exc.strerror or exc}") from None


def fetch(name: str, data_home: PathLikeStr | None = None, *,
          source: str | None = None, deadline: float | None = FETCH_DEADLINE) -> Dataset:
    """Download a Mulan benchmark data set (once) and load it.

    The set's ARFF file and its label XML file are fetched from ``source`` into the cache,
    each checked against the size and SHA-256 recorded here, and loaded with
    :func:`load_arff` with the XML file giving the labels. A set whose files are already in
    the cache (and still match their checksums) is loaded without any network access; a
    cached file that no longer matches is downloaded again.

    Parameters
    ----------
    name : str
        One of ``bibtex``, ``cal500``, ``delicious``, ``emotions``, ``enron``, ``genbase``,
        ``medical``, ``tmc2007`` (its 500-feature version) and ``yeast`` (see :func:`list`).
        Mulan's ``yeast`` holds the same documents and labels as the embedded ``yeast`` of
        :func:`load`, with its features printed to 6 decimals.
    data_home : str or path-like, optional
        The cache folder (created if needed). Default: ``$FASTRANK_DATA`` if set, else
        ``~/fastrank_data``. The files go to ``<data_home>/mulan/<path>``, ``<path>`` being
        their path under the source URL (e.g. ``emotions/emotions.arff``).
    source : str, optional
        The base URL the files are downloaded from, as ``<source>/<path>`` (any URL that
        ``urllib.request`` opens: ``https://``, ``http://``, ``file://``). Default:
        ``$FASTRANK_DATA_URL`` if set, else :data:`MULAN_URL`, the ``data/multi-label``
        folder of the Mulan project's repository (plain ``.arff`` and ``.xml`` files, one
        folder per set). A mirror must serve the same bytes: the checksums decide.
    deadline : float or None, default :data:`FETCH_DEADLINE` (600)
        Seconds the whole fetch (every file it downloads) may take; a download still
        running then is stopped and discarded (at least 7 KB/s gets the largest set,
        tmc2007, in time). None: no overall deadline, only the 60 s allowed without data.

    Returns
    -------
    Dataset
        Named ``name``; ``info`` holds ``source`` (the cached ARFF file), ``url`` (where it
        was published), ``relation`` and ``citation``.

    Raises
    ------
    ValueError
        ``name`` is not a known set (the message lists them).
    ChecksumError
        (a ValueError) A downloaded file has another size or SHA-256 than the published one;
        the message names the set, the URL and both checksums.
    FetchError
        (an OSError) An HTTP error, a network failure or timeout (60 s without data), the
        ``deadline`` passed, a download shorter than its ``Content-Length``, or a cache
        folder that cannot be written; the message names the set and the URL or folder
        (and, when the source cannot be reached, the ``file://`` route to a local copy).
        The cache folders this fetch created are removed again when they stay empty.

    Notes
    -----
    A download goes to a temporary file in the cache folder and is renamed to its final
    name only once it is complete and verified, so the cache never holds a partial file,
    whatever fails and however many processes fetch the same set at once (each downloads
    its own copy; the last rename wins, with the same bytes). The temporary file of a
    fetch that was killed is removed by the next fetch of the set (not while another
    process downloads into the same folder: its own temporary file is left alone).

    Examples
    --------
    Downloading needs the network, so these lines are shown, not run by the tests::

        emotions = fetch("emotions")       # X (593, 72), Y (593, 6)
        fetch("emotions", data_home="/tmp/mulan-cache",
              source="https://example.org/mirror/multi-label")

    A name outside the list is refused before anything is downloaded:

    >>> from fastrank.datasets import fetch
    >>> fetch("emotion")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: unknown Mulan data set 'emotion'; known: bibtex, cal500, delicious, ...
    """
    key = _mulan_key(name)
    home, base = _data_home(data_home), _source_url(source)
    clock = _Deadline(_check_deadline(deadline))
    paths = {part: _cache_path(home, relative)
             for part, (relative, _, _) in _MULAN[key]["files"].items()}
    tidy({os.path.dirname(p) for p in paths.values()})  # a killed fetch's temporary files
    created = sorted({f for p in paths.values() for f in _missing_folders(os.path.dirname(p))},
                     key=len)
    try:
        for part, (relative, size, sha256) in _MULAN[key]["files"].items():
            if not _is_cached(paths[part], size, sha256):
                _download(key, f"{base}/{relative}", paths[part], size, sha256, clock)
    except BaseException:
        for folder in reversed(created):  # the cache folders this fetch made, left empty
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise
    finally:
        clock.cancel()
    dataset = load_arff(paths["arff"], labels=paths["xml"], name=key)
    dataset.info.update(url=f"{base}/{_MULAN[key]['files']['arff'][0]}",
                        citation=_MULAN[key]["citation"])
    return dataset


def list(data_home: PathLikeStr | None = None) -> builtins.list[dict[str, Any]]:  # noqa: A001
    """The data sets :func:`load` and :func:`fetch` provide, and which of them are local.

    Parameters
    ----------
    data_home : str or path-like, optional
        The cache folder :func:`fetch` uses (default: ``$FASTRANK_DATA``, else
        ``~/fastrank_data``).

    Returns
    -------
    list of dict
        One per data set, embedded ones first, with ``name``, ``origin`` (``"embedded"``:
        shipped with fastrank, for :func:`load`; ``"mulan"``: downloaded by :func:`fetch`),
        ``cached`` (True when loading it needs no download: always for an embedded set; for
        a Mulan set, whether both of its files are in the cache and match their
        checksums), ``documents``, ``features``, ``labels`` and ``citation``; embedded sets
        add ``description``, ``source`` and ``licence``, Mulan sets ``url`` (where the ARFF
        file is downloaded from, after ``$FASTRANK_DATA_URL``).

    Examples
    --------
    >>> from fastrank import datasets
    >>> [(d["name"], d["origin"], d["documents"]) for d in datasets.list()][:3]
    [('yeast', 'embedded', 2417), ('bibtex', 'mulan', 7395), ('cal500', 'mulan', 502)]
    """
    home, base = _data_home(data_home), _source_url(None)
    mulan = [{"name": key, "origin": "mulan",
              "cached": all(_is_cached(_cache_path(home, rel), size, sha)
                            for rel, size, sha in info["files"].values()),
              "documents": info["documents"], "features": info["features"],
              "labels": info["labels"], "citation": info["citation"],
              "url": f"{base}/{info['files']['arff'][0]}"}
             for key, info in _MULAN.items()]
    return _embedded_entries() + mulan
