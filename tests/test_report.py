"""Study outputs: Markdown tables, the terminal summary, the figures (drawn data checked
against SciPy), the self-contained HTML report (rendered by headless Chromium, with and
without matplotlib), atomic writing, and the ``fastrank study/evaluate/datasets`` commands."""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy import stats as sps

from fastrank.__main__ import main
from fastrank.metrics import METRIC_KEYS, evaluate
from fastrank.report import (METRIC_NAMES, MAIN_METRICS, REPORT_LINE, direction,
                             figure_specs, interval, metric_name, render_html,
                             render_markdown, terminal_summary, write_study)
from fastrank.study import LOWER_IS_BETTER, StudyResult, run_study

SMALL_ARGS = ["--folds", "2", "--set", "vgram.n_neurons=8", "--set", "vgram.n_synapses=32",
              "--set", "vgramcor.n_neurons=8", "--set", "vgramcor.n_synapses=32"]
N_FIGURES = 1 + len(METRIC_KEYS) + 2  # ties, one per metric, two CD diagrams


@pytest.fixture(scope="module")
def small_study():
    return run_study("yeast", folds=3, random_state=0,
                     params={"vgram": {"n_neurons": 8, "n_synapses": 32},
                             "vgramcor": {"n_neurons": 8, "n_synapses": 32}})


@pytest.fixture(scope="module")
def written(small_study, tmp_path_factory):
    """The small study's output set, written once for the module."""
    out = tmp_path_factory.mktemp("study")
    return out, write_study(small_study, out)


def test_markdown_has_every_table(small_study):
    md = render_markdown(small_study)
    for title in ("Data set", "Configuration", "Ties in the beliefs",
                  "Ordinal against the other ranking types (paired t-tests)",
                  "Ranking types to use per metric", "Time per fold"):
        assert f"### {title}" in md
    for m in METRIC_KEYS:
        assert f"### t statistic, ordinal vs others: {METRIC_NAMES[m]}" in md
        assert f"| {METRIC_NAMES[m]} | " in md
    assert md.count("| kNN |") >= 20
    # every row of a table has as many (unescaped) separators as its header
    for block in md.split("\n\n"):
        rows = [l for l in block.splitlines() if l.startswith("|")]
        if rows:
            seps = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
            assert len(seps) == 1, block


def test_metric_names_and_directions():
    assert set(METRIC_NAMES) == set(METRIC_KEYS)
    assert len(set(METRIC_NAMES.values())) == len(METRIC_KEYS)
    assert metric_name("one_error") == "One-error"
    assert metric_name("average_precision") == "Average precision"
    assert metric_name("precision_macro_c") == "Precision (macro, category)"
    assert metric_name("f1_micro_d") == "F1 (micro, document)"
    assert [m for m in METRIC_KEYS if direction(m) == "lower is better"] == [
        "one_error", "coverage", "ranking_loss", "hamming_loss"]
    assert all(direction(m) == "higher is better" for m in METRIC_KEYS
               if m not in LOWER_IS_BETTER)


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_interval_matches_scipy(alpha):
    rng = np.random.default_rng(3)
    for n in (2, 3, 10, 50):
        v = rng.normal(5, 2, n)
        mean, half = interval(v, alpha)
        lo, hi = sps.t.interval(1 - alpha, n - 1, loc=v.mean(), scale=sps.sem(v))
        assert mean == pytest.approx(v.mean()) and half == pytest.approx((hi - lo) / 2)
    assert interval([0.25, 0.25, 0.25]) == (0.25, 0.0)
    with pytest.raises(ValueError, match="at least 2"):
        interval([1.0])
    with pytest.raises(ValueError, match="NaN or infinity"):
        interval([1.0, np.nan])
    with pytest.raises(ValueError, match="alpha"):
        interval([1.0, 2.0], alpha=1.0)


def _errorbars(ax):
    """(x, mean, lower end, upper end, filled) of each mark of an axes' error bars."""
    out = []
    for container in ax.containers:
        line, _, (bars,) = container.lines
        for (x, y), seg in zip(line.get_xydata(), bars.get_segments()):
            out.append((x, y, seg[:, 1].min(), seg[:, 1].max(),
                        line.get_markerfacecolor() != "white"))
    return out


def _drawn(spec):
    import matplotlib
    from matplotlib.figure import Figure
    from fastrank.report._figures import _RC
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=spec.size, layout="constrained")
        spec.draw(fig)
        fig.canvas.draw()  # layout, so that the axis limits are final
    return fig


