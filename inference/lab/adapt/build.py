"""`prewrite adapt build-data`: sources -> filtered, de-duplicated, suite-disjoint prefix rows.

Steps: harvest functions (`harvest.py`), drop what the filters reject (`filters.py`), remove
anything matching HumanEval or an excluded suite (`exclusion.py`), de-duplicate by normalised
body and by prompt, keep functions with a streamable docstring, take `limit` of them in hash
order, split, then write one row per docstring prefix with the target (`examples.py`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm import tqdm

from inference.adapters.identity import tokenizer_signature
from inference.api import Request
from inference.config import validate_engine_config
from inference.lab.adapt.dataset import (
    FORMAT,
    TRAIN,
    VALIDATION,
    RowWriter,
    choose_validation,
    read_rows,
    write_manifest,
)
from inference.lab.adapt.errors import CorpusError
from inference.lab.adapt.examples import (
    SelfTeacher,
    Target,
    function_spec,
    prefix_rows,
    reference_target,
)
from inference.lab.adapt.exclusion import Exclusion, first_match, load_exclusions
from inference.lab.adapt.filters import Bounds, rejection
from inference.lab.adapt.harvest import Function, Source, harvest, sources_from
from inference.lab.adapt.hashing import Keys
from inference.lab.adapt.settings import BuildSettings
from inference.lab.problems.segment import SplitPrompt
from inference.loading import load_engine


def build_dataset(settings: BuildSettings) -> dict[str, Any]:
    """Build the data folder and return its manifest."""
    start = time.perf_counter()
    counts: Counter[str] = Counter()
    exclusions = load_exclusions(settings.exclude)
    sources = sources_from(settings.sources)
    candidates = list(select(harvest(sources, counts), exclusions, settings.bounds, counts))
    if not candidates:
        where = ", ".join(str(source.root) for source in sources)
        raise CorpusError(f"no usable function with a docstring in {where}: {_describe(counts)}")
    candidates.sort(key=lambda pair: pair[0].keys.body or "")  # hash order: spread, stable
    chosen = candidates[: settings.limit]
    held_out = choose_validation(
        (f.keys.body or "" for f, _ in chosen), settings.validation_fraction
    )
    writer = RowWriter(settings.out)
    try:
        meta = _write(chosen, held_out, settings, writer, counts)
    finally:
        writer.close()
    if not writer.counts[TRAIN]:
        raise CorpusError(f"no training rows were written: {_describe(counts)}")
    if overlapping_rows(settings.out, exclusions):  # `select` makes this impossible; verified
        raise CorpusError(f"{settings.out}: rows match an excluded suite")
    totals = {"candidates": len(candidates), "functions": len(chosen),
              "validation_functions": len(held_out), "train_rows": writer.counts[TRAIN],
              "validation_rows": writer.counts[VALIDATION]}  # fmt: skip
    manifest = {
        "format": FORMAT,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **meta,
        **_settings_record(settings, sources, exclusions),
        "counts": {**dict(sorted(counts.items())), **totals},
        "seconds": round(time.perf_counter() - start, 2),
    }
    write_manifest(settings.out, manifest)
    return manifest


def _settings_record(
    settings: BuildSettings, sources: list[Source], exclusions: list[Exclusion]
) -> dict[str, Any]:
    """What the manifest says about how the data was chosen."""
    return {
        "target": settings.target,
        "sources": [f"{source.label}={source.root}" for source in sources],
        "exclusions": [exclusion.summary() for exclusion in exclusions],
        "rows_matching_excluded_suites": 0,
        "validation_fraction": settings.validation_fraction,
        "limit": settings.limit,
        "bounds": vars(settings.bounds),
    }


def select(
    functions: Iterable[Function], exclusions: list[Exclusion], bounds: Bounds, counts: Counter[str]
) -> Iterator[tuple[Function, SplitPrompt]]:
    """Functions that pass the filters, match no suite, are new, and have a streamable spec."""
    bodies: set[str] = set()
    prompts: set[str] = set()
    for function in functions:
        match = first_match(exclusions, function.keys)  # first: every copy is counted
        if match is not None:
            exclusion, why = match
            exclusion.removed[why] += 1
            reason: str | None = f"in {exclusion.suite}"
        else:
            reason = rejection(function, bounds)
        if reason is None and (function.keys.body in bodies or function.prompt in prompts):
            reason = "duplicate"
        spec, why = function_spec(function) if reason is None else (None, reason)
        if spec is None:
            counts[f"functions skipped: {why}"] += 1
            continue
        bodies.add(function.keys.body or "")
        prompts.add(function.prompt)
        yield function, spec


def overlapping_rows(folder: Path, exclusions: list[Exclusion]) -> int:
    """Written rows whose function shares a key with an excluded suite (0 when disjoint)."""
    rows = read_rows(folder, TRAIN) + read_rows(folder, VALIDATION)
    return sum(
        first_match(exclusions, Keys(r["name_docstring_hash"], r["docstring_hash"], r["body_hash"]))
        is not None
        for r in rows
    )


def _write(
    chosen: list[tuple[Function, SplitPrompt]],
    validation: set[str],
    settings: BuildSettings,
    writer: RowWriter,
    counts: Counter[str],
) -> dict[str, Any]:
    """Targets and rows for the chosen functions; returns the model part of the manifest."""
    teacher, meta = _teacher(settings)
    bar = tqdm(
        chosen,
        desc="build-data",
        unit="function",
        disable=not settings.progress,
        dynamic_ncols=True,
    )
    target: Target | None
    for function, spec in bar:
        if teacher is None:
            target, why = reference_target(function, spec, meta["prompt_format"]), ""
        else:
            target, why = teacher.target(spec)
        if target is None:
            counts[f"functions skipped: {why}"] += 1
            continue
        if target.cut:
            counts["answers cut at the token budget (kept)"] += 1
        split = VALIDATION if function.keys.body in validation else TRAIN
        writer.write(prefix_rows(function, spec, target, split))
        bar.set_postfix_str(
            f"{writer.counts[TRAIN] + writer.counts[VALIDATION]} rows", refresh=False
        )
    return meta


def _teacher(settings: BuildSettings) -> tuple[SelfTeacher | None, dict[str, Any]]:
    """The engine that writes self-distillation targets, and what the manifest says about it."""
    requested = settings.engine.get("prompt_format", "auto")
    if settings.target == "reference":
        fmt = "raw" if requested == "auto" else requested
        return None, {"model": None, "tokenizer": None, "prompt_format": fmt, "max_tokens": None}
    engine = load_engine(validate_engine_config({**settings.engine, "acceptance": "exact"}))
    fmt = engine.builder.format_for(Request('def f():\n    """A docstring."""\n'))
    return SelfTeacher(engine), {
        "model": engine.config.model,
        "adapter": engine.config.adapter,
        "tokenizer": tokenizer_signature(engine.runtime.tokenizer),
        "prompt_format": fmt,
        "max_tokens": engine.config.max_tokens,
        "dtype": engine.runtime.info.dtype,
    }


def _describe(counts: Counter[str]) -> str:
    if not counts:
        return "no Python files found"
    return "; ".join(f"{key}: {value}" for key, value in sorted(counts.items()))
