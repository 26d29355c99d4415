"""The server's own file I/O on the event loop: the workspace prewrite.toml and the JSONL trace."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiofiles

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from lsp_server.errors import SettingsError

SETTINGS_FILE = "prewrite.toml"


async def read_workspace_settings(root: str | None) -> dict[str, Any]:
    """Settings from `<root>/prewrite.toml` (top-level keys), {} when there is none."""
    if not root:
        return {}
    path = Path(root) / SETTINGS_FILE
    try:
        async with aiofiles.open(path, "rb") as handle:
            data = await handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc}", []) from exc
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path} is not valid TOML: {exc}", []) from exc


class Trace:
    """Appends one JSON line per trigger to a file, in order, without holding up the answer."""

    def __init__(self, on_error: Callable[[BaseException], None]):
        self.path: Path | None = None
        self._on_error = on_error
        self._lock = asyncio.Lock()
        self._pending: set[asyncio.Task[None]] = set()

    def configure(self, path: str, root: str | None) -> None:
        """Trace to `path` (relative to the workspace root); an empty path turns tracing off."""
        if not path:
            self.path = None
            return
        target = Path(path).expanduser()
        self.path = target if target.is_absolute() or not root else Path(root) / target

    def record(self, entry: dict[str, Any]) -> None:
        """Queue one entry; it is written after the current answer has gone out."""
        if self.path is None:
            return
        line = json.dumps({"time": round(time.time(), 3), **entry}) + "\n"
        task = asyncio.ensure_future(self._append(self.path, line))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def flush(self) -> None:
        """Wait until every queued entry is written."""
        if self._pending:
            await asyncio.gather(*self._pending)

    async def _append(self, path: Path, line: str) -> None:
        async with self._lock:
            if path != self.path:  # tracing was turned off (or failed) since this was queued
                return
            try:
                async with aiofiles.open(path, "a", encoding="utf-8") as handle:
                    await handle.write(line)
            except OSError as exc:
                self.path = None  # tell once, then stop trying
                self._on_error(exc)