def test_metric_figures_draw_intervals_differences_and_significance(small_study):
    """Every mark and whisker of every metric figure against a reference from SciPy: mean
    and t interval per classifier and ranking type in (a), the paired difference from
    ordinal in (b), filled exactly when scipy.stats.ttest_rel gives p < 0.05, one "*" in
    (a) per significant pair; axis labels name the metric and its direction; the value
    axis spans the whiskers, not zero."""
    r = small_study
    specs = {s.name: s for s in figure_specs(r)}
    assert list(specs) == ["ties"] + [f"metric-{m}" for m in METRIC_KEYS] + [
        "cd-classifiers", "cd-ranking-types"]
    for m in METRIC_KEYS:
        fig = _drawn(specs[f"metric-{m}"])
        ax_a, ax_b = fig.axes
        assert ax_a.get_ylabel() == f"{METRIC_NAMES[m]}\n({direction(m)})"
        marks = _errorbars(ax_a)
        expected = []
        for t in r.ties:
            for c in r.classifiers:
                v = r.fold_values(c, t, m)
                lo, hi = sps.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=sps.sem(v)) \
                    if v.std() > 0 else (v.mean(), v.mean())
                expected.append((v.mean(), lo, hi))
        assert np.allclose([mk[1:4] for mk in marks], expected, rtol=1e-9, atol=1e-12)
        ends = np.array([mk[2:4] for mk in marks])
        span = max(ends.max() - ends.min(), 1e-12)
        y0, y1 = ax_a.get_ylim()
        assert ends.min() - 0.3 * span <= y0 <= ends.min() and ends.max() <= y1 <= \
            ends.max() + 0.3 * span
        diffs, n_sig = [], 0
        for c in r.classifiers:  # the order of the marks along the axis
            for t in r.ties[1:]:
                d = r.fold_values(c, t, m) - r.fold_values(c, "ordinal", m)
                p = sps.ttest_rel(r.fold_values(c, "ordinal", m), r.fold_values(c, t, m)).pvalue
                significant = bool(p < 0.05)  # NaN (identical samples) is not significant
                n_sig += significant
                lo, hi = sps.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=sps.sem(d)) \
                    if d.std() > 0 else (d.mean(), d.mean())
                diffs.append((d.mean(), lo, hi, significant))
        drawn = [mk[1:] for mk in sorted(_errorbars(ax_b))]
        assert np.allclose([d[:3] for d in drawn], [d[:3] for d in diffs], atol=1e-12)
        assert [d[3] for d in drawn] == [d[3] for d in diffs]
        assert sum(t.get_text() == "*" for t in ax_a.texts) == n_sig
        assert any(line.get_ydata()[0] == 0 for line in ax_b.get_lines()
                   if line.get_linestyle() == "--")  # the zero line of (b)


def _text_boxes(fig):
    """(text, box) of every text the figure draws."""
    from matplotlib.text import Text
    fig.draw_without_rendering()
    return [(t.get_text(), tuple(t.get_window_extent().bounds))
            for t in fig.findobj(Text) if t.get_visible() and t.get_text()]


def test_figure_titles_placed_as_matplotlib_places_them(small_study):
    """The report fixes titles at the top of their axes where nothing is above it, and
    leaves an axes with an offset text on its y axis (``1e-7``, ``+6e-1``) to matplotlib,
    whose placement separates the two: every text where matplotlib's own placement puts
    it."""
    import matplotlib
    from matplotlib.figure import Figure
    from fastrank.report._figures import _RC, FigureSpec

    def line(y):
        def draw(fig):
            ax = fig.subplots()
            ax.plot([0, 1], y)
            ax.set_title("(a) a line", loc="left")
        return draw

    specs = [figure_specs(small_study)[1], *(
        FigureSpec("line", "A line", "", (3.0, 2.0), line(y))
        for y in ([0.2, 0.3], [1e-7, 3e-7], [0.6, 0.6000001]))]
    for spec in specs:
        with matplotlib.rc_context(_RC):
            auto = Figure(figsize=spec.size, layout="constrained")
            spec.draw(auto)
            assert _text_boxes(spec._figure()) == _text_boxes(auto)
        offsets = [ax.yaxis.offsetText.get_text() for ax in auto.axes]
        assert any(offsets) == (spec is not specs[0] and spec is not specs[1])  # all cases


def test_ties_figure_draws_the_tie_statistics(small_study):
    r = small_study
    fig = _drawn(figure_specs(r)[0])
    ax_size, ax_share = fig.axes
    for (_x, mean, _lo, hi, _), c in zip(_errorbars(ax_size), r.classifiers):
        v = np.asarray(r.tie_stats[c]["group_size"])
        assert mean == pytest.approx(v.mean()) and hi - mean == pytest.approx(
            interval(v)[1], abs=1e-12)
    shares = [mk[1] for mk in _errorbars(ax_share)]
    assert shares == pytest.approx([100 * np.mean(r.tie_stats[c][k])
                                    for k in ("top", "boundary") for c in r.classifiers])


