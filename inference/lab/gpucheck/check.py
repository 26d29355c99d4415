"""`prewrite gpu-check`: the engine on the torch runtime, on CUDA in bfloat16, at real model sizes.

Per shape (models.py): exact streaming against plain greedy decoding on typed specs, in the
check's dtype and again in a wider reference dtype, so that a bfloat16 difference can be told
from a fault of the machinery (where two answers part, the margin between the two tokens' logits
is recorded); ms per forward of 1, 9, 64 and 150 tokens after a cached prefix; greedy ms per
token. With the first shape, a few `prewrite bench-lsp` sessions through the real server
(lsp.py). Everything goes into one JSON file, rewritten after every step; a table is printed.
"""

from __future__ import annotations

import gc
import json
import statistics
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import torch
import transformers

from inference.api import Cost
from inference.config import validate_engine_config
from inference.engine import Engine
from inference.engine.kvcache import KVState, common_prefix_length, run_alone
from inference.lab.gpucheck import lsp
from inference.lab.gpucheck.models import (
    SHAPES,
    build_tokenizer,
    random_model,
    shape_params,
    tiny_shape,
    write_folder,
)
from inference.lab.gpucheck.specs import SPECS, TypedFunction
from inference.runtimes.base import Feed, Runtime, eos_ids
from inference.runtimes.device import resolve_device
from inference.runtimes.torch_runtime import LoadedModel, TorchRuntime

SIZES = (1, 9, 64, 150)
T = TypeVar("T")


@dataclass(frozen=True)
class CheckOptions:
    """What one run checks; `dry_run` is the CPU, float32 and tiny stand-ins of the shapes."""

    out: Path
    dry_run: bool = False
    shapes: tuple[str, ...] = tuple(SHAPES)
    specs: int = 3
    updates: int = 6  # requests per spec while it is typed, the last one the whole docstring
    max_tokens: int = 48
    prefix_tokens: int = 300
    repeats: int = 20
    warmup: int = 3
    reference: bool = True
    lsp_sessions: int = 3  # with the first shape; 0: none
    lsp_cps: float = 15.0
    tokenizer: Path | None = None  # a tokenizer folder (e.g. an installed pack) instead of ours
    seed: int = 0


