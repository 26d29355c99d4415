"""The server's command-line commands: `serve`, `demo`, `bench-lsp` and `settings-schema`."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from inference.cli import RUNTIMES, add_vllm_arguments
from inference.packs import DEFAULT_MODEL
from lsp_server.benchlsp.typist import PROFILES


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

    bench = commands.add_parser(
        "bench-lsp",
        help="type real sessions into the real server and time the answer at the trigger",
        description="The editor-protocol benchmark: sessions typed key by key with human "
        "timing, a pause, then the automatic inline request; trigger to answer against the "
        "server's conventional request and llama-cpp-python's (see docs/server.md).",
    )
    bench.add_argument("--model", default=DEFAULT_MODEL, help="pack name, folder or file")
    bench.add_argument("--runtime", choices=RUNTIMES, default="auto")
    add_vllm_arguments(bench)
    bench.add_argument("--threads", type=int, default=None)
    bench.add_argument("--prompt-format", choices=["auto", "raw", "fim", "chat"], default="auto")
    bench.add_argument("--max-tokens", type=int, default=256)
    bench.add_argument("--sessions", type=int, default=40, help="how many of the built-in ones")
    bench.add_argument("--sessions-file", type=Path, help="JSONL of sessions instead")
    bench.add_argument(
        "--kind",
        choices=("docstring", "comment", "respec"),
        default="docstring",
        help="the built-in sessions: a new function's spec, a comment typed in a body, or a "
        "sentence added to the docstring of a function that has a body (edit to offer)",
    )
    bench.add_argument("--write-sessions", type=Path, help="write the sessions as JSONL and stop")
    bench.add_argument("--cps", type=_numbers(float), default=(12.0, 6.0),
                       help="typing speeds, characters a second (default 12,6)")  # fmt: skip
    bench.add_argument("--pause-ms", type=_numbers(int), default=(1000, 300),
                       help="pauses before the trigger (default 1000,300)")  # fmt: skip
    bench.add_argument("--typist", type=_choices(PROFILES), default=PROFILES,
                       help="pauses: steady (jitter only) and/or thinking (longer at word and "
                       "sentence ends and line breaks); default steady,thinking")  # fmt: skip
    bench.add_argument("--typists", type=_numbers(int), default=(1,),
                       help="documents typed at once, e.g. 1,4,8 (default 1)")  # fmt: skip
    bench.add_argument("--editor", choices=["vscode", "neovim"], default="vscode",
                       help="vscode: an automatic request after every keystroke, cancelled by "
                       "the next; neovim: requests only at the trigger")  # fmt: skip
    bench.add_argument("--debounce-ms", type=int, default=50)
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--no-llamacpp", action="store_true", help="skip the llama.cpp baseline")
    bench.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                       help="an extra server setting by wire name: draftMinForwards=2")  # fmt: skip
    bench.add_argument("--memory-docs", type=int, default=0, metavar="N",
                       help="instead: the server's RSS with N documents drafted, and the cost "
                       "of returning to the oldest")  # fmt: skip
    bench.add_argument("--out", type=Path, default=Path("bench-out") / "lsp")
    bench.set_defaults(handler=_bench_lsp)

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


def _bench_lsp(args: argparse.Namespace) -> int:
    from lsp_server.benchlsp.bench import BenchOptions, run_bench
    from lsp_server.benchlsp.sessions import default_sessions, write_sessions

    if args.write_sessions and args.kind == "respec":
        print("prewrite bench-lsp: --write-sessions has no respec kind", file=sys.stderr)
        return 2
    if args.write_sessions:
        write_sessions(default_sessions(args.sessions, args.kind), args.write_sessions)
        print(f"wrote {args.sessions} sessions to {args.write_sessions}")
        return 0
    options = BenchOptions(
        model=args.model, out=args.out, runtime=args.runtime, threads=args.threads,
        prompt_format=args.prompt_format, max_tokens=args.max_tokens, sessions=args.sessions,
        kind=args.kind,
        sessions_file=args.sessions_file, cps=args.cps, pauses_ms=args.pause_ms,
        typists=args.typists, profiles=args.typist,
        editor=args.editor, debounce_ms=args.debounce_ms, seed=args.seed,
        llamacpp_baseline=not args.no_llamacpp, server_settings=_pairs(args.set),
        memory_docs=args.memory_docs, vllm_url=args.vllm_url, vllm_model=args.vllm_model,
    )  # fmt: skip
    return run_bench(options)


def _choices(allowed: tuple[str, ...]) -> Callable[[str], tuple]:
    """An argparse type: comma-separated names from `allowed`."""

    def parse(text: str) -> tuple:
        values = tuple(part.strip() for part in text.split(",") if part.strip())
        wrong = [v for v in values if v not in allowed]
        if not values or wrong:
            raise argparse.ArgumentTypeError(f"expected some of {','.join(allowed)}, got {text!r}")
        return values

    return parse


def _numbers(kind: type) -> Callable[[str], tuple]:
    """An argparse type: comma-separated positive numbers of `kind`."""

    def parse(text: str) -> tuple:
        try:
            values = tuple(kind(part) for part in text.split(",") if part.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected numbers like 12,6, got {text!r}") from None
        if not values or any(v <= 0 for v in values):
            raise argparse.ArgumentTypeError(f"expected positive numbers, got {text!r}")
        return values

    return parse


def _pairs(settings: list[str]) -> tuple[tuple[str, object], ...]:
    pairs = []
    for item in settings:
        key, _, value = item.partition("=")
        try:
            pairs.append((key.strip(), json.loads(value)))
        except json.JSONDecodeError:
            pairs.append((key.strip(), value))
    return tuple(pairs)


def _settings_schema(args: argparse.Namespace) -> int:
    from lsp_server.config import settings_schema

    print(json.dumps(settings_schema(), indent=2))
    return 0
