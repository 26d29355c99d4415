"""`prewrite bench runtimes`: what a forward and a greedy token cost on each runtime, side by side.

Per runtime, on the same model: milliseconds per forward of n tokens after a prefix (the shape
of a verify pass: logits for every fed row), and plain greedy decoding in milliseconds per
token, the engine's own (prompt already cached) against llama-cpp-python's `Llama` generating
the same tokens from the same GGUF, the reference a llama.cpp user would compare us with.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine
from inference.engine.kvcache import KVState, run_alone
from inference.loading import load_engine
from inference.runtimes import model_files
from inference.runtimes.base import Feed

RUNTIMES_FILE = "runtimes.json"


@dataclass
class RuntimeFigures:
    """One runtime's figures."""

    runtime: str
    info: dict[str, Any]
    forward_ms: dict[int, float]  # median ms per forward, by tokens in it
    decode_ms_per_token: float  # the engine's plain greedy, prompt cached
    decoded_tokens: int
    batched_ms: float = 0.0  # 4 sequences x 9 tokens in one forward call
    separate_ms: float = 0.0  # the same as 4 calls
    library_decode_ms_per_token: float | None = None  # llama-cpp-python's own Llama
    answers_agree: int | None = None  # prompts where both decoded the same tokens
    prompts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def forward_costs(
    engine: Engine, prefix: Sequence[int], pool: Sequence[int], sizes: Sequence[int], repeats: int
) -> dict[int, float]:
    """Median ms of one forward over n tokens appended to `prefix` (rewound after each)."""
    runtime = engine.runtime
    kv = KVState(runtime.open_sequence())
    try:
        run_alone(kv.feed(list(prefix)), runtime.forward)
        costs: dict[int, float] = {}
        for n in sizes:
            times = []
            for repeat in range(repeats):
                start = (repeat * n) % max(1, len(pool) - n)
                tokens = list(pool[start : start + n])
                began = time.perf_counter()
                run_alone(kv.feed(tokens), runtime.forward)
                times.append((time.perf_counter() - began) * 1000.0)
                kv.truncate(len(prefix))
            costs[n] = statistics.median(times)
        return costs
    finally:
        kv.close()


def batching_costs(
    engine: Engine,
    prefix: Sequence[int],
    pool: Sequence[int],
    sessions: int = 4,
    tokens: int = 9,
    repeats: int = 5,
) -> tuple[float, float]:
    """Median ms of `sessions` sequences each fed `tokens`: in one forward call, and one by one.

    On llama.cpp the call is one decode; on torch it runs the feeds one after another anyway.
    """
    runtime = engine.runtime
    states = [KVState(runtime.open_sequence()) for _ in range(sessions)]
    try:
        for kv in states:
            run_alone(kv.feed(list(prefix)), runtime.forward)
        together, alone = [], []
        for repeat in range(repeats):
            span = max(1, len(pool) - tokens)
            starts = [((repeat * sessions + i) * tokens) % span for i in range(sessions)]
            chunk = [list(pool[start : start + tokens]) for start in starts]
            began = time.perf_counter()
            runtime.forward([Feed(kv.sequence, c, 0) for kv, c in zip(states, chunk, strict=True)])
            together.append((time.perf_counter() - began) * 1000.0)
            for kv in states:
                kv.sequence.truncate(len(prefix))
            began = time.perf_counter()
            for kv, c in zip(states, chunk, strict=True):
                runtime.forward([Feed(kv.sequence, c, 0)])
            alone.append((time.perf_counter() - began) * 1000.0)
            for kv in states:
                kv.sequence.truncate(len(prefix))
        return statistics.median(together), statistics.median(alone)
    finally:
        for kv in states:
            kv.close()


def engine_decode(engine: Engine, prompts: Sequence[str]) -> tuple[float, int, list[list[int]]]:
    """Plain greedy with the prompt cached: ms per decoded token, tokens, the answers."""
    total_ms, forwards, answers = 0.0, 0, []
    for prompt in prompts:
        request = Request(prompt)
        answer = engine.generate(request, warm_from=request)  # the prompt's encoding is free
        total_ms += answer.cost.wall_ms
        forwards += answer.cost.forwards
        answers.append(answer.token_ids)
    return total_ms / max(forwards, 1), forwards, answers


