"""The house's layers (import-linter contracts in pyproject.toml) and what the server loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO

ROOT = REPO


def test_import_contracts_are_kept() -> None:
    # lint-imports reads the contracts from pyproject.toml: layers one way, no cycles, the
    # product without the lab, the server without tensors.
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 kept, 0 broken" in done.stdout


def test_the_server_starts_without_the_lab_or_torch() -> None:
    # What `prewrite serve` imports before its first message: the parser and the server.
    script = (
        "import json, sys\n"
        "from lsp_server.cli import build_parser\n"
        "build_parser(['serve']).parse_args(['serve'])\n"
        "from lsp_server.server import create_server\n"
        "create_server()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    loaded = set(json.loads(done.stdout))
    assert "lsp_server.server" in loaded
    lab = sorted(name for name in loaded if name.startswith(("inference.lab", "lsp_server.lab")))
    assert lab == []
    assert not loaded & {"torch", "transformers", "peft", "llama_cpp", "inference.engine"}


def test_a_lab_command_loads_only_its_own_module() -> None:
    from lsp_server.cli import LAB_COMMANDS, build_parser

    script = (
        "import json, sys\n"
        "from lsp_server.cli import build_parser\n"
        "build_parser(sys.argv[1:])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "bench-lsp", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    loaded = set(json.loads(done.stdout))
    assert "lsp_server.lab.benchlsp.cli" in loaded
    assert not any(name.startswith("inference.lab.") for name in loaded)
    # The whole help still lists every command.
    every = build_parser().format_help()
    assert all(name in every for name in LAB_COMMANDS)
