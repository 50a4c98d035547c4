"""fastrank.datasets.fetch: downloads from a local HTTP server (127.0.0.1, never the
internet) that serves ../shared/data/mulan in the layout of the Mulan repository, with
faults injected on demand (corrupt, truncated, oversized, missing, slow)."""
import hashlib
import http.server
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from fastrank import datasets as D
from fastrank.__main__ import main

pytestmark = pytest.mark.shared_data

# the Mulan repository's path of each file -> the copy in ../shared/data/mulan (only the
# tmc2007 label file has another name there)
SHARED_NAME = {"tmc2007/tmc2007.xml": "tmc2007/tmc2007-500.xml"}

# (name, documents, features, labels) from the Mulan statistics table
SETS = [("bibtex", 7395, 1836, 159), ("cal500", 502, 68, 174), ("delicious", 16105, 500, 983),
        ("emotions", 593, 72, 6), ("enron", 1702, 1001, 53), ("genbase", 662, 1186, 27),
        ("medical", 978, 1449, 45), ("tmc2007", 28596, 500, 22), ("yeast", 2417, 103, 14)]


def _drip(wfile, data):
    """Send ``data`` one byte every 0.2 s (a read never waits the 60 s without data that
    ends a download) until the client hangs up."""
    try:
        for k in range(len(data)):
            wfile.write(data[k:k + 1])
            wfile.flush()
            time.sleep(0.2)
    except OSError:  # the client closed the connection
        pass


