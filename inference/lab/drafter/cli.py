"""The `prewrite drafter` command: `train` a parallel drafter, `bench` it on residual decodes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from inference.cli import add_engine_arguments, engine_config_from, positive
from inference.lab.adapt.cli import add_model_arguments, add_number_arguments
from inference.lab.drafter.settings import DrafterSettings
from inference.loading import load_engine

_DEFAULTS = DrafterSettings(data=Path(), out=Path())
DEFAULT_OUT = Path("drafter-out")


def register(commands: argparse._SubParsersAction) -> None:
    """Add `drafter train` and `drafter bench` to the `prewrite` parser."""
    drafter = commands.add_parser(
        "drafter", help="a LoRA drafter inside the model that drafts token blocks in one forward"
    )
    actions = drafter.add_subparsers(dest="drafter_command", required=True)
    _add_train(actions)
    _add_bench(actions)


def _add_train(actions: argparse._SubParsersAction) -> None:
    train = actions.add_parser(
        "train",
        help="distil the model into a gated LoRA drafter (Uno-style, one-step)",
        description="Train a per-position gated LoRA on all projections so that noisy "
        "positions guess the next block of the model's own greedy text; the AR weights "
        "are the teacher in the same forward. Data: `prewrite adapt build-data`.",
    )
    train.add_argument("data", type=Path, help="a folder written by `prewrite adapt build-data`")
    train.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT}/…)")
    add_model_arguments(train, default=None)
    numbers = [
        ("steps", positive), ("rank", positive), ("alpha", positive), ("dropout", float),
        ("batch-size", positive), ("max-length", positive), ("kl-weight", float),
        ("tv-weight", float), ("checkpoint-every", positive), ("keep-checkpoints", positive),
        ("eval-rows", int), ("seed", int),
    ]  # fmt: skip
    add_number_arguments(train, numbers, _DEFAULTS)
    train.add_argument("--lr", type=float, default=_DEFAULTS.learning_rate, help="learning rate")
    train.add_argument("--target-modules", type=_names, default=_DEFAULTS.target_modules,
                       help="comma-separated projections (default: all seven)")  # fmt: skip
    train.add_argument("--blocks", type=_blocks, default=_DEFAULTS.blocks,
                       help="block-size curriculum, e.g. 2,4,8")  # fmt: skip
    train.add_argument("--noise-token", type=int, default=None, help="default: pad, else EOS")
    train.add_argument("--all-prefixes", action="store_true", help="also incomplete docstrings")
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    train.set_defaults(handler=_train)


def _add_bench(actions: argparse._SubParsersAction) -> None:
    bench = actions.add_parser(
        "bench",
        help="TPF and wall clock of residual decodes: plain, seed (2 forwards/step), fused",
    )
    add_engine_arguments(bench)
    bench.add_argument("--suite", default="humaneval", help="'humaneval' or a JSONL file path")
    bench.add_argument("--limit", type=int, default=None, help="first N problems only")
    bench.add_argument("--out", type=Path, default=None, help="write results.json here")
    bench.set_defaults(handler=_bench)


def _train(args: argparse.Namespace) -> int:
    from inference.lab.drafter.train import DRAFTER, run_drafter_training

    out = args.out or DEFAULT_OUT / args.data.resolve().name
    settings = DrafterSettings(
        data=args.data, out=out, model=args.model, steps=args.steps, rank=args.rank,
        alpha=args.alpha, dropout=args.dropout, learning_rate=args.lr,
        batch_size=args.batch_size, max_length=args.max_length,
        target_modules=args.target_modules, blocks=args.blocks,
        kl_weight=args.kl_weight, tv_weight=args.tv_weight, noise_token=args.noise_token,
        all_prefixes=args.all_prefixes, checkpoint_every=args.checkpoint_every,
        keep_checkpoints=args.keep_checkpoints, eval_rows=args.eval_rows, seed=args.seed,
        resume=args.resume, device=args.device, dtype=args.dtype, threads=args.threads,
        progress=not args.quiet,
    )  # fmt: skip
    summary = run_drafter_training(settings)
    print(json.dumps(summary, indent=2))
    if summary["interrupted"]:
        print(f"prewrite: interrupted; resume with --resume --out {out}", file=sys.stderr)
        return 130
    print(f"\nwrote {out / DRAFTER}; use it with --drafter {out / DRAFTER}")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from inference.config import validate_engine_config
    from inference.errors import ConfigError
    from inference.lab.bench.results import write_results
    from inference.lab.drafter.measure import format_summary, measure, records, summarize
    from inference.lab.problems.suites import load_suite

    if not args.drafter:
        raise ConfigError("drafter bench needs --drafter FOLDER")
    engine = load_engine(validate_engine_config(engine_config_from(args)))
    problems = load_suite(args.suite)[: args.limit]
    results = measure(engine, problems)
    summary = summarize(results)
    print(format_summary(summary))
    if args.out:
        document = {"model": args.model, "drafter": args.drafter, "suite": args.suite,
                    "acceptance": args.acceptance, "dtype": engine.runtime.info.dtype,
                    "summary": summary, "examples": records(results)}  # fmt: skip
        print(f"wrote {write_results(args.out, document)}")
    return 0


def _names(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one module")
    return names


def _blocks(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"want integers like 2,4,8, got {text!r}") from None
