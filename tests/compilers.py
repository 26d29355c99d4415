"""The languages' own compilers, for tests that check that an accepted answer builds."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TSC = ROOT / "editor-clients" / "vscode" / "node_modules" / "typescript" / "bin" / "tsc"


def tool(path: Path | None, what: str) -> str:
    """A compiler's path; missing is a failure in CI (make test installs it), else a skip."""
    if path is not None and path.exists():
        return str(path)
    message = f"{what} is not installed (make test installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def compile_errors(source: Path) -> str:
    """The compiler's complaints about `source` ('' when it compiles): `tsc` for TypeScript,
    `javac` for Java, Python's own parser for Python."""
    if source.suffix == ".py":
        try:
            compile(source.read_text(encoding="utf-8"), str(source), "exec")
        except SyntaxError as error:
            return f"{error.msg} at line {error.lineno}"
        return ""
    if source.suffix == ".ts":
        command = ["node", tool(TSC, "typescript"), "--noEmit", "--target", "es2020", str(source)]
    else:
        javac = shutil.which("javac")
        compiler = tool(Path(javac) if javac else None, "javac")
        command = [compiler, "-d", str(source.parent), str(source)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return "" if done.returncode == 0 else (done.stdout + done.stderr).strip()
