"""The `prewrite` command: dispatches to the engine's and the server's subcommands."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from inference import cli as engine_cli
from inference.errors import PrewriteError
from lsp_server import commands as server_commands

# The lab's commands and the modules that register them. A lab module is imported only when
# its command (or the whole help) is asked for: `prewrite serve` never loads the lab.
LAB_COMMANDS = {
    "bench": "inference.lab.bench.cli",
    "adapt": "inference.lab.adapt.cli",
    "drafter": "inference.lab.drafter.cli",
    "gpu-check": "inference.lab.gpucheck.cli",
    "bench-lsp": "lsp_server.lab.benchlsp.cli",
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `prewrite` parser: every command, or for `argv` only the lab command it names."""
    parser = argparse.ArgumentParser(prog="prewrite", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    engine_cli.register(commands)
    server_commands.register(commands)
    named = next((arg for arg in argv or () if not arg.startswith("-")), None)
    if argv is not None and named in commands.choices:
        return parser  # a product command: the lab stays unloaded
    for name, module in LAB_COMMANDS.items():
        if argv is None or named == name or named not in LAB_COMMANDS:
            importlib.import_module(module).register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `prewrite` console script."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
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
