"""The `prewrite gpu-check` command (the check itself is imported only when it runs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from inference.cli import positive

SHAPE_NAMES = ("qwen2.5-coder-1.5b", "qwen2.5-coder-7b")  # models.SHAPES, without importing torch
DEFAULT_OUT = Path("bench-out") / "gpu-check.json"
# the full run's figures, and the dry run's lighter ones where an option is left unset
FULL = {"repeats": 20, "warmup": 3, "lsp_cps": 15.0, "lsp_sessions": 3}
DRY = {"repeats": 3, "warmup": 1, "lsp_cps": 60.0, "lsp_sessions": 2}


DESCRIPTION = (
    "Random-weight models of Qwen2.5-Coder-1.5B's and -7B's configurations built on the GPU "
    "(nothing is downloaded): exact streaming against plain greedy, ms per forward of "
    "1/9/64/150 tokens, and bench-lsp sessions through the real server with the first; one "
    "JSON file (docs/engine.md, 'GPU check')."
)


def register(commands: argparse._SubParsersAction) -> None:
    """Add `gpu-check` to the `prewrite` parser."""
    check = commands.add_parser(
        "gpu-check",
        help="the engine on a CUDA GPU in bfloat16 with random models of real sizes",
        description=DESCRIPTION,
    )
    add_arguments(check)
    check.set_defaults(handler=run)


def add_arguments(check: argparse.ArgumentParser) -> None:
    """The check's options."""
    check.add_argument(
        "--dry-run", action="store_true",
        help="the same steps on the CPU in float32 with tiny stand-ins (CI)",
    )  # fmt: skip
    check.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    check.add_argument(
        "--models", type=_shapes, default=SHAPE_NAMES,
        help=f"comma-separated, of {','.join(SHAPE_NAMES)} (default both)",
    )  # fmt: skip
    check.add_argument("--specs", type=positive, default=3, help="typed specs checked (1-4)")
    check.add_argument("--max-tokens", type=positive, default=48, help="answer budget")
    check.add_argument("--repeats", type=positive, default=None,
                       help="timed forwards per size (default 20; dry run 3)")  # fmt: skip
    check.add_argument("--lsp-sessions", type=int, default=None,
                       help="bench-lsp sessions with the first model, 0 for none "
                       "(default 3; dry run 2)")  # fmt: skip
    check.add_argument(
        "--no-reference", action="store_true",
        help="skip the exactness run in the wider dtype (float32; dry run float64)",
    )  # fmt: skip
    check.add_argument("--tokenizer", type=Path, default=None,
                       help="a tokenizer folder to use instead of the self-made one")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the check, print its table; 0 when its verdict is ok, else 1."""
    from inference.lab.gpucheck.check import CheckOptions, format_table, run_check

    figures = DRY if args.dry_run else FULL
    chosen = {"repeats": args.repeats, "lsp_sessions": args.lsp_sessions}
    options = CheckOptions(
        out=args.out, dry_run=args.dry_run, shapes=args.models, specs=args.specs,
        max_tokens=args.max_tokens, reference=not args.no_reference, tokenizer=args.tokenizer,
        **{**figures, **{k: v for k, v in chosen.items() if v is not None}},
    )  # fmt: skip
    document = run_check(options)
    print(format_table(document))
    verdict = document["verdict"]
    print(f"verdict: {'ok' if verdict['ok'] else 'FAILED'} {verdict}\nwrote {args.out}")
    return 0 if verdict["ok"] else 1


def _shapes(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    wrong = [name for name in names if name not in SHAPE_NAMES]
    if not names or wrong:
        raise argparse.ArgumentTypeError(f"expected some of {','.join(SHAPE_NAMES)}, got {text!r}")
    return names
