"""The `prewrite` command: dispatches to the engine's and the server's subcommands."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from inference import cli as engine_cli
from inference.adapt import cli as adapt_cli
from inference.bench import cli as bench_cli
from inference.drafter import cli as drafter_cli
from inference.errors import PrewriteError
from inference.gpucheck import cli as gpucheck_cli
from lsp_server import commands as server_commands


def build_parser() -> argparse.ArgumentParser:
    """The full `prewrite` argument parser."""
    parser = argparse.ArgumentParser(prog="prewrite", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    engine_cli.register(commands)
    server_commands.register(commands)
    bench_cli.register(commands)
    adapt_cli.register(commands)
    drafter_cli.register(commands)
    gpucheck_cli.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `prewrite` console script."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    args = build_parser().parse_args(argv)
    if args.handler is not server_commands.serve_handler:
        stop_on_sigterm()
    try:
        return int(args.handler(args) or 0)
    except PrewriteError as exc:
        print(f"prewrite: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("prewrite: interrupted", file=sys.stderr)
        return 130


def stop_on_sigterm() -> None:
    """Make SIGTERM (`timeout`, `kill`, a job scheduler) stop a command the way Ctrl-C does.

    Long commands (bench, training) then keep what they finished. Background jobs of a
    non-interactive shell start with SIGINT ignored, so SIGTERM is their only graceful stop.
    The server is left alone: its engine thread must not be interrupted mid-forward.
    """

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


if __name__ == "__main__":
    sys.exit(main())
