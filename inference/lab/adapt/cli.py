"""The `prewrite adapt` command: `build-data` and `train`."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inference.cli import positive
from inference.lab.adapt.settings import SYSTEM_MESSAGE, BuildSettings, TrainSettings
from inference.packs import DEFAULT_MODEL

_BUILD = BuildSettings(out=Path())
_TRAIN = TrainSettings(data=Path(), out=Path())
DEFAULT_DATA = Path("adapt-data")
DEFAULT_OUT = Path("adapt-out")


def register(commands: argparse._SubParsersAction) -> None:
    """Add `adapt build-data` and `adapt train` to the `prewrite` parser."""
    adapt = commands.add_parser(
        "adapt", help="train a LoRA adapter that commits early on incomplete specs"
    )
    actions = adapt.add_subparsers(dest="adapt_command", required=True)
    _add_build(actions)
    _add_train(actions)


def _add_build(actions: argparse._SubParsersAction) -> None:
    build = actions.add_parser(
        "build-data",
        help="harvest functions with docstrings and write prefix -> answer rows",
        description="Harvest functions with docstrings (stdlib by default), filter, de-duplicate, "
        "remove anything in HumanEval or an --exclude suite, and write one row per docstring "
        "prefix with the model's own answer to the complete docstring as the target.",
    )
    build.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_DATA}/…)")
    build.add_argument(
        "--source",
        action="append",
        default=[],
        help="'stdlib' (default), 'packages' (site-packages) or a folder; repeatable",
    )
    build.add_argument(
        "--exclude", action="append", default=[], help="a JSONL suite to stay disjoint from"
    )
    build.add_argument("--target", choices=["self", "reference"], default=_BUILD.target)
    build.add_argument("--limit", type=positive, default=None, help="at most N functions")
    build.add_argument("--validation-fraction", type=float, default=_BUILD.validation_fraction)
    add_model_arguments(build)
    build.add_argument("--adapter", default=None, help="distil from an adapted model")
    build.add_argument("--prompt-format", default="auto", choices=["auto", "raw", "fim", "chat"])
    build.add_argument("--max-tokens", type=int, default=256, help="teacher's answer budget")
    build.set_defaults(handler=_build)


def _add_train(actions: argparse._SubParsersAction) -> None:
    train = actions.add_parser(
        "train",
        help="LoRA-train on build-data rows (resumable)",
        description="LoRA on the attention projections, loss on answer tokens only. Defaults "
        "are the seed's: rank 8, alpha 16, dropout 0.05, lr 2e-5, effective batch 16, "
        "max length 2048.",
    )
    train.add_argument("--data", type=Path, required=True, help="a build-data folder")
    train.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT}/…)")
    add_model_arguments(train, default=None)
    numbers = [
        ("steps", positive), ("rank", positive), ("alpha", positive), ("dropout", float),
        ("batch-size", positive), ("micro-batch", positive), ("max-length", positive),
        ("checkpoint-every", positive), ("keep-checkpoints", positive), ("eval-rows", int),
        ("seed", int),
    ]  # fmt: skip
    add_number_arguments(train, numbers, _TRAIN)
    train.add_argument("--lr", type=float, default=_TRAIN.learning_rate, help="learning rate")
    system = train.add_mutually_exclusive_group()
    system.add_argument(
        "--system-message",
        action="store_true",
        help="prepend the seed's 'answer incomplete requests' system message (chat format)",
    )
    system.add_argument("--system-prompt", default=None, help="prepend this system message")
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    train.set_defaults(handler=_train)


def add_number_arguments(
    parser: argparse.ArgumentParser, numbers: Sequence[tuple[str, Any]], defaults: Any
) -> None:
    """`--name` options whose defaults are the settings dataclass's, so they cannot drift."""
    for name, kind in numbers:
        parser.add_argument(
            f"--{name}", type=kind, default=getattr(defaults, name.replace("-", "_"))
        )


def add_model_arguments(
    parser: argparse.ArgumentParser, default: str | None = DEFAULT_MODEL
) -> None:
    """--model, --device, --dtype, --threads and --quiet of the training commands."""
    parser.add_argument("--model", default=default, help="pack name, folder or hub id")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _build(args: argparse.Namespace) -> int:
    from inference.lab.adapt.build import build_dataset

    engine = {key: getattr(args, key) for key in ("model", "adapter", "prompt_format", "device",
                                                  "dtype", "threads", "max_tokens")}  # fmt: skip
    out = args.out or DEFAULT_DATA / _safe(f"{args.model}-{args.target}")
    settings = BuildSettings(
        out=out,
        sources=args.source,
        exclude=args.exclude,
        target=args.target,
        limit=args.limit,
        validation_fraction=args.validation_fraction,
        engine=engine,
        progress=not args.quiet,
    )
    manifest = build_dataset(settings)
    print(_counts_table(manifest))
    print(f"\nwrote {out}/train.jsonl, validation.jsonl and manifest.json")
    return 0


def _train(args: argparse.Namespace) -> int:
    from inference.lab.adapt.train import run_training

    system = SYSTEM_MESSAGE if args.system_message else args.system_prompt
    out = args.out or DEFAULT_OUT / _safe(args.data.resolve().name)
    settings = TrainSettings(
        data=args.data, out=out, model=args.model, steps=args.steps, rank=args.rank,
        alpha=args.alpha, dropout=args.dropout, learning_rate=args.lr,
        batch_size=args.batch_size, micro_batch=args.micro_batch, max_length=args.max_length,
        system_prompt=system, checkpoint_every=args.checkpoint_every,
        keep_checkpoints=args.keep_checkpoints, eval_rows=args.eval_rows, seed=args.seed,
        resume=args.resume, device=args.device, dtype=args.dtype, threads=args.threads,
        progress=not args.quiet,
    )  # fmt: skip
    summary = run_training(settings)
    print(json.dumps(summary, indent=2))
    if summary["interrupted"]:
        print(f"prewrite: interrupted; resume with --resume --out {out}", file=sys.stderr)
        return 130
    print(f"\nwrote {out / 'adapter'}; use it with --adapter {out / 'adapter'}")
    return 0


def _counts_table(manifest: dict[str, Any]) -> str:
    counts = manifest["counts"]
    width = max(len(key) for key in counts)
    lines = [f"{key:{width}}  {value:>8}" for key, value in counts.items()]
    for exclusion in manifest["exclusions"]:
        removed = sum(exclusion["removed"].values())
        lines.append(
            f"removed as in {exclusion['suite']}: {removed} "
            f"({', '.join(f'{k} {v}' for k, v in exclusion['removed'].items()) or 'none'})"
        )
    lines.append(f"{manifest['seconds']} s")
    return "\n".join(lines)


def _safe(name: str) -> str:
    return re.sub(r"[^\w.+-]", "_", name)

