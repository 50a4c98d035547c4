"""Command line: ``fastrank <command>`` (also ``python -m fastrank``).

Commands: ``study`` (the whole cross-validated tie study), ``evaluate`` (the 19 metrics of a
user's own belief matrix), ``rank`` (rank a belief matrix; without a file, a worked example
with a tie, the thesis' Fig. 2.1), ``datasets`` (list, fetch or describe data sets),
``config`` (versions, build, CPU and the kernels' instruction-set paths). Errors in the
input end the program with one readable line on stderr and exit code 2, leaving no partial
output file. Input files must be regular files (``-`` is standard input); a text line may
hold :data:`fastrank._cli._input.MAX_LINE` characters, and the compressed members of a
``.npz`` file may inflate to :data:`fastrank._cli._input.INFLATE_FACTOR` times the file's
size or :data:`fastrank._cli._input.INFLATE_FLOOR` bytes, whichever is
larger (checked before anything is read). Ctrl-C and SIGTERM end it at once with one line
and exit code 130 / 143 (``study`` computes in a worker thread, so a long kernel call does
not delay them), a closed pipe quietly with 141; output files are only ever replaced whole.
"""
import sys

from ._cli import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
