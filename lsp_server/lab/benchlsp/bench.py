"""`prewrite bench-lsp` end to end: every configuration on a fresh server, then the baselines."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inference.api import Request
from lsp_server.client import Editor, vllm_settings
from lsp_server.config import Settings
from lsp_server.lab.benchlsp.report import (
    format_parts,
    format_table,
    summarize,
    write_cdf,
    write_results,
)
from lsp_server.lab.benchlsp.run import EditorKind, RunOptions, SessionResult, run_sessions
from lsp_server.lab.benchlsp.sessions import (
    HELD_OUT_EVERY,
    Session,
    default_sessions,
    read_sessions,
)
from lsp_server.lab.benchlsp.typist import Profile
from lsp_server.spec import Spec, answer_edit, find_spec, language_of


@dataclass(frozen=True)
class BenchOptions:
    """What `prewrite bench-lsp` runs."""

    model: str
    out: Path
    runtime: str = "auto"
    threads: int | None = None
    vllm_url: str | None = None  # runtime vllm: the server (None: the setting's default)
    vllm_model: str | None = None
    prompt_format: str = "auto"
    max_tokens: int = 256
    sessions: int = 40
    kind: str = "docstring"  # of the built-in sessions (sessions.KINDS)
    sessions_file: Path | None = None
    cps: tuple[float, ...] = (12.0, 6.0)
    pauses_ms: tuple[int, ...] = (1000, 300)
    typists: tuple[int, ...] = (1,)
    profiles: tuple[Profile, ...] = ("steady", "thinking")  # typist.py
    editor: EditorKind = "vscode"
    debounce_ms: int = 50
    seed: int = 0
    read_ms: int = 0  # between opening a session's document and its first keystroke
    llamacpp_baseline: bool = True
    memory_docs: int = 0  # > 0: measure the server's memory with this many documents instead
    server_settings: tuple[tuple[str, Any], ...] = ()  # extra wire settings, for experiments


def run_bench(options: BenchOptions) -> int:
    """Run every configuration and the llama.cpp baseline; print, write JSON and the plot."""
    if options.kind == "respec":
        return asyncio.run(_respecs(options))
    sessions = (
        read_sessions(options.sessions_file) if options.sessions_file
        else default_sessions(options.sessions, options.kind)
    )  # fmt: skip
    if options.memory_docs:
        return asyncio.run(_memory(options, sessions))
    results, runtime = asyncio.run(_configurations(options, sessions))
    if not results:
        return 2
    if options.llamacpp_baseline:
        _llamacpp_baseline(options, results)
    settings = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(options).items()}
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    meta = {"options": settings, "runtime": runtime, "created": created}
    path = write_results(options.out, meta, results)
    plot = write_cdf(options.out, results)
    summary = summarize(results)
    print(format_table(summary, _runtime_name(runtime)))
    print(f"\nby split (every {HELD_OUT_EVERY}th session held out) and answer length (tokens):")
    print(format_parts(summary))
    print(f"\nwrote {path} and {plot}")
    return 0


async def _configurations(
    options: BenchOptions, sessions: list[Session]
) -> tuple[list[SessionResult], dict[str, Any]]:
    results: list[SessionResult] = []
    runtime: dict[str, Any] = {}
    plan = [(t, p, c, ms) for t in options.typists for p in options.profiles
            for c in options.cps for ms in options.pauses_ms]  # fmt: skip
    for typists, profile, cps, pause in plan:
        editor = Editor("prewrite-bench-lsp")
        try:
            status = await editor.start(_settings(options))
            if status.state != "ready":
                print(f"prewrite bench-lsp: no model: {status.message}", file=sys.stderr)
                return [], runtime
            runtime = (await editor.stats()).get("runtime") or {}
            run = RunOptions(cps, pause, typists, profile, options.editor, options.debounce_ms,
                             options.seed, options.read_ms)  # fmt: skip
            done = await run_sessions(editor, sessions, run)
        finally:
            await editor.close()
        results.extend(done)
        print(f"{profile}, {cps:g} cps, {pause} ms pause, {typists} typist(s): "
              f"{len(done)} sessions", file=sys.stderr)  # fmt: skip
    return results, runtime


async def _started(editor: Editor, options: BenchOptions) -> dict[str, Any] | None:
    """Start the server with the options' settings: its runtime, or None (said) without a model."""
    status = await editor.start(_settings(options))
    if status.state != "ready":
        print(f"prewrite bench-lsp: no model: {status.message}", file=sys.stderr)
        return None
    runtime: dict[str, Any] = (await editor.stats()).get("runtime") or {}
    return runtime