@dataclass(frozen=True)
class Precision:
    """Where the check runs: device, the dtype checked and the reference dtype."""

    device: torch.device
    dtype: torch.dtype
    reference: torch.dtype

    @classmethod
    def of(cls, dry_run: bool) -> Precision:
        """CUDA in bfloat16 against float32; the dry run: the CPU in float32 against float64."""
        if dry_run:
            return cls(torch.device("cpu"), torch.float32, torch.float64)
        return cls(resolve_device("cuda"), torch.bfloat16, torch.float32)

    def synchronize(self) -> None:
        """Wait for the device's queued work (a CUDA forward returns before it has run)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def run_check(options: CheckOptions) -> dict[str, Any]:
    """Every step for every shape; the document as written to `options.out`."""
    began = time.perf_counter()
    precision = Precision.of(options.dry_run)
    tokenizer = _tokenizer(options.tokenizer)
    specs = list(SPECS[: options.specs])
    document: dict[str, Any] = {
        "check": "prewrite gpu-check", "dry_run": options.dry_run,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(precision.device), "dtype": _name(precision.dtype),
        "reference_dtype": _name(precision.reference) if options.reference else None,
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(options).items()},
        "tokenizer": str(options.tokenizer or f"own byte-level BPE, {len(tokenizer)} tokens"),
        "models": {}, "bench_lsp": None,
    }  # fmt: skip
    for index, name in enumerate(options.shapes):
        with tempfile.TemporaryDirectory(prefix="prewrite-gpu-check-") as temp:
            lsp_folder = Path(temp) / "model" if index == 0 and options.lsp_sessions else None
            document["models"][name] = check_shape(
                name, tokenizer, specs, options, precision, lsp_folder
            )
            _free(precision.device)  # the shape's model went with check_shape's frame
            _write(options.out, document)
            if lsp_folder is not None:
                document["bench_lsp"] = lsp.bench_lsp(
                    lsp_folder, list(SPECS[: options.lsp_sessions]), precision.device.type,
                    _name(precision.dtype), options, Path(temp) / "bench-lsp",
                )  # fmt: skip
                document["bench_lsp"]["model"] = name
        _write(options.out, document)
    document["verdict"] = verdict(document, options)
    document["seconds"] = round(time.perf_counter() - began, 1)
    _write(options.out, document)
    return document


def check_shape(
    name: str,
    tokenizer: Any,
    specs: Sequence[TypedFunction],
    options: CheckOptions,
    precision: Precision,
    lsp_folder: Path | None,
) -> dict[str, Any]:
    """One shape: its model built on the device, exactness, forward costs, the reference run."""
    shape = tiny_shape(SHAPES[name]) if options.dry_run else SHAPES[name]
    result: dict[str, Any] = {
        "shape": shape, "stand_in": options.dry_run, "params": shape_params(shape),
        "seconds": {}, "errors": {},
    }  # fmt: skip
    if precision.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(precision.device)
    model = _attempt(result, "build", lambda: random_model(
        shape, tokenizer, precision.device, precision.dtype, options.seed))  # fmt: skip
    if model is None:
        return result
    if lsp_folder is not None:  # the server loads it as a user's model folder
        _attempt(result, "write_folder", lambda: write_folder(model, tokenizer, lsp_folder))
    engine = _engine(model, tokenizer, name, precision.device, precision.dtype, options)
    pool = tokenizer(_timing_text())["input_ids"]
    result["exact"] = _attempt(result, "exact", lambda: exactness(engine, specs, options, pool))
    result["forward_ms"] = _attempt(result, "forward_ms", lambda: forward_ms(
        engine.runtime, pool, options, precision.synchronize))  # fmt: skip
    per_token = [s["greedy_ms_per_token"] for s in result["exact"] or [] if s["greedy_forwards"]]
    result["greedy_ms_per_token"] = round(statistics.median(per_token), 3) if per_token else None
    if precision.device.type == "cuda":
        result["peak_gib"] = round(torch.cuda.max_memory_allocated(precision.device) / 2**30, 2)
    engine.shutdown()
    if options.reference:

        def widened() -> list[dict[str, Any]]:
            # in place: the checked dtype's weights, widened (transformers' typed `to` hides this)
            wide = torch.nn.Module.to(model, precision.reference)
            engine = _engine(wide, tokenizer, name, precision.device, precision.reference, options)
            return exactness(engine, specs, options, pool)

        result["exact_reference"] = _attempt(result, "exact_reference", widened)
    return result


def exactness(
    engine: Engine, specs: Sequence[TypedFunction], options: CheckOptions, pool: Sequence[int]
) -> list[dict[str, Any]]:
    """Each spec streamed against plain greedy, after one uncharged warm-up forward."""
    engine.warm_up(str(engine.runtime.tokenizer.decode(list(pool[: options.prefix_tokens]))))
    return [streamed_against_greedy(engine, spec, options.updates) for spec in specs]


def streamed_against_greedy(engine: Engine, spec: TypedFunction, updates: int) -> dict[str, Any]:
    """The spec typed into a session (updates, then finalize) against plain greedy decoding."""
    requests = spec.requests_while_typing(updates)
    session = f"gpu-check:{spec.name}"
    drafting = Cost()
    engine.open(session)
    try:
        for version, request in enumerate(requests[:-1], start=1):
            drafting.add(engine.update(session, request, version).cost)
        final = engine.finalize(session, requests[-1], len(requests))
    finally:
        engine.close(session)
    plain = engine.generate(requests[-1], warm_from=requests[-1])  # the prompt's encoding free
    streamed, greedy = final.token_ids, plain.token_ids
    record: dict[str, Any] = {
        "spec": spec.name, "requests": len(requests), "identical": streamed == greedy,
        "answer_tokens": len(greedy), "finish_reason": plain.finish_reason,
        "drafting_forwards": drafting.forwards, "residual_forwards": final.cost.forwards,
        "residual_ms": round(final.cost.wall_ms, 3), "greedy_forwards": plain.cost.forwards,
        "greedy_ms_per_token": round(plain.cost.wall_ms / max(plain.cost.forwards, 1), 3),
    }  # fmt: skip
    if streamed != greedy:
        record["divergence"] = divergence(engine, requests[-1], streamed, greedy)
    return record


def divergence(
    engine: Engine, request: Any, streamed: list[int], greedy: list[int]
) -> dict[str, Any]:
    """Where two answers part, and by how much plain decoding preferred its token there."""
    at = common_prefix_length(streamed, greedy)
    found: dict[str, Any] = {"position": at, "streamed_tokens": len(streamed)}
    if at == min(len(streamed), len(greedy)):
        return found  # the same tokens, one answer stopped earlier
    kv = KVState(engine.runtime.open_sequence())
    try:  # one forward over the prompt and greedy's first `at` tokens: logits [1, V]
        rows, _ = run_alone(kv.score(engine.prompt(request).ids + greedy[:at], []),
                            engine.runtime.forward)  # fmt: skip
    finally:
        kv.close()
    logits = rows[-1]
    found.update(
        greedy_token=greedy[at], streamed_token=streamed[at],
        margin=round(float(logits[greedy[at]] - logits[streamed[at]]), 5),
        top_logit=round(float(logits.max()), 3),
    )  # fmt: skip
    return found


def forward_ms(
    runtime: Runtime, pool: Sequence[int], options: CheckOptions, synchronize: Callable[[], None]
) -> dict[int, float]:
    """Median ms of a forward of n tokens (all rows' logits, as a verify pass) after the prefix."""
    prefix = options.prefix_tokens
    rest = list(pool[prefix:])
    sequence = runtime.open_sequence()
    try:
        runtime.forward([Feed(sequence, list(pool[:prefix]), prefix - 1)])
        costs: dict[int, float] = {}
        for n in SIZES:
            times = []
            for i in range(options.warmup + options.repeats):
                start = (i * n) % max(1, len(rest) - n)
                feed = Feed(sequence, rest[start : start + n])
                synchronize()
                began = time.perf_counter()
                runtime.forward([feed])
                synchronize()
                if i >= options.warmup:
                    times.append((time.perf_counter() - began) * 1000.0)
                sequence.truncate(prefix)
            costs[n] = round(statistics.median(times), 3)
        return costs
    finally:
        sequence.close()


def verdict(document: dict[str, Any], options: CheckOptions) -> dict[str, Any]:
    """Pass or fail: no step failed, the reference exact, every figure there, bench-lsp answered.

    Exactness in the checked dtype is reported, not required: a bfloat16 verify pass and a
    one-token decode round differently, so near-ties may part (each divergence has its margin).
    """
    models = document["models"]

    def identical(key: str) -> bool:
        runs = [m.get(key) for m in models.values()]
        return all(runs) and all(s["identical"] for run in runs for s in run)

    figures = len(models) == len(options.shapes) and all(
        m.get("forward_ms") and sorted(int(n) for n in m["forward_ms"]) == list(SIZES)
        and all(v > 0 for v in m["forward_ms"].values())
        for m in models.values()
    )  # fmt: skip
    errors = sorted(f"{name}: {step}" for name, m in models.items() for step in m["errors"])
    lsp_run = document.get("bench_lsp")
    lsp_ok = not options.lsp_sessions or bool(lsp_run and lsp_run["ok"])
    exact = identical("exact")
    reference = identical("exact_reference") if options.reference else None
    return {
        "exact": exact, "exact_reference": reference, "forward_ms_complete": bool(figures),
        "bench_lsp": lsp_ok, "failed_steps": errors,
        "ok": bool(figures) and lsp_ok and not errors and bool(reference if options.reference
                                                               else exact),
    }  # fmt: skip


def format_table(document: dict[str, Any]) -> str:
    """The printed summary: one row per shape, bench-lsp's line, the verdict."""
    machine_, dtype, wide = document["machine"], document["dtype"], document["reference_dtype"]
    dry = ": DRY RUN, tiny stand-ins" if document["dry_run"] else ""
    lines = [
        f"prewrite gpu-check on {machine_['name']} (torch {machine_['torch']}), {dtype}"
        + (f" (reference {wide})" if wide else "") + dry,
        f"| model | params | exact {dtype} | exact {wide or '-'} | ms/forward "
        + " / ".join(f"{n}" for n in SIZES) + " tok | greedy ms/token | peak GiB |",
        "|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for name, m in document["models"].items():
        timed = m.get("forward_ms")
        forward = " / ".join(f"{timed[n]:.1f}" for n in SIZES) if timed else "-"
        greedy = m.get("greedy_ms_per_token")
        lines.append(
            f"| {name} | {m['params'] / 1e9:.2f}B | {_count(m.get('exact'))} | "
            f"{_count(m.get('exact_reference'))} | {forward} | "
            f"{'-' if greedy is None else f'{greedy:.1f}'} | {m.get('peak_gib', '-')} |"
        )
        for step, trace in m["errors"].items():
            lines.append(f"  {name} {step} FAILED: {trace.strip().splitlines()[-1]}")
    lsp_run = document.get("bench_lsp")
    if lsp_run:
        lines.append(lsp.summary_line(lsp_run))
    return "\n".join(lines)


def machine(device: torch.device) -> dict[str, Any]:
    """What ran the check: the accelerator's name and the library versions."""
    from inference.runtimes.machine import describe_cpu

    cuda = device.type == "cuda"
    return {
        "device": device.type,
        "name": torch.cuda.get_device_name(device) if cuda else describe_cpu(
            torch.backends.cpu.get_cpu_capability()),
        "torch": torch.__version__, "cuda": torch.version.cuda, "transformers":
        transformers.__version__, "gpus": torch.cuda.device_count() if cuda else 0,
    }  # fmt: skip


def _engine(
    model: torch.nn.Module,
    tokenizer: Any,
    name: str,
    device: torch.device,
    dtype: torch.dtype,
    options: CheckOptions,
) -> Engine:
    """An engine on the torch runtime around a model in memory (the engine's own defaults)."""
    loaded = LoadedModel(f"random {name}", model, tokenizer, device, dtype)
    runtime = TorchRuntime(loaded, eos_ids(tokenizer, tokenizer.eos_token_id))
    config = validate_engine_config({
        "model": loaded.name, "runtime": "torch", "device": device.type, "dtype": _name(dtype),
        "max_tokens": options.max_tokens,
    })  # fmt: skip
    return Engine(config, runtime)


def _tokenizer(folder: Path | None) -> Any:
    if folder is None:
        return build_tokenizer()
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


def _timing_text() -> str:
    """Code to feed in the timed forwards: our own modules' source, on every machine."""
    import inspect

    from inference.engine import engine, session

    return inspect.getsource(engine) + inspect.getsource(session)


def _attempt(result: dict[str, Any], step: str, work: Callable[[], T]) -> T | None:
    """`work()`, timed into result["seconds"]; where it raises, None and its traceback.

    The check runs once on a lent machine to find what fails there: a fault in one step is
    kept (result["errors"]) and the other steps still run, rather than losing every figure.
    """
    started = time.perf_counter()
    try:
        return work()
    except Exception:  # noqa: BLE001 - any fault is a finding, recorded with its traceback
        result["errors"][step] = traceback.format_exc()[-6000:]
        return None
    finally:
        result["seconds"][step] = round(time.perf_counter() - started, 1)


def _count(records: list[dict[str, Any]] | None) -> str:
    if not records:
        return "-"
    return f"{sum(r['identical'] for r in records)}/{len(records)}"


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
