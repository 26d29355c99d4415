"""The Neovim plugin in real headless Neovim: ghost text geometry, then end to end on the server.

Each test runs a Lua script from editor-clients/neovim/tests/ in `nvim --headless`; the script
waits on events with timeouts (never fixed sleeps) and writes its checks to a JSON file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from inference.packs import cache_root
from tests.paths import REPO

pytestmark = pytest.mark.timeout(600)

ROOT = REPO
PLUGIN = ROOT / "editor-clients" / "neovim"
TEST_DATA = ROOT / "editor-clients" / "test-data"


@pytest.fixture(scope="module")
def nvim() -> str:
    """The nvim executable ($PREWRITE_NVIM or nvim on PATH); required in CI."""
    exe = shutil.which(os.environ.get("PREWRITE_NVIM", "nvim"))
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("nvim is required in CI: `make clients-test` installs it with apt-get")
        pytest.skip("nvim is not installed: `apt-get install neovim` or `make clients-test`")
    return exe


def run_script(nvim: str, script: str, tmp_path: Path, env: dict[str, str], timeout: float) -> dict:
    """Run a test script in headless Neovim and return the result it wrote."""
    result = tmp_path / "result.json"
    tests = PLUGIN / "tests"
    command = [
        nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n",
        "--cmd", f"set runtimepath^={PLUGIN} noswapfile",
        "--cmd", f"lua package.path = '{tests}/?.lua;' .. package.path",
        "--cmd", "filetype on",
        "-c", f"luafile {tests / script}",
    ]  # fmt: skip
    # Neovim's LSP log and state go to the test's folder, not the user's ...
    xdg = {
        f"XDG_{kind}_HOME": str(tmp_path / kind.lower())
        for kind in ("STATE", "DATA", "CONFIG", "CACHE")
    }
    # ... and so does the plugin's cache; the server keeps finding the models where they are.
    models = {"PREWRITE_CACHE": str(cache_root())}
    full_env = {**os.environ, **xdg, **models, **env, "PREWRITE_RESULT": str(result)}
    proc = subprocess.run(
        command, cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=timeout
    )
    if not result.exists():
        pytest.fail(f"{script} wrote no result (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    report = json.loads(result.read_text())
    failed = [f"{step['name']}: {step['detail']}" for step in report["steps"] if not step["ok"]]
    assert not failed and report["ok"], "\n".join(failed) + f"\ndata: {report['data']}"
    return report


def test_ghost_text_geometry(nvim: str, tmp_path: Path) -> None:
    """Drawing, multi-line virtual lines, ranges, tabs, accepting, the restart policy; no server."""
    report = run_script(nvim, "unit.lua", tmp_path, {}, timeout=60)
    assert len(report["steps"]) >= 15


def test_draft_examples_as_virtual_text(nvim: str, tmp_path: Path) -> None:
    """A draft's examples fed to the prewrite/draft handler: the label after the ghost text or
    alone at the end of the spec line, its highlight, the statusline, what clears it; no server."""
    report = run_script(nvim, "examples.lua", tmp_path, {}, timeout=60)
    assert len(report["steps"]) >= 10


def scenario_env(tmp_path: Path, model: str) -> tuple[dict[str, str], Path]:
    """The environment of a script on the real server with the scenario's file, and that file."""
    scenario = json.loads((TEST_DATA / "scenario.json").read_text())
    assert scenario["settings"]["model"] == model
    source = tmp_path / "geometry.py"
    shutil.copy(TEST_DATA / scenario["file"], source)
    env = {
        "PREWRITE_PYTHON": str(ROOT / ".venv" / "bin" / "python"),
        "PREWRITE_SCENARIO": str(TEST_DATA / "scenario.json"),
        "PREWRITE_FILE": str(source),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    return env, source


@pytest.mark.real_model
def test_end_to_end_on_the_real_server(nvim: str, real_model_name: str, tmp_path: Path) -> None:
    """Tab fallback, live preview, trigger, ghost text, dismiss on typing, accept, status."""
    env, source = scenario_env(tmp_path, real_model_name)
    report = run_script(nvim, "e2e.lua", tmp_path, env, timeout=450)
    data = report["data"]
    assert data["buffer"].startswith(source.read_text().rstrip("\n"))
    assert data["ghost"] and "midpoint" in data["buffer"]


@pytest.mark.real_model
def test_crash_recovery_on_the_real_server(nvim: str, real_model_name: str, tmp_path: Path) -> None:
    """SIGKILL while typing: restarting shown, ready again, buffer re-attached, trigger answered."""
    env, _ = scenario_env(tmp_path, real_model_name)
    report = run_script(nvim, "crash.lua", tmp_path, env, timeout=450)
    data = report["data"]
    shown = ("nvim", "crash_to_ready_ms", "crash_to_answer_ms", "typed_while_restarting")
    print(json.dumps({key: data[key] for key in shown}))
    assert data["ghost"]


@pytest.mark.real_model
def test_defaults_typing_through_partial_accepts_and_a_language_off(
    nvim: str, real_model_name: str, tmp_path: Path
) -> None:
    """Languages from the server, the automatic trigger, the draft status, typing through the
    ghost text with no request, accepting a word and a line, one language switched off."""
    env, source = scenario_env(tmp_path, real_model_name)
    script = tmp_path / "other.js"
    script.write_text("const zero = 0;\n")
    env["PREWRITE_JS"] = str(script)
    report = run_script(nvim, "features.lua", tmp_path, env, timeout=450)
    data = report["data"]
    print(json.dumps({key: data.get(key) for key in ("nvim", "last_key_to_ghost_ms", "answer")}))
    assert "python" in data["language_ids"]


def test_health_reports_a_missing_model_with_the_command_that_installs_it(
    nvim: str, tmp_path: Path
) -> None:
    """:checkhealth prewrite on a server whose model pack is not installed (no model loads)."""
    env, _ = scenario_env(tmp_path, "smollm2-135m")
    env["PREWRITE_MODEL"] = "qwen2.5-coder-1.5b"
    env["PREWRITE_CACHE"] = str(tmp_path / "no-packs")  # not installed, whatever this machine has
    report = run_script(nvim, "health.lua", tmp_path, env, timeout=120)
    assert "prewrite models install qwen2.5-coder-1.5b" in "\n".join(report["data"]["health"])


def servers_left(marker: str) -> list[int]:
    """Pids of processes whose environment carries `marker` (what a test's Neovim started)."""
    pids = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in environ.read_bytes().split(b"\0"):
                pids.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return pids


@pytest.mark.real_model
def test_crash_limit_and_clean_stops(nvim: str, real_model_name: str, tmp_path: Path) -> None:
    """Crashes past the limit stop the restarts (one message); clean stops and quitting are no
    crash; edits made while stopped reach the restarted server."""
    env, _ = scenario_env(tmp_path, real_model_name)
    run_id = str(uuid.uuid4())
    env["PREWRITE_TEST_RUN"] = run_id
    marker = f"PREWRITE_TEST_RUN={run_id}"
    report = run_script(nvim, "crash_limit.lua", tmp_path, env, timeout=450)
    shown = ("nvim", "message", "halted", "lsp_stopped")
    print(json.dumps({key: report["data"].get(key) for key in shown}))
    # Quitting stopped the last server (Neovim waits for it, then sends SIGTERM): none is left.
    deadline = time.monotonic() + 10
    while servers_left(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers_left(marker) == [], "a server outlived Neovim"


def test_readme_settings_table_matches_the_server_schema() -> None:
    """The README's server settings table is the schema's (regenerate with the script)."""
    import importlib.util

    from lsp_server.config import settings_schema

    script = PLUGIN / "scripts" / "settings_table.py"
    spec = importlib.util.spec_from_file_location("settings_table", script)
    assert spec is not None and spec.loader is not None
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    readme = (PLUGIN / "README.md").read_text()
    assert table.section(readme) == table.render(settings_schema()), (
        f"run `.venv/bin/python {script.relative_to(ROOT)}` to regenerate the table"
    )


@pytest.mark.real_model
def test_a_changed_docstring_updates_the_body_through_a_code_action(
    nvim: str, code_model_name: str, tmp_path: Path
) -> None:
    """The Hint after a sentence is added to a docstring, prewrite's code action through
    `vim.lsp.buf.code_action()`, the body updated with the person's lines kept."""
    env, _ = scenario_env(tmp_path, "smollm2-135m")
    source = tmp_path / "chunks.py"
    shutil.copy(TEST_DATA / "chunks.py", source)
    env.update({"PREWRITE_FILE": str(source), "PREWRITE_MODEL": code_model_name})
    report = run_script(nvim, "respec.lua", tmp_path, env, timeout=450)
    data = report["data"]
    print(json.dumps({key: data.get(key) for key in ("nvim", "hint", "title")}))
    assert data["title"] == "prewrite: update the body to the docstring"
