"""The command line (``fastrank``, ``python -m fastrank``): input (``_input``), the
commands (``_commands``, ``_study``), interruption (``_threads``), the parser (``_parser``)
and the program (``_main``)."""
from ._main import main
from ._parser import build_parser

__all__ = ["build_parser", "main"]
