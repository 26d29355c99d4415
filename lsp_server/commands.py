"""The server's command-line commands: `serve`, `demo`, `bench-lsp` and `settings-schema`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import BinaryIO

from inference.cli import RUNTIMES, add_vllm_arguments
from inference.packs import DEFAULT_MODEL


def register(commands: argparse._SubParsersAction) -> None:
    """Add the server's subcommands to the `prewrite` parser."""
    serve = commands.add_parser("serve", help="run the language server (stdio unless --tcp)")
    serve.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (default)")
    serve.add_argument("--tcp", type=int, metavar="PORT", help="listen on a TCP port instead")
    serve.add_argument("--host", default="127.0.0.1", help="TCP address (default 127.0.0.1)")
    serve.add_argument("--log-level", default="WARNING", help="server log level on stderr")
    serve.set_defaults(handler=serve_handler)

    demo = commands.add_parser(
        "demo", help="type a docstring into the real server and time the answer at trigger"
    )
    demo.add_argument("--model", default=DEFAULT_MODEL, help="pack name, folder or hub id")
    demo.add_argument("--sessions", type=int, default=3, help="typed sessions to time")
    demo.add_argument("--pause-ms", type=int, default=300, help="pause before the trigger")
    demo.add_argument("--keystroke-ms", type=int, default=100, help="time between keystrokes")
    demo.add_argument("--max-tokens", type=int, default=128)
    demo.add_argument("--acceptance", choices=["exact", "threshold", "sample"], default="exact")
    demo.add_argument("--prompt-format", choices=["auto", "raw", "fim", "chat"], default="auto")
    demo.add_argument("--runtime", choices=RUNTIMES, default="auto")
    add_vllm_arguments(demo)
    demo.add_argument("--device", default="auto")
    demo.add_argument("--threads", type=int, default=None)
    demo.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    demo.set_defaults(handler=_demo)

    schema = commands.add_parser(
        "settings-schema", help="print the server settings as JSON schema (for editor clients)"
    )
    schema.set_defaults(handler=_settings_schema)


def serve_handler(args: argparse.Namespace) -> int:
    """Run the language server until the client exits it (SIGTERM keeps its default)."""
    from lsp_server.server import create_server

    # Editors show a server's stderr as errors (VS Code: `[error]` lines): no progress bars
    # there while a model loads; `prewrite/status` tells the client about loading.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_late_cancel_filter)
    server = create_server()
    if args.tcp is not None:
        server.start_tcp(args.host, args.tcp)
        return 0
    stdin, stdout = _protocol_streams()
    server.start_io(stdin, stdout)
    return 0


def _late_cancel_filter(record: logging.LogRecord) -> bool:
    """Drop pygls's warning for a $/cancelRequest that came after its request was answered.

    VS Code cancels every automatic inline request the next keystroke makes stale, so most
    cancels arrive late; the warning is noise that VS Code shows as `[error]` lines.
    """
    return not record.getMessage().startswith("Cancel notification for unknown message id")


def _protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """stdin and a private copy of stdout for JSON-RPC; fd 1 then points at stderr.

    Anything else that prints (a library's progress bar, a stray print) lands on stderr
    instead of corrupting the protocol stream.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return sys.stdin.buffer, os.fdopen(protocol_fd, "wb")


def _demo(args: argparse.Namespace) -> int:
    from lsp_server.demo import DemoOptions, run_demo

    options = DemoOptions(
        model=args.model,
        sessions=args.sessions,
        pause_ms=args.pause_ms,
        keystroke_ms=args.keystroke_ms,
        max_tokens=args.max_tokens,
        acceptance=args.acceptance,
        prompt_format=args.prompt_format,
        runtime=args.runtime,
        device=args.device,
        threads=args.threads,
        vllm_url=args.vllm_url,
        vllm_model=args.vllm_model,
        json_path=args.json,
    )
    return run_demo(options)


def _settings_schema(args: argparse.Namespace) -> int:
    from lsp_server.config import settings_schema

    print(json.dumps(settings_schema(), indent=2))
    return 0