class MulanServer:
    """A threaded HTTP server on 127.0.0.1; ``fault`` (None, "corrupt", "truncate", "extra",
    "missing", "no-length-short", "drip": the body one byte at a time, "drip-headers": the
    headers so) changes what it sends, ``delay`` slows every 64 KiB."""

    def __init__(self, root):
        self.root, self.fault, self.delay, self.requests = root, None, 0.0, []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                relative = self.path.lstrip("/")
                owner.requests.append(relative)
                path = owner.root / SHARED_NAME.get(relative, relative)
                if owner.fault == "missing" or not path.is_file():
                    self.send_error(404, "File not found")
                    return
                data = path.read_bytes()
                length = len(data)
                if owner.fault == "drip-headers":
                    _drip(self.wfile, b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 10**6)
                    return
                if owner.fault == "corrupt":
                    data = data[:-1] + bytes([data[-1] ^ 1])
                elif owner.fault == "extra":
                    data += b"\n% one more line\n"
                    length = len(data)
                elif owner.fault == "truncate":
                    data = data[:len(data) // 2]  # Content-Length still announces all of it
                elif owner.fault == "no-length-short":
                    data, length = data[:-10], None
                self.send_response(200)
                if length is not None:
                    self.send_header("Content-Length", str(length))
                self.end_headers()
                if owner.fault == "drip":
                    _drip(self.wfile, data)
                    return
                for k in range(0, len(data), 1 << 16):
                    if owner.delay:
                        time.sleep(owner.delay)
                    self.wfile.write(data[k:k + (1 << 16)])
                self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server(shared_data):
    s = MulanServer(shared_data / "mulan")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    monkeypatch.delenv("FASTRANK_DATA", raising=False)
    monkeypatch.delenv("FASTRANK_DATA_URL", raising=False)


def _shared_file(shared_data, relative):
    return shared_data / "mulan" / SHARED_NAME.get(relative, relative)


def _cache_files(home):
    return sorted(str(p.relative_to(home)) for p in Path(home).rglob("*") if p.is_file())


def test_registry_is_the_nine_shared_sets_with_their_checksums(shared_data):
    assert set(D._mulan._MULAN) == {s[0] for s in SETS}
    for name, info in D._mulan._MULAN.items():
        assert {*info["files"]} == {"arff", "xml"}
        for relative, size, sha256 in info["files"].values():
            raw = _shared_file(shared_data, relative).read_bytes()
            assert (len(raw), hashlib.sha256(raw).hexdigest()) == (size, sha256), relative
            assert relative.startswith(f"{name}/")


@pytest.mark.parametrize("name,n,d,q", SETS, ids=[s[0] for s in SETS])
def test_fetch_every_set_equals_loading_the_shared_files(server, shared_data, tmp_path, name, n,
                                                         d, q):
    ds = D.fetch(name, tmp_path, source=server.url)
    arff, xml = (D._mulan._MULAN[name]["files"][part][0] for part in ("arff", "xml"))
    ref = D.load_arff(_shared_file(shared_data, arff), labels=_shared_file(shared_data, xml))
    assert ds.name == name and (ds.X.shape, ds.Y.shape) == ((n, d), (n, q))
    assert (ds.X != ref.X).nnz == 0 and np.array_equal(ds.Y, ref.Y)
    assert ds.label_names == ref.label_names and ds.feature_names == ref.feature_names
    assert ds.info["url"] == f"{server.url}/{arff}" and ds.info["citation"]
    assert sorted(server.requests) == sorted([arff, xml])
    assert _cache_files(tmp_path) == sorted(f"mulan/{p}" for p in (arff, xml))


def test_cache_hit_downloads_nothing(server, tmp_path):
    first = D.fetch("emotions", tmp_path, source=server.url)
    assert len(server.requests) == 2
    server.fault = "missing"  # a second download would fail
    again = D.fetch("emotions", tmp_path, source=server.url)
    assert len(server.requests) == 2
    assert (again.X != first.X).nnz == 0 and np.array_equal(again.Y, first.Y)
    listed = {(e["name"], e["origin"]): e for e in D.list(tmp_path)}
    assert listed["emotions", "mulan"]["cached"] is True
    assert listed["yeast", "mulan"]["cached"] is False
    assert listed["yeast", "embedded"]["cached"] is True


def test_damaged_cache_file_is_downloaded_again(server, tmp_path):
    D.fetch("emotions", tmp_path, source=server.url)
    cached = tmp_path / "mulan" / "emotions" / "emotions.arff"
    cached.write_bytes(cached.read_bytes()[:-5])
    assert not {e["name"]: e for e in D.list(tmp_path) if e["origin"] == "mulan"}[
        "emotions"]["cached"]
    D.fetch("emotions", tmp_path, source=server.url)
    assert server.requests[2:] == ["emotions/emotions.arff"]
    assert D._mulan._sha256_of(cached) == D._mulan._MULAN["emotions"]["files"]["arff"][2]


def test_checksum_mismatch_names_set_url_and_both_checksums(server, tmp_path, shared_data):
    server.fault = "corrupt"
    with pytest.raises(D.ChecksumError) as info:
        D.fetch("emotions", tmp_path, source=server.url)
    assert isinstance(info.value, ValueError)
    raw = (shared_data / "mulan" / "emotions" / "emotions.arff").read_bytes()
    actual = hashlib.sha256(raw[:-1] + bytes([raw[-1] ^ 1])).hexdigest()
    message = str(info.value)
    assert "emotions" in message and f"{server.url}/emotions/emotions.arff" in message
    assert D._mulan._MULAN["emotions"]["files"]["arff"][2] in message and actual in message
    assert _cache_files(tmp_path) == []  # nothing kept, no temporary file left


def test_oversized_download_is_refused(server, tmp_path):
    server.fault = "extra"
    with pytest.raises(D.ChecksumError, match=r"emotions: .*emotions\.arff sends more than "
                                              r"the published 380476 bytes"):
        D.fetch("emotions", tmp_path, source=server.url)
    assert _cache_files(tmp_path) == []


def test_truncated_download(server, tmp_path):
    server.fault = "truncate"
    with pytest.raises(D.FetchError, match=r"emotions: truncated download of http://127\.0\.0"
                                           r"\.1:\d+/emotions/emotions\.arff: 190238 of "
                                           r"380476 bytes"):
        D.fetch("emotions", tmp_path, source=server.url)
    assert _cache_files(tmp_path) == []


def test_short_download_without_content_length_fails_the_checksum(server, tmp_path):
    server.fault = "no-length-short"
    with pytest.raises(D.ChecksumError, match=r"\(380466 bytes\), expected .* \(380476 bytes\)"):
        D.fetch("emotions", tmp_path, source=server.url)
    assert _cache_files(tmp_path) == []


def test_http_404(server, tmp_path):
    server.fault = "missing"
    with pytest.raises(D.FetchError, match=r"emotions: http://127\.0\.0\.1:\d+/emotions/"
                                           r"emotions\.arff: HTTP error 404") as info:
        D.fetch("emotions", tmp_path, source=server.url)
    assert isinstance(info.value, OSError)
    assert _cache_files(tmp_path) == []


def test_connection_refused(tmp_path):
    with socket.socket() as s:  # a port nobody listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(D.FetchError, match=rf"emotions: cannot download http://127\.0\.0\.1:"
                                           rf"{port}/emotions/emotions\.arff"):
        D.fetch("emotions", tmp_path, source=f"http://127.0.0.1:{port}")


