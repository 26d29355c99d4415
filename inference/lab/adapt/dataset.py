"""The training data folder: train.jsonl, validation.jsonl and manifest.json; the split; reading it.

A row holds one prefix prompt and its target. `answer_ids`, when present, are the exact answer
tokens (self-distillation) and are only meaningful under the tokenizer named in the manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from inference.lab.adapt.errors import DatasetError

FORMAT = "prewrite-adapt-data/1"
MANIFEST = "manifest.json"
TRAIN, VALIDATION = "train", "validation"
ROW_FIELDS = {"id": str, "prompt": str, "answer": str, "typed": int, "units": int}


def choose_validation(names: Iterable[str], fraction: float) -> set[str]:
    """Which functions (by body hash) go to validation: a fixed, hash-ordered share.

    The order is a salted hash, not the input order, so the split does not follow the source
    tree; at least one function is held out whenever there are two or more.
    """
    ordered = sorted(set(names), key=lambda name: hashlib.sha256(f"split:{name}".encode()).digest())
    count = round(fraction * len(ordered))
    if fraction > 0 and len(ordered) >= 2:
        count = max(count, 1)
    return set(ordered[:count])


class RowWriter:
    """Writes rows to SPLIT.jsonl.partial files and renames them into place on close."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.counts = {TRAIN: 0, VALIDATION: 0}
        self._files: dict[str, IO[str]] = {
            split: (folder / f"{split}.jsonl.partial").open("w", encoding="utf-8")
            for split in self.counts
        }

    def write(self, rows: list[dict[str, Any]]) -> None:
        """Append rows to their split's file."""
        for row in rows:
            self._files[row["split"]].write(json.dumps(row, ensure_ascii=False) + "\n")
            self.counts[row["split"]] += 1

    def close(self) -> None:
        """Finish both files (atomically renamed: a reader never sees a half-written split)."""
        for split, handle in self._files.items():
            handle.close()
            os.replace(handle.name, self.folder / f"{split}.jsonl")


def write_manifest(folder: Path, manifest: dict[str, Any]) -> Path:
    """Write manifest.json."""
    path = folder / MANIFEST
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_manifest(folder: Path) -> dict[str, Any]:
    """The data folder's manifest, checked for its format."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(
            f"{folder}: no readable {MANIFEST} ({exc.strerror}); build it with "
            "`prewrite adapt build-data`"
        ) from exc
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON: {exc.msg}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DatasetError(f"{path}: not a prewrite adapt data manifest ({FORMAT})")
    return manifest


def read_rows(folder: Path, split: str) -> list[dict[str, Any]]:
    """The rows of one split, each checked for the fields training needs."""
    path = folder / f"{split}.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(f"{folder}: no readable {path.name} ({exc.strerror})") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            rows.append(_row(line, f"{path}:{number}"))
    return rows


def _row(line: str, where: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: not JSON: {exc.msg}") from exc
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: not a JSON object")
    wrong = [key for key, kind in ROW_FIELDS.items() if not isinstance(row.get(key), kind)]
    if wrong:
        raise DatasetError(f"{where}: missing or mistyped {', '.join(wrong)}")
    ids = row.get("answer_ids")
    if ids is not None and not (
        isinstance(ids, list) and ids and all(isinstance(i, int) and i >= 0 for i in ids)
    ):
        raise DatasetError(f"{where}: answer_ids must be a non-empty list of token ids or null")
    return row
