"""Every Python snippet of the README runs as written, and prints what it says it prints."""
import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_has_snippets():
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_snippet_runs(index):
    code = SNIPPETS[index]
    out = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README snippet {index}", "exec"), namespace)
    # a trailing "# value" comment on a line whose expression is printed or evaluated
    for line in code.splitlines():
        m = re.match(r"print\((.*)\)\s+# ([-\d.]+):", line)
        if m:
            assert str(eval(m.group(1), namespace)) == m.group(2), line
        m = re.match(r"(fastrank\.rank\(.*\))\s+# (\[\[.*\]\])$", line)
        if m:
            assert eval(m.group(1), namespace).tolist() == eval(m.group(2)), line
