"""`python -m inference.lab.gpucheck`: the check without importing the language server (pygls).

For a GPU machine with torch and transformers but not the whole of prewrite's dependencies:
every step runs in process except the bench-lsp sessions, which need the server's.
"""

from __future__ import annotations

import argparse
import sys

from inference.errors import PrewriteError
from inference.lab.gpucheck.cli import DESCRIPTION, add_arguments, run


def main(argv: list[str] | None = None) -> int:
    """Parse the `prewrite gpu-check` options and run it."""
    parser = argparse.ArgumentParser(
        prog="python -m inference.lab.gpucheck", description=DESCRIPTION
    )
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except PrewriteError as exc:  # a CUDA device asked for where there is none, say
        print(f"gpu-check: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
