"""`prewrite bench-lsp`: its options, and the run they start."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from inference.cli import RUNTIMES, add_vllm_arguments
from inference.packs import DEFAULT_MODEL
from lsp_server.lab.benchlsp.typist import PROFILES


def register(commands: argparse._SubParsersAction) -> None:
    """Add `bench-lsp` to the `prewrite` parser."""
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
    bench.add_argument("--read-ms", type=int, default=0,
                       help="the person reads: ms between opening a document and typing in it "
                       "(default 0; the server may encode the document meanwhile)")  # fmt: skip
    bench.add_argument("--no-llamacpp", action="store_true", help="skip the llama.cpp baseline")
    bench.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                       help="an extra server setting by wire name: draftMinForwards=2")  # fmt: skip
    bench.add_argument("--memory-docs", type=int, default=0, metavar="N",
                       help="instead: the server's RSS with N documents drafted, and the cost "
                       "of returning to the oldest")  # fmt: skip
    bench.add_argument("--out", type=Path, default=Path("bench-out") / "lsp")
    bench.set_defaults(handler=_bench_lsp)


def _bench_lsp(args: argparse.Namespace) -> int:
    from lsp_server.lab.benchlsp.bench import BenchOptions, run_bench
    from lsp_server.lab.benchlsp.sessions import default_sessions, write_sessions

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
        editor=args.editor, debounce_ms=args.debounce_ms, seed=args.seed, read_ms=args.read_ms,
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
