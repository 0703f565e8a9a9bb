"""``python -m torchdevlint.runtime [--kind cuda|mps] [--count N] script.py [args...]``

Runs a script (a training script's first steps, say) as on a machine with an accelerator:
the script sees ``torch.cuda.is_available()`` and takes its GPU path, and a device bug stops
it with the error a real GPU raises, its traceback ending in the script's own line.
"""
from __future__ import annotations

import argparse
import runpy
import sys
import traceback


def parse(argv):
    parser = argparse.ArgumentParser(prog="python -m torchdevlint.runtime",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--kind", choices=("cuda", "mps"), default="cuda",
                        help="the accelerator to pretend (default cuda)")
    parser.add_argument("--count", type=int, default=1, help="how many of them (default 1)")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    options = parser.parse_args(argv)
    if options.count < 1:
        parser.error(f"--count: expected at least 1, got {options.count}")
    return options


def main(argv=None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    if not __import__("os").path.isfile(options.script):
        print(f"torchdevlint.runtime: no such script: {options.script}", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torchdevlint.runtime: torch is not installed", file=sys.stderr)
        return 2
    from torchdevlint.runtime._fake import fake_accelerator
    from torchdevlint.runtime._traceback import prune_traceback

    saved_argv = sys.argv
    sys.argv = [options.script, *options.args]
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(options.script)))
    try:
        with fake_accelerator(options.kind, options.count):
            runpy.run_path(options.script, run_name="__main__")
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except FileNotFoundError as error:
        if getattr(error, "filename", None) == options.script:
            print(f"torchdevlint.runtime: no such script: {options.script}", file=sys.stderr)
            return 2
        _report(prune_traceback(error))
        return 1
    except Exception as error:  # the script's own failure: show it as Python would
        _report(prune_traceback(error))
        return 1
    finally:
        sys.argv = saved_argv
    return 0


def _report(error):
    # runpy's and this module's own frames come first: start at the script's
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.endswith("runpy.py") and frame.filename != __file__]
    print("Traceback (most recent call last):", file=sys.stderr)
    print("".join(traceback.format_list(frames)), end="", file=sys.stderr)
    print("".join(traceback.format_exception_only(type(error), error)), end="", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