def library_decode(
    engine: Engine, prompts: Sequence[str], answers: Sequence[Sequence[int]]
) -> tuple[float, int]:
    """llama-cpp-python's `Llama` decoding greedily as many tokens as the engine did.

    Returns ms per token (from its first token to its last) and how many prompts gave the
    engine's very tokens.
    """
    from inference.runtimes.llamacpp_runtime import library_llama

    config, info = engine.config, engine.runtime.info
    invariant = info.extra.get("numerics") == "invariant"  # the engine's kernels, so tokens agree
    llm = library_llama(model_files.resolve(config.model).gguf, config, info.threads, invariant)
    total_ms, steps, agree = 0.0, 0, 0
    try:
        for prompt, answer in zip(prompts, answers, strict=True):
            ids = engine.prompt(Request(prompt)).ids
            tokens: list[int] = []
            first = 0.0
            for token in llm.generate(ids, temp=0.0, repeat_penalty=1.0, reset=True):
                if not tokens:
                    first = time.perf_counter()  # the prompt is encoded: decoding starts
                tokens.append(int(token))
                if len(tokens) == len(answer):
                    break
            total_ms += (time.perf_counter() - first) * 1000.0
            steps += len(tokens) - 1
            agree += tokens == list(answer)
    finally:
        llm.close()
    return total_ms / max(steps, 1), agree


def measure_runtime(
    config: EngineConfig,
    prompts: Sequence[str],
    sizes: Sequence[int],
    prefix_tokens: int,
    repeats: int,
) -> RuntimeFigures:
    """All figures of one runtime (the config names it)."""
    engine = load_engine(config)
    try:
        pool = engine.runtime.tokenizer("\n".join(prompts))["input_ids"]
        prefix, rest = pool[:prefix_tokens], pool[prefix_tokens:]
        engine.warm_up("\n".join(prompts[:2]))
        forward = forward_costs(engine, prefix, rest, sizes, repeats)
        batched, separate = batching_costs(engine, prefix, rest, repeats=repeats)
        per_token, tokens, answers = engine_decode(engine, prompts)
        figures = RuntimeFigures(
            runtime=engine.runtime.info.kind, info=asdict(engine.runtime.info),
            forward_ms=forward, decode_ms_per_token=per_token, decoded_tokens=tokens,
            prompts=len(prompts), batched_ms=batched, separate_ms=separate,
        )  # fmt: skip
        if figures.runtime == "llamacpp":
            library, agree = library_decode(engine, prompts, answers)
            figures.library_decode_ms_per_token, figures.answers_agree = library, agree
        return figures
    finally:
        engine.shutdown()


def format_figures(all_figures: Sequence[RuntimeFigures]) -> str:
    """The side-by-side table of ms per forward and ms per decoded token."""
    sizes = sorted({n for f in all_figures for n in f.forward_ms})
    head = ("| runtime | " + " | ".join(f"{n} tok" for n in sizes)
            + " | 4 x 9 tok: one call / four | greedy ms/token |")  # fmt: skip
    lines = [head, "|" + "---|" * (len(sizes) + 3)]
    for f in all_figures:
        cells = " | ".join(f"{f.forward_ms[n]:.0f}" for n in sizes)
        lines.append(f"| {f.runtime} ({f.info['threads']} threads) | {cells} | "
                     f"{f.batched_ms:.0f} / {f.separate_ms:.0f} | "
                     f"{f.decode_ms_per_token:.1f} |")  # fmt: skip
        if f.library_decode_ms_per_token is not None:
            ratio = f.decode_ms_per_token / f.library_decode_ms_per_token
            lines.append(
                "| llama-cpp-python `Llama` | | "
                + " | " * len(sizes)
                + f"{f.library_decode_ms_per_token:.1f} (engine/Llama {ratio:.2f}x; same tokens "
                f"on {f.answers_agree}/{f.prompts} prompts) |"
            )
    return "\n".join(lines)


def write_plot(all_figures: Sequence[RuntimeFigures], folder: Path) -> Path:
    """ms per forward against tokens per forward, one line per runtime."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for f in all_figures:
        sizes = sorted(f.forward_ms)
        axes.plot(sizes, [f.forward_ms[n] for n in sizes], marker="o", label=f.runtime)
    axes.set_xlabel("tokens in the forward")
    axes.set_ylabel("ms per forward (median)")
    axes.set_title("forward cost after the prefix")
    axes.legend()
    axes.grid(alpha=0.3)
    path = folder / "runtimes.png"
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
