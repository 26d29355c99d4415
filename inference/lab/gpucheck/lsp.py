"""The GPU check's `prewrite bench-lsp` run: the specs typed into the real server, in a subprocess.

The server loads the random model from its folder as a user's `model` setting, on the check's
device and dtype; the benchmark's own JSON is read back and its figures kept. A subprocess keeps
the engine's side free of the editor protocol, and a crash of the server apart from the check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference.lab.gpucheck.specs import TypedFunction, write_sessions

if TYPE_CHECKING:
    from inference.lab.gpucheck.check import CheckOptions

RESULTS = "bench-lsp.json"  # lsp_server/lab/benchlsp/report.py writes it
PAUSE_MS = 300
TIMEOUT_S = 600
KEPT = ("name", "trigger_ms", "conventional_ms", "identical", "residual_forwards", "from_draft",
        "drafting_forwards", "answer_tokens", "keystrokes", "typing_s")  # fmt: skip


def bench_lsp(
    folder: Path,
    specs: list[TypedFunction],
    device: str,
    dtype: str,
    options: CheckOptions,
    out: Path,
) -> dict[str, Any]:
    """Type `specs` into `prewrite serve` running the model in `folder`; the figures."""
    out.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "lsp_server.cli", "bench-lsp", "--model", str(folder),
        "--runtime", "torch", "--set", f"device={device}", "--set", f"dtype={dtype}",
        "--no-llamacpp", "--sessions-file", str(write_sessions(specs, out / "sessions.jsonl")),
        "--cps", f"{options.lsp_cps:g}", "--pause-ms", str(PAUSE_MS), "--typist", "steady",
        "--typists", "1", "--max-tokens", str(options.max_tokens), "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    shown = ["prewrite", *command[3:]]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired as exc:
        return {"ok": False, "command": shown, "error": f"no answer in {exc.timeout:g} s"}
    result: dict[str, Any] = {"ok": False, "command": shown, "returncode": done.returncode,
                              "seconds": round(time.perf_counter() - started, 1)}  # fmt: skip
    if done.returncode != 0:  # the JSON may be there still (it is written before the plot)
        result["stderr_tail"] = done.stderr[-3000:]
    path = out / RESULTS
    if not path.is_file():
        return result
    data = json.loads(path.read_text(encoding="utf-8"))
    sessions = [{key: s.get(key) for key in KEPT} for s in data.get("sessions", [])]
    result.update(
        ok=bool(sessions) and all(s["trigger_ms"] and s["conventional_ms"] for s in sessions),
        runtime=data.get("runtime"), summary=_figures(data.get("summary") or [{}]),
        sessions=sessions, cps=options.lsp_cps, pause_ms=PAUSE_MS,
    )  # fmt: skip
    return result


def summary_line(run: dict[str, Any]) -> str:
    """One line for the printed table."""
    if not run.get("sessions"):
        why = " ".join(str(run.get("error") or run.get("stderr_tail", "")).split())
        return f"bench-lsp: FAILED ({why[:300]})"
    s, sessions = run["summary"], run["sessions"]
    same = sum(bool(x["identical"]) for x in sessions)
    zero = sum(x["residual_forwards"] == 0 for x in sessions)
    return (
        f"bench-lsp, {run.get('model')} shape, {len(sessions)} sessions at {run['cps']:g} cps, "
        f"{run['pause_ms']} ms pause: trigger p50 / p95 {s['trigger_p50_ms']:.0f} / "
        f"{s['trigger_p95_ms']:.0f} ms, conventional {s['conventional_p50_ms']:.0f} / "
        f"{s['conventional_p95_ms']:.0f} ms, identical {same}/{len(sessions)}, "
        f"no forward left {zero}/{len(sessions)}"
    )


def _figures(summary: list[dict[str, Any]]) -> dict[str, Any]:
    """The first configuration's quantiles and rates (the check runs one)."""
    row = summary[0]
    return {k: v for k, v in row.items()
            if k.startswith(("trigger_", "conventional_")) or k.endswith("_rate")}  # fmt: skip