async def _respecs(options: BenchOptions) -> int:
    """The respec kind: sentences added to docstrings of functions with bodies (edit to offer),
    at the first speed and typist given."""
    from lsp_server.lab.benchlsp.respec_run import format_respecs, run_respecs, summarize_respecs
    from lsp_server.lab.benchlsp.respecs import respec_cases

    cases = respec_cases()[: options.sessions]
    settings = Settings.model_validate(_settings(options))
    editor = Editor("prewrite-bench-lsp")
    try:
        runtime = await _started(editor, options)
        if runtime is None:
            return 2
        results = await run_respecs(editor, cases, options.cps[0], options.profiles[0],
                                    options.seed, settings.respec_idle_ms)  # fmt: skip
    finally:
        await editor.close()
    rows = summarize_respecs(results)
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / "respec.json"
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    settings_out = {k: str(v) if isinstance(v, Path) else v for k, v in asdict(options).items()}
    document = {"options": settings_out, "runtime": runtime, "created": created,
                "summary": rows, "results": [asdict(r) for r in results]}  # fmt: skip
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"{_runtime_name(runtime)}, {options.cps[0]:g} cps, {options.profiles[0]} typist")
    print(format_respecs(rows))
    print(f"\nwrote {path}")
    return 0


async def _memory(options: BenchOptions, sessions: list[Session]) -> int:
    from lsp_server.lab.benchlsp.memory import as_dict, measure_memory

    editor = Editor("prewrite-bench-lsp")
    try:
        runtime = await _started(editor, options)
        if runtime is None:
            return 2
        result = await measure_memory(editor, sessions, options.memory_docs)
    finally:
        await editor.close()
    document = {"runtime": runtime, "model": options.model, **as_dict(result)}
    options.out.mkdir(parents=True, exist_ok=True)
    path = options.out / "memory.json"
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(
        f"{result.documents} documents drafted in {result.drafting_s:.0f} s on "
        f"{_runtime_name(runtime)}: server RSS {result.rss_mib} MiB (model loaded, no "
        f"document: {result.rss_before_mib} MiB); caches {result.memory}\n"
        f"return to the oldest: {result.return_oldest_ms:.0f} ms "
        f"({result.return_oldest_forwards} forwards); to the newest: "
        f"{result.return_newest_ms:.0f} ms ({result.return_newest_forwards} forwards)\nwrote {path}"
    )
    return 0


def _runtime_name(runtime: dict[str, Any]) -> str:
    """'llamacpp (AMD EPYC, 2 cores, AVX2)': the runtime, and the CPU its figures depend on."""
    cpu = (runtime.get("extra") or {}).get("cpu")
    return f"{runtime.get('kind', '?')} ({cpu})" if cpu else str(runtime.get("kind", "?"))


def _settings(options: BenchOptions) -> dict[str, Any]:
    return {
        "model": options.model, "runtime": options.runtime, "threads": options.threads,
        "promptFormat": options.prompt_format, "maxTokens": options.max_tokens,
        **vllm_settings(options.vllm_url, options.vllm_model),
        **dict(options.server_settings),
    }  # fmt: skip


def _llamacpp_baseline(options: BenchOptions, results: list[SessionResult]) -> None:
    """llama-cpp-python greedy on each session's final request, its cache warm (server down).

    Timed on llama.cpp's fast kernels (what its users run); whether its answer is the
    streamed one is asked of a `Llama` on the engine's kernels, where those differ.
    """
    from inference.config import validate_engine_config
    from inference.lab.bench.conventional import LlamaConventional

    settings = Settings.model_validate(_settings(options))
    config = validate_engine_config({**settings.engine_values(), "runtime": "llamacpp"})
    fast = LlamaConventional(config)
    invariant = fast.engine_invariant
    timed = same = _conventional_answers(fast, results, settings)
    if invariant:  # the fast kernels' answers may part from the engine's at near-ties
        reference = LlamaConventional(config, same_numerics=True)
        same = _conventional_answers(reference, results, settings)
    for result in results:
        key = (result.final_text, result.cursor)
        if timed.get(key) is not None:
            result.extra["llamacpp_ms"] = round(timed[key].ms, 3)
            result.extra["llamacpp_same"] = _as_inline(result, same[key].text, settings) == (
                result.answer
            )


def _conventional_answers(
    conventional: Any, results: list[SessionResult], settings: Settings
) -> dict[tuple[str, int], Any]:
    """Each distinct final text's conventional answer (None where there is no spec)."""
    answers: dict[tuple[str, int], Any] = {}
    try:
        for result in results:
            key = (result.final_text, result.cursor)
            if key not in answers:
                final = _request(result.final_text, result.cursor, result.language, settings)
                warm = _request(result.warm_text, result.warm_cursor, result.language, settings)
                answers[key] = conventional.answer(final, warm) if final else None
    finally:
        conventional.close()
    return answers


def _request(text: str, cursor: int, language_id: str, settings: Settings) -> Request | None:
    spec = _spec(text, cursor, language_id, settings)
    return spec.request if spec is not None else None


def _spec(text: str, cursor: int, language_id: str, settings: Settings) -> Spec | None:
    language = language_of(language_id, "")
    if language is None:
        return None
    return find_spec(text, cursor, language, settings.prefix_chars, settings.suffix_chars)


def _as_inline(result: SessionResult, answer: str, settings: Settings) -> str:
    """What the inline item would say had the server answered the trigger with `answer`."""
    text, cursor = result.final_text, result.cursor
    spec = _spec(text, cursor, result.language, settings)
    edit = answer_edit(text, spec, cursor, answer) if spec is not None else None
    return edit.text if edit is not None else ""
