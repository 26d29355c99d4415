"""`prewrite demo` end to end on the test model: it types, triggers, compares and reports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(1900)]


def test_prewrite_demo_types_triggers_and_reports(real_model_name, tmp_path):
    figures = tmp_path / "demo.json"
    command = [
        sys.executable, "-m", "lsp_server.cli", "demo", "--model", real_model_name,
        "--prompt-format", "chat", "--max-tokens", "24", "--sessions", "1",
        "--keystroke-ms", "0", "--pause-ms", "50", "--json", str(figures),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)

    assert done.returncode == 0, done.stderr[-3000:]
    assert "trigger to answer over 1 sessions" in done.stdout
    assert "median" in done.stdout and "p95" in done.stdout
    data = json.loads(figures.read_text())
    assert [s["function"] for s in data["sessions"]] == ["top_words"]
    assert all(s["identical"] for s in data["sessions"])
    assert set(data["summary"]) == {
        "streaming_median_ms", "streaming_p95_ms", "conventional_median_ms", "conventional_p95_ms",
    }
