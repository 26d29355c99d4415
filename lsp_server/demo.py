"""`prewrite demo`: a headless editor types docstrings into the real server and times each trigger.

The server runs as a subprocess (`prewrite serve`) and is driven over stdio like an editor
would: a realistic file is opened, a docstring is typed keystroke by keystroke at a steady
pace, the typist pauses, then asks for the inline completion. The same server then answers
the same position conventionally (`prewrite/plainCompletion`: decode at trigger, no draft).
Both latencies are measured at the client, from request to answer.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from lsprotocol import types

from lsp_server.client import (
    Editor,
    keystrokes,
    last_trigger,
    open_params,
    percentile,
    position_of,
    sleep_until,
    vllm_settings,
)
from lsp_server.wire import PLAIN_COMPLETION

FILE_HEAD = '''"""Word statistics for the weekly report."""

import re
from collections import Counter


def tokenize(text: str) -> list[str]:
    """Split text into lowercase words."""
    return re.findall(r"[a-z']+", text.lower())


'''
FILE_TAIL = '''

if __name__ == "__main__":
    import sys

    print(report(sys.stdin.read()))
'''
# (function header, docstring typed by the demo)
SPECS = (
    (
        "def top_words(text: str, k: int) -> list[tuple[str, int]]:",
        "Return the k most common words in text with their counts.\n"
        "    Ties are broken alphabetically.",
    ),
    (
        "def longest_word(text: str) -> str:",
        "Return the longest word in text; the first one wins a tie.",
    ),
    (
        "def count_vowels(word: str) -> int:",
        "Return how many vowels (a, e, i, o, u) the word contains.",
    ),
    (
        "def is_palindrome(word: str) -> bool:",
        "Return True if word reads the same backwards, ignoring case.",
    ),
)


@dataclass(frozen=True)
class DemoOptions:
    """What `prewrite demo` runs."""

    model: str
    sessions: int = 3
    pause_ms: int = 300
    keystroke_ms: int = 100
    max_tokens: int = 128
    acceptance: str = "exact"
    prompt_format: str = "auto"
    runtime: str = "auto"
    device: str = "auto"
    threads: int | None = None
    vllm_url: str | None = None  # runtime vllm: the server (None: the setting's default)
    vllm_model: str | None = None
    json_path: str | None = None


@dataclass(frozen=True)
class SessionResult:
    """One typed session: both latencies and what the trigger had left to do."""

    function: str
    keystrokes: int
    typing_s: float
    streaming_ms: float
    conventional_ms: float
    residual_forwards: int
    residual_requests: int  # vLLM runtime: requests at the trigger, and the tokens they carried
    residual_request_tokens: int
    identical: bool
    answer: str


def run_demo(options: DemoOptions) -> int:
    """Run the demo and print the figures; returns the process exit status."""
    return asyncio.run(_demo(options))


async def _demo(options: DemoOptions) -> int:
    editor = Editor("prewrite-demo")
    try:
        status = await editor.start(_settings(options))
        if status.state != "ready":
            print(f"prewrite demo: the server could not load the model: {status.message}")
            return 2
        print(
            f"prewrite demo: {status.message}; {options.sessions} sessions, "
            f"{options.keystroke_ms} ms per keystroke, {options.pause_ms} ms pause before trigger"
        )
        results = [await _session(editor, i, options) for i in range(options.sessions)]
        _report(results, options)
        return 0
    finally:
        await editor.close()


def _settings(options: DemoOptions) -> dict[str, Any]:
    return {
        "model": options.model,
        "maxTokens": options.max_tokens,
        "acceptance": options.acceptance,
        "promptFormat": options.prompt_format,
        "runtime": options.runtime,
        "device": options.device,
        "threads": options.threads,
        **vllm_settings(options.vllm_url, options.vllm_model),
    }


async def _session(editor: Editor, index: int, options: DemoOptions) -> SessionResult:
    client = editor.client
    header, docstring = SPECS[index % len(SPECS)]
    uri = f"file:///prewrite-demo/session{index + 1}.py"
    head = f'{FILE_HEAD}{header}\n    """'
    text = head + "\n" + FILE_TAIL
    client.text_document_did_open(open_params(uri, text))
    typed = f'{docstring}\n    """\n    '
    started = time.perf_counter()
    changes = keystrokes(uri, text, len(head), typed, 0)
    for count, (change, text) in enumerate(changes, start=1):  # noqa: B007 - text: the last one
        # A steady typist: each keystroke at its own time, however long sending took.
        await sleep_until(started + count * options.keystroke_ms / 1000)
        client.text_document_did_change(change)
    typing_s = time.perf_counter() - started
    await asyncio.sleep(options.pause_ms / 1000)
    position = position_of(text, len(head) + len(typed))
    streaming_ms, answer = await editor.timed("textDocument/inlineCompletion", uri, position)
    conventional_ms, plain = await editor.timed(PLAIN_COMPLETION, uri, position)
    stats = await editor.stats()
    trigger = last_trigger(stats, uri)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    result = SessionResult(
        function=header.split("(")[0].removeprefix("def "),
        keystrokes=len(typed),
        typing_s=round(typing_s, 3),
        streaming_ms=round(streaming_ms, 3),
        conventional_ms=round(conventional_ms, 3),
        residual_forwards=trigger.get("residualForwards", -1),
        residual_requests=trigger.get("residualRequests", 0),
        residual_request_tokens=trigger.get("residualRequestTokens", 0),
        identical=answer == plain,
        answer=answer,
    )
    print(
        f"session {index + 1} ({result.function}): {result.keystrokes} keystrokes in "
        f"{result.typing_s:.1f} s; at trigger: streaming {result.streaming_ms:.1f} ms "
        f"({result.residual_forwards} residual forwards{_requests(result)}), conventional "
        f"{result.conventional_ms:.1f} ms, identical answers: {result.identical}"
    )
    return result


def _requests(result: SessionResult) -> str:
    """', N requests carrying T tokens' on a runtime behind a wire (vLLM), else nothing."""
    if not result.residual_requests:
        return ""
    return f", {result.residual_requests} requests of {result.residual_request_tokens} tokens"


def _report(results: list[SessionResult], options: DemoOptions) -> None:
    print(f"\n--- answer of session 1 ({results[0].function}) ---")
    print(results[0].answer)
    streaming = [r.streaming_ms for r in results]
    conventional = [r.conventional_ms for r in results]
    summary = {
        "streaming_median_ms": statistics.median(streaming),
        "streaming_p95_ms": percentile(streaming, 95),
        "conventional_median_ms": statistics.median(conventional),
        "conventional_p95_ms": percentile(conventional, 95),
    }
    speedup = summary["conventional_median_ms"] / max(summary["streaming_median_ms"], 1e-3)
    print(f"--- trigger to answer over {len(results)} sessions ---")
    print(
        f"streaming (prewrite):     median {summary['streaming_median_ms']:8.1f} ms   "
        f"p95 {summary['streaming_p95_ms']:8.1f} ms"
    )
    print(
        f"conventional (no draft):  median {summary['conventional_median_ms']:8.1f} ms   "
        f"p95 {summary['conventional_p95_ms']:8.1f} ms"
    )
    print(f"median speedup: {speedup:.0f}x; identical answers: "
          f"{sum(r.identical for r in results)}/{len(results)}")
    if options.json_path:
        with open(options.json_path, "w", encoding="utf-8") as handle:
            data = {"options": asdict(options), "summary": summary,
                    "sessions": [asdict(r) for r in results]}
            json.dump(data, handle, indent=2)