def _labelled_ranks(svg):
    """{name: mean rank} from the labels "Name (2.25)" of a CD diagram's SVG."""
    texts = [t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")]
    return {m[1]: float(m[2]) for t in texts if (m := re.fullmatch(r"(.+) \((\d\.\d\d)\)", t))}


def test_cd_diagrams_rank_as_scipy(written, small_study):
    """Mean ranks of the two CD diagrams from scipy.stats.rankdata (1 = most favourable),
    with the blocks of the module docstring."""
    r = small_study
    out, _ = written
    sign = {m: -1 if m in LOWER_IS_BETTER else 1 for m in METRIC_KEYS}
    clf = np.array([[-sign[m] * r.mean(c, "modified", m) for c in r.classifiers]
                    for m in METRIC_KEYS])
    ranks = np.mean([sps.rankdata(row) for row in clf], axis=0)
    got = _labelled_ranks((out / "figures" / "cd-classifiers.svg").read_text())
    assert got == {name: pytest.approx(rk, abs=0.005) for name, rk in
                   zip(["kNN", "ML-kNN", "VG-RAM WNN", "VG-RAM WNN-COR"], ranks)}
    types = np.array([[-sign[m] * r.mean(c, t, m) for t in r.ties]
                      for c in r.classifiers for m in METRIC_KEYS])
    ranks = np.mean([sps.rankdata(row) for row in types], axis=0)
    got = _labelled_ranks((out / "figures" / "cd-ranking-types.svg").read_text())
    assert got == {name: pytest.approx(rk, abs=0.005) for name, rk in
                   zip(["Ordinal", "Dense", "Standard", "Modified"], ranks)}


def test_write_study_outputs(small_study, written):
    out, paths = written
    assert paths == [str(out / f) for f in ("results.json", "tables.md", "tables.tex",
                                            "report.html")] + [
        str(out / "figures")]
    back = StudyResult.from_json((out / "results.json").read_text())
    assert np.array_equal(back.values["knn"], small_study.values["knn"])
    names = sorted(os.listdir(out / "figures"))
    assert len(names) == 2 * N_FIGURES
    assert not [f for f in os.listdir(out) + names if f.startswith(".fastrank-")]


def test_figure_files_are_vector_and_reproducible(small_study, written):
    """PDF with embedded TrueType fonts and no raster image; SVG that parses as XML, with
    its text as text and no raster image; rendering again gives the same bytes."""
    out, _ = written
    for spec in figure_specs(small_study):
        pdf = (out / "figures" / f"{spec.name}.pdf").read_bytes()
        svg = (out / "figures" / f"{spec.name}.svg").read_text()
        assert pdf.startswith(b"%PDF-") and b"/FontFile2" in pdf
        assert b"/Subtype /Image" not in pdf and b"/Type3" not in pdf
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert not list(root.iter("{http://www.w3.org/2000/svg}image"))
        assert spec.title in [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    spec = figure_specs(small_study)[3]
    assert spec.render() == ((out / "figures" / f"{spec.name}.svg").read_text(),
                             (out / "figures" / f"{spec.name}.pdf").read_bytes())


def test_figures_font_is_dejavu_sans_cut_short(small_study):
    """The figures' font is DejaVu Sans cut to the characters the report uses (so that each
    PDF's subset is made quickly): the same glyph advances for every one of them, far fewer
    glyphs, and a character outside the cut (a user's name) drawn from DejaVu Sans itself,
    without a missing-glyph warning."""
    import warnings

    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    from fastrank.report import _figures

    family = _figures._font_family()
    assert family == [_figures._FIGURE_FONT, "DejaVu Sans"]
    cut = FT2Font(font_manager.findfont(family[0], fallback_to_default=False))
    full = FT2Font(font_manager.findfont("DejaVu Sans", fallback_to_default=False))
    assert cut.fname != full.fname and cut.num_glyphs < full.num_glyphs / 5
    held = 0
    for lo, hi in _figures._FIGURE_CHARS:
        for code in range(lo, hi + 1):
            if full.get_char_index(code) == 0:  # not in DejaVu Sans either
                continue
            assert cut.get_char_index(code) != 0, hex(code)
            assert (cut.load_char(code).linearHoriAdvance
                    == full.load_char(code).linearHoriAdvance), hex(code)
            held += 1
    assert held > 500
    assert cut.get_char_index(ord("Ж")) == 0 != full.get_char_index(ord("Ж"))
    spec = figure_specs(small_study)[0]
    named = _figures.FigureSpec(spec.name, "Жук " + spec.title, spec.caption, spec.size,
                                spec.draw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg, pdf = named.render()
    assert "Жук" in svg and pdf.count(b"/FontFile2") >= 2  # the cut and DejaVu Sans


def test_figures_font_outlives_a_forked_child():
    """The cut's file is removed at exit of the process that made it: a forked child that
    exits normally leaves it to its parent, and the parent's exit removes it."""
    script = textwrap.dedent("""
        import os, sys
        from matplotlib import font_manager
        from fastrank.report import _figures
        path = font_manager.findfont(_figures._font_family()[0], fallback_to_default=False)
        pid = os.fork()
        if pid == 0:
            sys.exit(0)  # a normal exit: atexit handlers run in the child
        os.waitpid(pid, 0)
        print(path, os.path.exists(path))
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[1] == "True" and out[0].endswith(".ttf") and not os.path.exists(out[0])


def test_figures_without_pdf(small_study, written, tmp_path):
    """pdf=False: the same SVG files and report, no PDF; an earlier run's PDFs go."""
    out, _ = written
    again = tmp_path / "again"
    shutil.copytree(out, again)
    write_study(small_study, again, pdf=False)
    files = sorted(os.listdir(again / "figures"))
    assert files == sorted(f for f in os.listdir(out / "figures") if f.endswith(".svg"))
    assert len(files) == N_FIGURES
    for f in files:
        assert (again / "figures" / f).read_bytes() == (out / "figures" / f).read_bytes()
    page = (again / "report.html").read_text()
    assert "in <code>figures/</code> as SVG." in page and "and PDF" not in page
    assert "as SVG and PDF." in (out / "report.html").read_text()


def test_html_contents_and_shared_caption(written, small_study):
    """A contents list links every section heading (and every metric figure) by an anchor
    that exists once; the conventions of the metric figures are stated once, not under
    each of them."""
    page = (written[0] / "report.html").read_text()
    nav = re.search(r"<nav>(.*?)</nav>", page, flags=re.S)
    assert nav and page.index("<nav>") < page.index("<h2")
    links = re.findall(r"href='#([^']+)'", nav.group(1))
    headings = re.findall(r"<h2 id='([^']+)'>", page)
    assert len(headings) == 5 and headings == [a for a in links if a.startswith("sec-")]
    assert [a for a in links if a.startswith("metric-")] == [
        f"metric-{m}" for m in small_study.metrics]
    for anchor in links:
        assert len(re.findall(rf"\bid='{re.escape(anchor)}'", page)) == 1, anchor
    for phrase in ("whiskers: 95 % confidence interval of the mean (Student t, 2 df)",
                   "(b) Mean per-fold difference from the ordinal ranking",
                   "filled marks: significant"):
        assert page.count(phrase) == 1, phrase
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, flags=re.S)
    metric_captions = [c for c in captions if "lower is better" in c
                       or "higher is better" in c]
    assert len(metric_captions) == len(small_study.metrics)
    assert all(len(c) < 200 for c in metric_captions)


def test_html_is_self_contained_with_one_svg_per_figure(written):
    page = (written[0] / "report.html").read_text()
    assert page.count("<svg ") == N_FIGURES
    assert page.count("<figcaption>") == N_FIGURES
    for k in range(1, N_FIGURES + 1):
        assert f"<strong>Figure {k}. " in page
    ids = re.findall(r'\bid=["\']([^"\']+)', page)
    assert len(ids) == len(set(ids)) > 500  # the figures' ids are prefixed apart
    refs = re.findall(r'(?:href|src)=["\']([^"\']*)', page) + re.findall(r"url\(([^)]*)",
                                                                        page)
    assert refs and all(r.startswith("#") for r in refs), refs  # nothing fetched
    assert "<script" not in page and "<img" not in page and "<link" not in page
    for phrase in ("Average precision, higher is better", "One-error, lower is better",
                   "95 % confidence interval of the mean (Student t, 2 df)",
                   "paired two-tailed t-test", "Critical-difference diagram"):
        assert phrase in page


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

PROBE = """<script>window.addEventListener('load', () => {
 const svgs = [...document.querySelectorAll('figure svg')];
 const drawn = svgs.filter(s => s.getBoundingClientRect().width > 300
                                && s.querySelectorAll('path, use').length > 10);
 const outside = [];
 for (const s of svgs) {
   const r = s.getBoundingClientRect();
   for (const t of s.querySelectorAll('text')) {
     const b = t.getBoundingClientRect();
     if (b.width === 0 || b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1
         || b.bottom > r.bottom + 1) outside.push(t.textContent);
   }
 }
 const held = document.querySelectorAll('.placeholder').length;
 document.body.insertAdjacentHTML('beforeend', '<div id="probe">' + drawn.length + '/'
   + svgs.length + ' outside=' + JSON.stringify(outside) + ' placeholders=' + held + '</div>');
});</script>"""


def _chromium(*args):
    if CHROMIUM is None:
        raise RuntimeError("Debian's chromium is needed for the report test (.ci/run installs "
                           "it: apt-get install chromium)")
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", *args], capture_output=True, text=True,
                          timeout=120)


def _probe(page, tmp_path):
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _chromium("--virtual-time-budget=10000", "--dump-dom", probed.as_uri()).stdout
    return re.search(r'<div id="probe">(.*?)</div>', dom).group(1)


def _screenshot(report, tmp_path, height):
    import matplotlib.image
    shot = tmp_path / "shot.png"
    _chromium(f"--window-size=1000,{height}", f"--screenshot={shot}", report.as_uri())
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (height, 1000)
    return pixels


def test_report_renders_in_headless_chromium(written, tmp_path):
    """The browser lays out all figures as SVG (wide, with drawn paths), no label falls
    outside its figure, and the screenshot shows coloured marks."""
    report = written[0] / "report.html"
    assert _probe(report.read_text(), tmp_path) == f"{N_FIGURES}/{N_FIGURES} outside=[] " \
                                                    "placeholders=0"
    pixels = _screenshot(report, tmp_path, 2400)
    coloured = (pixels.max(axis=2) - pixels.min(axis=2)) > 0.3  # marks, not text or white
    assert coloured.mean() > 0.002
    assert (pixels.max(axis=2) < 0.3).mean() > 0.005  # dark text and lines


def test_report_without_matplotlib(written, tmp_path):
    """matplotlib made unimportable in a subprocess: the set is written without figures,
    the page keeps every caption and table and says where each figure would be, and the
    browser renders it."""
    out = tmp_path / "out"
    script = textwrap.dedent(f"""
        import sys
        sys.modules["matplotlib"] = None  # import matplotlib -> ImportError
        from fastrank.report import write_study
        from fastrank.study import StudyResult
        result = StudyResult.from_json(open({str(written[0] / "results.json")!r}).read())
        print(write_study(result, {str(out)!r}))
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(out)) == ["report.html", "results.json", "tables.md", "tables.tex"]
    page = (out / "report.html").read_text()
    assert "Figures omitted: matplotlib is not installed" in page
    assert page.count("would be here: drawing it needs matplotlib") == N_FIGURES
    assert page.count("<figcaption>") == N_FIGURES and "<svg" not in page
    assert "Ordinal against the other ranking types (paired t-tests)" in page
    assert _probe(page, tmp_path) == f"0/0 outside=[] placeholders={N_FIGURES + 1}"
    pixels = _screenshot(out / "report.html", tmp_path, 1200)
    assert (pixels.max(axis=2) < 0.3).mean() > 0.005  # the text is there


def test_terminal_summary(small_study):
    """Means ± sd of the main metrics (numbers from NumPy, * from scipy.stats.ttest_rel),
    the partial orders of every metric, and the report line last."""
    r = small_study
    text = terminal_summary(r)
    assert text.endswith("\n\n" + REPORT_LINE)
    assert terminal_summary(r, report_path="out/report.html").endswith(
        "\nReport: out/report.html")
    lines = text.splitlines()
    for c, name in zip(r.classifiers, ["kNN", "ML-kNN", "VG-RAM WNN", "VG-RAM WNN-COR"]):
        head = lines.index(f"{name}: mean ± sd over folds")
        assert lines[head + 1].split() == ["metric", "Ordinal", "Dense", "Standard",
                                           "Modified"]
        for k, m in enumerate(MAIN_METRICS):
            row = lines[head + 3 + k]
            assert row.startswith(METRIC_NAMES[m])
            cells = re.findall(r"(\d+\.\d{4}) ± (\d+\.\d{4})(\*?)", row)
            for t, (mean, sd, star) in zip(r.ties, cells):
                v = r.fold_values(c, t, m)
                assert float(mean) == pytest.approx(v.mean(), abs=5e-5)
                assert float(sd) == pytest.approx(np.std(v, ddof=1), abs=5e-5)
                p = sps.ttest_rel(r.fold_values(c, "ordinal", m), v).pvalue \
                    if t != "ordinal" else 1.0
                assert (star == "*") == bool(p < 0.05)
            assert len(cells) == 4
    head = lines.index("Ordinal against the other ranking types (paired t-tests)")
    for k, m in enumerate(METRIC_KEYS):
        row = lines[head + 3 + k]
        assert row.startswith(METRIC_NAMES[m])
        for c in r.classifiers:
            assert r.partial_order(c, m) in row
    assert "mean ± sd over 3 folds (* differs from ordinal: paired t-test, α = 0.05)" in text


#: what the outputs must not show: the thesis' table numbers, its Portuguese names and its
#: letter P (for "Padrão") of the standard ranking
_THESIS_JARGON = re.compile(r"Tables? \d|\(thesis\)|Padr|Aleat|Denso|Modificado|\bP\b")


def test_outputs_use_plain_names(small_study, written):
    """No thesis-internal table numbers or Portuguese words in the terminal summary or the
    report files; the standard ranking's letter is S in the partial orders and the
    recommendation, and each letter is explained where it is used."""
    out, _ = written
    html = (out / "report.html").read_text()
    texts = {"terminal": terminal_summary(small_study),
             "tables.md": (out / "tables.md").read_text(),
             "tables.tex": (out / "tables.tex").read_text(),
             "report.html": re.sub(r"<svg.*?</svg>", "", html, flags=re.S)}
    for name, text in texts.items():
        assert not _THESIS_JARGON.search(text), (name, _THESIS_JARGON.search(text))
    orders = [small_study.partial_order(c, m) for c in small_study.classifiers
              for m in METRIC_KEYS]
    assert set("".join(orders)) <= set("ODSM ≺≻≡|;")
    assert any("S" in o for o in orders)
    recommended = {small_study.recommendation(m) for m in METRIC_KEYS}
    assert set("".join(recommended)) <= set("ODSM/") | set("none")
    for name in ("terminal", "tables.md", "report.html"):
        assert "S = Standard" in texts[name], name


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "fastrank", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_cli_study_end_to_end(tmp_path):
    out = tmp_path / "study"
    proc = run_cli("study", *SMALL_ARGS, "--seed", "5", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "mean ± sd" in proc.stdout and proc.stdout.strip().splitlines()[-1] == \
        f"Report: {out / 'report.html'}"
    assert "[8/8] VG-RAM WNN-COR: fold 2/2" in proc.stderr
    # after the last fold, each part of the report is announced before it is made
    err = proc.stderr.splitlines()
    report = err[next(i for i, line in enumerate(err) if line.startswith("[8/8]")) + 1:]
    assert report == [f"report: figure {k}/{N_FIGURES} ({name})" for k, name in
                      enumerate(["ties", *(f"metric-{m}" for m in METRIC_KEYS),
                                 "cd-classifiers", "cd-ranking-types"], 1)] + [
        "report: tables (Markdown, LaTeX, HTML)",
        f"report: writing {4 + 2 * N_FIGURES} files into {out}"]
    result = json.loads((out / "results.json").read_text())
    assert result["random_state"] == 5 and result["folds"] == 2
    assert result["params"]["vgram"] == {"n_neurons": 8, "n_synapses": 32}
    assert (out / "report.html").stat().st_size > 10_000


@pytest.mark.parametrize("args, message", [
    (["--dataset", "no-such-set"], "unknown Mulan data set 'no-such-set'"),  # from fetch
    (["--dataset", "missing.arff"], "no such file: missing.arff"),
    (["--classifiers", "knn,svm"], "unknown classifier='svm'"),
    (["--set", "vgram.n_neurons"], "--set expects CLASSIFIER.PARAM=VALUE"),
    (["--classifiers", "knn", "--set", "vgram.n_neurons=4"], "not in the study"),
    (["--set", "knn.k=-3"], "k"),
])
def test_cli_study_errors_are_one_line_and_write_nothing(tmp_path, args, message):
    out = tmp_path / "study"
    proc = run_cli("study", "--folds", "2", *args, "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.startswith("fastrank study: error:") and message in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert not out.exists()


def test_cli_study_on_a_corrupt_arff(tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a numeric\n@data\n1,2,3\n")
    proc = run_cli("study", "--dataset", str(bad), "--labels", "1", "--out",
                   str(tmp_path / "o"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "bad.arff" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_cli_evaluate_matches_the_library(tmp_path):
    rng = np.random.default_rng(0)
    y = (rng.random((30, 6)) < 0.3).astype(np.uint8)
    s = np.round(rng.random((30, 6)) * 4) / 4
    np.save(tmp_path / "y.npy", y)
    np.savetxt(tmp_path / "s.csv", s, delimiter=",")
    proc = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                   str(tmp_path / "s.csv"), "--json", "--seed", "4")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(
        evaluate(y, s, random_state=4).to_dict()))
    table = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                    str(tmp_path / "s.csv"), "--ties", "modified")
    assert table.returncode == 0 and "ranking_loss" in table.stdout


def test_cli_evaluate_shape_mismatch(tmp_path):
    np.save(tmp_path / "y.npy", np.zeros((3, 4), dtype=np.uint8))
    np.save(tmp_path / "s.npy", np.zeros((3, 5)))
    proc = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                   str(tmp_path / "s.npy"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "--scores is 3 x 5 but --truth is 3 x 4" in proc.stderr


def test_cli_datasets():
    assert main(["datasets"]) == 0
    proc = run_cli("datasets", "yeast")
    assert proc.returncode == 0
    assert "documents: 2417" in proc.stdout and "labels: 14" in proc.stdout


def test_cli_evaluate_top_k_cutoff_and_spaced_ties(tmp_path):
    rng = np.random.default_rng(1)
    y = (rng.random((20, 5)) < 0.4).astype(np.uint8)
    s = np.round(rng.random((20, 5)) * 3) / 3
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "s.npy", s)
    proc = run_cli("evaluate", "--truth", str(tmp_path / "y.npy"), "--scores",
                   str(tmp_path / "s.npy"), "--cutoff", "2", "--ties", "dense, modified",
                   "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(json.dumps(
        evaluate(y, s, ties=("dense", "modified"), cutoff=2).to_dict()))


def test_report_without_ordinal_and_with_two_classifiers(small_study):
    """No ordinal ranking: no t-tests, one panel per metric figure, no significance table;
    two classifiers and two ranking types: no critical-difference diagram."""
    r = small_study
    keep = [r.ties.index(t) for t in ("dense", "modified")]
    sub = StudyResult(dataset=r.dataset, classifiers=("knn", "vgram"), ties=("dense", "modified"),
                      folds=r.folds, random_state=r.random_state, cutoff=r.cutoff,
                      params={c: r.params[c] for c in ("knn", "vgram")},
                      values={c: r.values[c][keep] for c in ("knn", "vgram")},
                      tie_stats={c: r.tie_stats[c] for c in ("knn", "vgram")})
    specs = figure_specs(sub)
    assert [s.name for s in specs] == ["ties"] + [f"metric-{m}" for m in METRIC_KEYS]
    fig = _drawn(specs[1])
    assert len(fig.axes) == 1 and not fig.axes[0].texts
    svg, pdf = specs[1].render()
    assert svg.count("<text") > 10 and pdf.startswith(b"%PDF-")
    page = render_html(sub, figures=[(s, None, None) for s in specs])
    assert page.count("<figcaption>") == len(specs) and "paired t-tests" not in page
    assert "(b) Mean per-fold difference" not in page
    text = terminal_summary(sub)
    assert "paired t-tests" not in text and "differs from ordinal" not in text
    assert "kNN: mean ± sd over folds" in text and text.endswith(REPORT_LINE)


def test_dollar_signs_in_names_are_drawn_as_they_are(small_study):
    """A user's classifier names reach matplotlib as text: "$...$" is no math expression
    (an invalid one used to abort the report after the whole study had run)."""
    r = small_study
    names = {"knn": "price $5 or $6", "mlknn": r"cost $\alpha_{\x}$", "vgram": "v"}
    sub = StudyResult(dataset=r.dataset, classifiers=tuple(names.values()), ties=r.ties,
                      folds=r.folds, random_state=r.random_state, cutoff=r.cutoff,
                      params={names[c]: r.params[c] for c in names},
                      values={names[c]: r.values[c] for c in names},
                      tie_stats={names[c]: r.tie_stats[c] for c in names})
    svgs = [spec.render()[0] for spec in figure_specs(sub)]
    assert all(">$5 or $6<" in svg for svg in svgs[:2])
    assert any(r"$\alpha_{\x}$" in svg for svg in svgs)


# ---- LaTeX --------------------------------------------------------------------------------

def test_latex_tables_match_results_json(written, small_study):
    from latex_check import check_latex_structure, latex_rows

    out, _ = written
    tex = (out / "tables.tex").read_text()
    check_latex_structure(tex)
    saved = json.loads((out / "results.json").read_text())
    tables = latex_rows(tex)
    assert len(tables) == len(saved["ties"])
    for t, rows in zip(saved["ties"], tables):
        assert len(rows) == len(saved["metrics"])
        for m, row in zip(saved["metrics"], rows):
            assert row[0] == metric_name(m).replace("_", r"\_")
            means = []
            for c, cell in zip(saved["classifiers"], row[1:]):
                v = np.array(saved["values"][c][t][m])
                found = re.fullmatch(r"(\\textbf\{)?([0-9.]+)\}? \$\\pm\$ ([0-9.]+)"
                                     r"(\$\^\{\\dagger\}\$)?", cell)
                assert found, cell
                assert found.group(2) == f"{v.mean():.4f}"
                assert found.group(3) == f"{v.std(ddof=1):.4f}"
                ordinal = np.array(saved["values"][c]["ordinal"][m])
                significant = t != "ordinal" and sps.ttest_rel(ordinal, v).pvalue < 0.05
                assert bool(found.group(4)) == bool(significant), (t, m, c)
                means.append((v.mean(), bool(found.group(1))))
            best = (min if m in LOWER_IS_BETTER else max)(mu for mu, _ in means)
            assert [b for _, b in means] == [mu == best for mu, _ in means]


def test_write_study_builds_the_tables_once(small_study, tmp_path, monkeypatch):
    """tables.md and report.html render the same list of tables, built once."""
    from fastrank.report import _figures, _write
    built = []
    real = _write.tables
    monkeypatch.setattr(_write, "tables",
                        lambda *args, **kw: built.append(args) or real(*args, **kw))
    monkeypatch.setattr(_figures, "_have_matplotlib", lambda: False)
    write_study(small_study, tmp_path, alpha=0.1)
    assert built == [(small_study, 0.1)]
    md = (tmp_path / "tables.md").read_text()
    assert md == render_markdown(small_study, 0.1, real(small_study, 0.1))
    assert "α = 0.1" in md


def test_latex_head_names_its_source_and_content(small_study):
    from fastrank.report import render_latex
    head = render_latex(small_study).splitlines()[:2]
    assert head == ["% fastrank tables; needs \\usepackage{booktabs} in the preamble.",
                    "% Generated from results.json: mean +- sd over the folds, best value "
                    "per row in bold."]


def test_cell_flags_are_marked_in_each_format():
    """One table of cells, each format marking best, significant and estimated its own way."""
    from fastrank.report import Cell, Table
    from fastrank.report._latex import _latex
    table = Table("T", ["metric", "a|b"],
                  [["x_1", Cell("0.5000", "0.0100", best=True)],
                   ["y", Cell("0.2500", "0.0200", significant=True, estimated=True)],
                   ["z", Cell("3.00", best=True, significant=True)]], note="N", mark="†")
    assert table.markdown().splitlines()[4:] == [
        "| metric | a\\|b |", "|---|---|", "| x_1 | **0.5000** ± 0.0100 |",
        "| y | ~0.2500 ± 0.0200† |", "| z | **3.00**† |"]
    assert ("<tr><td>x_1</td><td><b>0.5000</b> ± 0.0100</td></tr>"
            "<tr><td>y</td><td>~0.2500 ± 0.0200†</td></tr>"
            "<tr><td>z</td><td><b>3.00</b>†</td></tr>") in table.html()
    assert table.text().splitlines()[3:6] == [
        "x_1     0.5000 ± 0.0100", "y       ~0.2500 ± 0.0200†", "z       3.00†"]
    tex = _latex(table, "tab:t").splitlines()
    assert tex[3] == r"\caption{T. N}"
    assert tex[7:12] == [r"Metric & a|b \\", r"\midrule",  # the stub head capitalised
                         r"x\_1 & \textbf{0.5000} $\pm$ 0.0100 \\",
                         r"y & $\sim$0.2500 $\pm$ 0.0200$^{\dagger}$ \\",
                         r"z & \textbf{3.00}$^{\dagger}$ \\"]


def test_tex_escape():
    from fastrank.report import tex_escape
    assert tex_escape("a_b & 50% {x} #1 $ ~ ^ \\") == (
        r"a\_b \& 50\% \{x\} \#1 \$ \textasciitilde{} \textasciicircum{} \textbackslash{}")


def test_the_report_renders_comparisons_the_result_computed_once(small_study, monkeypatch):
    """Tables, Markdown, LaTeX, the terminal summary, the figures and the HTML page share
    one t-test per classifier x metric x ranking type and one Friedman test per diagram:
    the result computes, the report formats."""
    import dataclasses

    from fastrank import report
    from fastrank.stats import friedman, paired_ttest
    from fastrank.study import _result
    result = dataclasses.replace(small_study)  # a copy with nothing computed yet
    tests, ranks = [], []
    monkeypatch.setattr(_result, "paired_ttest",
                        lambda a, b, alpha: tests.append(alpha) or paired_ttest(a, b, alpha))
    monkeypatch.setattr(_result, "friedman",
                        lambda table, **kw: ranks.append(table.shape) or friedman(table, **kw))
    built = report.tables(result)
    report.render_markdown(result, built=built)
    report.render_latex(result)
    report.terminal_summary(result)
    specs = report.figure_specs(result)
    report.render_html(result, figures=[(s, None, None) for s in specs], built=built)
    next(s for s in specs if s.name == "metric-coverage").render()  # drawn from the same
    others = len(result.ties) - 1
    # the t tables use every classifier x metric x type: each computed exactly once
    assert len(tests) == len(result.classifiers) * len(result.metrics) * others
    assert ranks == [(len(result.metrics), 4), (4 * len(result.metrics), len(result.ties))]


def test_study_friedman_ranks_the_favourable_means(small_study):
    """The Friedman comparisons of a study: ranks of each block's means, 1 for the most
    favourable (lowest for a loss), as scipy.stats.rankdata gives them."""
    import scipy.stats as ss
    losses = {"one_error", "coverage", "ranking_loss", "hamming_loss"}
    r = small_study
    sign = np.array([1.0 if m in losses else -1.0 for m in r.metrics])
    means = np.array([[np.mean(r.values[c][r.ties.index("modified"), i]) for c in r.classifiers]
                      for i in range(len(r.metrics))])
    expected = np.array([ss.rankdata(row * s) for row, s in zip(means, sign)]).mean(axis=0)
    res = r.friedman("classifiers")
    np.testing.assert_allclose(res.mean_ranks, expected, rtol=1e-12)
    assert r.friedman("classifiers") is res and r.friedman("classifiers", 0.1) is not res
    by_type = np.array([[np.mean(r.values[c][t, i]) * s for t in range(len(r.ties))]
                        for c in r.classifiers for i, s in enumerate(sign)])
    np.testing.assert_allclose(r.friedman("ties").mean_ranks,
                               np.array([ss.rankdata(row) for row in by_type]).mean(axis=0))
    with pytest.raises(ValueError, match="read-only"):
        res.mean_ranks[0] = 0
    with pytest.raises(ValueError, match="treatments"):
        r.friedman("folds")
