"""The program: parse the arguments, run the command, turn errors and signals into one line
and an exit code."""
import signal
import sys

from ._parser import build_parser
from ._threads import _closed_pipe, _stop, _terminate, _Terminated


def main(argv=None):
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # the command's own usage, not the top-level one
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    previous = signal.signal(signal.SIGTERM, _terminate) \
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else None
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError, KeyError, ImportError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _closed_pipe()
        message = " ".join(str(exc).split())  # one line, whatever the exception held
        print(f"fastrank {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _stop(args.command, "interrupted", 130, own_process=argv is None)
    except _Terminated:
        return _stop(args.command, "terminated", 143, own_process=argv is None)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
