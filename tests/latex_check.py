"""A parser-level check of the LaTeX tables the reports write (no TeX installation is
needed): balanced braces, math and environments, booktabs rules, cells per row."""
import re


def check_latex_structure(tex):
    """A parser-level check of LaTeX source: balanced braces, inline math and
    environments, booktabs rules in order in every tabular, the same number of cells in
    every row as the column specification has columns."""
    assert "\\usepackage{booktabs}" in tex.splitlines()[0]  # the header comment says so
    body = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))
    depth = 0
    for ch in body.replace("\\{", "").replace("\\}", ""):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    for line in body.splitlines():  # inline math opened and closed on its line
        assert line.replace("\\$", "").count("$") % 2 == 0, line
    stack = []
    for kind, env in re.findall(r"\\(begin|end)\{(\w+)\}", body):
        if kind == "begin":
            stack.append(env)
        else:
            assert stack.pop() == env
    assert not stack
    for tab in body.split(r"\begin{tabular}")[1:]:
        tab = tab.split(r"\end{tabular}")[0]
        spec = re.match(r"\{([lrc]+)\}", tab).group(1)
        assert tab.index(r"\toprule") < tab.index(r"\midrule") < tab.index(r"\bottomrule")
        rows = [r for r in tab.split("\n") if r.endswith("\\\\")]
        assert rows
        for r in rows:
            assert len(re.split(r"(?<!\\)&", r)) == len(spec), r


def latex_rows(tex):
    """Each tabular's rows as lists of cells (between \\midrule and \\bottomrule)."""
    out = []
    for body in tex.split(r"\begin{tabular}")[1:]:
        rows = body.split(r"\midrule")[1].split(r"\bottomrule")[0].strip().splitlines()
        out.append([[c.strip() for c in r.rstrip("\\ ").split(" & ")] for r in rows])
    return out