def test_offline_names_the_local_route_and_leaves_no_empty_folder(shared_data, tmp_path,
                                                                  monkeypatch, capsys):
    with socket.socket() as s:  # a port nobody listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "new" / "cache"  # neither folder exists yet
    with pytest.raises(D.FetchError, match=r"FASTRANK_DATA_URL=file:///PATH .*"
                                           r"load_arff\(path, labels=\.\.\.\)"):
        D.fetch("emotions", home, source=f"http://127.0.0.1:{port}")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()  # a cache folder that existed before stays
    monkeypatch.setenv("FASTRANK_DATA_URL", f"http://127.0.0.1:{port}")
    assert main(["datasets", "--fetch", "medical", "--data-home", str(tmp_path / "kept")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "FASTRANK_DATA_URL=file:///PATH" in err
    assert [p.name for p in tmp_path.iterdir()] == ["kept"] and \
        list((tmp_path / "kept").iterdir()) == []
    # the route the message names: a local copy of the Mulan folder as a file:// URL
    monkeypatch.setenv("FASTRANK_DATA_URL", (shared_data / "mulan").as_uri())
    ds = D.fetch("emotions", home)
    assert ds.X.shape == (593, 72) and ds.Y.shape == (593, 6)
    assert _cache_files(home) == ["mulan/emotions/emotions.arff", "mulan/emotions/emotions.xml"]


def test_unwritable_cache(server, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(D.FetchError, match=rf"emotions: cannot create the cache folder "
                                           rf"{blocker}/cache/mulan/emotions: Not a directory"):
        D.fetch("emotions", blocker / "cache", source=server.url)
    assert server.requests == []  # refused before downloading anything
    # a cache folder that exists but where no file can be created
    home = tmp_path / "home"
    (home / "mulan").mkdir(parents=True)
    (home / "mulan" / "emotions").write_text("a file where the set's folder should be")
    with pytest.raises(D.FetchError, match="emotions: cannot create the cache folder"):
        D.fetch("emotions", home, source=server.url)
    assert _cache_files(home) == ["mulan/emotions"]


def test_unwritable_target_leaves_no_temporary_file(server, tmp_path):
    # the final name is taken by a folder: the verified download cannot be renamed there
    (tmp_path / "mulan" / "emotions" / "emotions.arff").mkdir(parents=True)
    with pytest.raises(D.FetchError, match=r"emotions: cannot write .*emotions\.arff"):
        D.fetch("emotions", tmp_path, source=server.url)
    assert _cache_files(tmp_path) == []


def test_environment_variables_choose_cache_and_source(server, tmp_path, monkeypatch):
    monkeypatch.setenv("FASTRANK_DATA", str(tmp_path / "env-cache"))
    monkeypatch.setenv("FASTRANK_DATA_URL", server.url + "/")
    ds = D.fetch("medical")
    assert ds.info["url"] == f"{server.url}/medical/medical.arff"
    assert _cache_files(tmp_path / "env-cache") == ["mulan/medical/medical.arff",
                                                    "mulan/medical/medical.xml"]
    # explicit arguments win over the environment
    other = tmp_path / "explicit"
    server.fault = "missing"
    with pytest.raises(D.FetchError, match="404"):
        D.fetch("medical", other)
    with pytest.raises(D.FetchError, match=r"http://127\.0\.0\.1:1/medical"):
        D.fetch("medical", other, source="http://127.0.0.1:1")


def test_default_cache_is_home_fastrank_data(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert D._mulan._data_home(None) == str(tmp_path / "fastrank_data")
    assert D._mulan._source_url(None) == D.MULAN_URL == \
        "https://raw.githubusercontent.com/tsoumakas/mulan/master/data/multi-label"
    assert {e["url"] for e in D.list() if e["origin"] == "mulan"} >= {
        D.MULAN_URL + "/emotions/emotions.arff"}


def test_concurrent_fetches_of_the_same_set(server, tmp_path):
    server.delay = 0.01  # every download spans the others
    results, errors = [None] * 4, []

    def run(k):
        try:
            results[k] = D.fetch("enron", tmp_path, source=server.url)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert server.requests.count("enron/enron.arff") >= 2  # they did overlap
    for ds in results[1:]:
        assert (ds.X != results[0].X).nnz == 0 and np.array_equal(ds.Y, results[0].Y)
    assert _cache_files(tmp_path) == ["mulan/enron/enron.arff", "mulan/enron/enron.xml"]
    for relative, _size, sha256 in D._mulan._MULAN["enron"]["files"].values():
        assert D._mulan._sha256_of(tmp_path / "mulan" / relative) == sha256


@pytest.mark.parametrize("fault", ["drip", "drip-headers"])
def test_a_slow_server_is_stopped_at_the_deadline(server, tmp_path, fault):
    """A server sending one byte every 0.2 s (never the 60 s without data that ends a
    download: the file would take a day, and its headers hours) is stopped at the fetch's
    overall deadline, with a clear error and nothing under the final name nor beside it."""
    server.fault = fault
    start = time.monotonic()
    with pytest.raises(D.FetchError, match=r"^emotions: download of http://127\.0\.0\.1:\d+/"
                                           r"emotions/emotions\.arff stopped: the fetch did "
                                           r"not end within its deadline of 1\.5 s"):
        D.fetch("emotions", tmp_path, source=server.url, deadline=1.5)
    assert 1.5 <= time.monotonic() - start < 4.5
    assert _cache_files(tmp_path) == []


def test_the_deadline_covers_the_whole_fetch(server, tmp_path, monkeypatch):
    """One deadline for every file of the set: the label file, downloaded after the data
    file, gets only what is left."""
    real = D._mulan._download
    started = []

    def slow_second(name, url, target, size, sha256, deadline):
        started.append(url)
        if url.endswith(".xml"):
            server.fault = "drip"
        return real(name, url, target, size, sha256, deadline)

    monkeypatch.setattr(D._mulan, "_download", slow_second)
    server.delay = 0.1  # the data file: six chunks of 64 KiB, 0.6 s
    with pytest.raises(D.FetchError, match=r"emotions\.xml stopped: .*deadline of 1\.5 s"):
        D.fetch("emotions", tmp_path, source=server.url, deadline=1.5)
    assert [u.rsplit("/", 1)[1] for u in started] == ["emotions.arff", "emotions.xml"]
    assert _cache_files(tmp_path) == ["mulan/emotions/emotions.arff"]


def _temporaries(folder):
    return sorted(p.name for p in Path(folder).glob(".fastrank-*"))


def _wait_for_temporary(folder, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _temporaries(folder):
            return _temporaries(folder)
        time.sleep(0.05)
    raise AssertionError(f"no temporary file appeared in {folder}")


def test_a_killed_fetch_s_temporary_file_is_removed_by_the_next_fetch(server, shared_data,
                                                                      tmp_path):
    """A fetch killed (SIGKILL) mid-download leaves its temporary file in the cache; the
    next fetch of the set removes it -- but not while another fetch downloads into the same
    folder: a live download's temporary file is left alone."""
    import signal
    import subprocess
    import sys
    slow = MulanServer(shared_data / "mulan")
    slow.fault = "drip"
    try:
        folder = tmp_path / "mulan" / "emotions"
        child = subprocess.Popen([sys.executable, "-c", "import sys; from fastrank import "
                                  "datasets; datasets.fetch('emotions', sys.argv[1], "
                                  "source=sys.argv[2], deadline=None)", str(tmp_path),
                                  slow.url])
        killed = _wait_for_temporary(folder)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        assert _temporaries(folder) == killed

        live = []

        def slow_fetch():
            try:
                D.fetch("emotions", tmp_path, source=slow.url, deadline=4)
            except D.FetchError as exc:
                live.append(exc)

        thread = threading.Thread(target=slow_fetch)  # the next fetch
        thread.start()
        end = time.monotonic() + 30
        while _temporaries(folder) in ([], killed) and time.monotonic() < end:
            time.sleep(0.02)
        downloading = _temporaries(folder)
        assert len(downloading) == 1 and downloading != killed  # the killed one's removed
        D.fetch("emotions", tmp_path, source=server.url)  # while the slow one downloads
        assert _temporaries(folder) == downloading  # left alone
        thread.join(30)
        assert "deadline" in str(live[0])
        assert _temporaries(folder) == []  # the slow one removed its own
        assert _cache_files(tmp_path) == ["mulan/emotions/emotions.arff",
                                          "mulan/emotions/emotions.xml"]
    finally:
        slow.close()


def test_deadline_argument(server, tmp_path):
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="deadline must be a positive number"):
            D.fetch("medical", tmp_path, source=server.url, deadline=bad)
    for bad in ("10", True, [5]):
        with pytest.raises(TypeError, match="deadline must be a number of seconds or None"):
            D.fetch("medical", tmp_path, source=server.url, deadline=bad)
    assert server.requests == []
    assert D.fetch("medical", tmp_path, source=server.url, deadline=None).n_documents == 978
    assert D.FETCH_DEADLINE == 600


def test_unknown_name_lists_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match=r"unknown Mulan data set 'scene'; known: bibtex, "
                                         r"cal500, delicious, emotions, enron, genbase, "
                                         r"medical, tmc2007, yeast"):
        D.fetch("scene", tmp_path)
    with pytest.raises(TypeError, match="name must be a str"):
        D.fetch(3, tmp_path)
    with pytest.raises(ValueError, match=r"fetch\('emotions'\) downloads it"):
        D.load("emotions")


def test_cli_lists_fetches_and_reports_errors(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FASTRANK_DATA_URL", server.url)
    home = str(tmp_path)
    assert main(["datasets", "--data-home", home]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 10 and lines[0].split()[:2] == ["yeast", "embedded"]
    assert all("fetchable" in line for line in lines[1:])
    assert main(["datasets", "--fetch", "genbase", "--data-home", home]) == 0
    out = capsys.readouterr().out
    assert "documents: 662" in out and "labels: 27" in out
    assert main(["datasets", "--data-home", home]) == 0
    genbase = [line for line in capsys.readouterr().out.splitlines() if line.startswith("genbase")]
    assert genbase[0].split()[1:3] == ["mulan,", "cached"]
    server.fault = "corrupt"
    assert main(["datasets", "--fetch", "emotions", "--data-home", home]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SHA-256" in err and "emotions" in err
    assert not (tmp_path / "mulan" / "emotions").exists() or \
        _cache_files(tmp_path / "mulan" / "emotions") == []
