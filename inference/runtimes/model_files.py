"""Which files a model name stands for: a pack, a local folder, a GGUF file or a hub id.

Both runtimes start here. A pack's folder holds its verified GGUF, the tokenizer and the
configuration (and safetensors weights once the torch runtime has asked for them); a local
folder holds Hugging Face files, a GGUF, or both; a `.gguf` file carries everything itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference import packs
from inference.errors import ModelFolderError, ModelNotFoundError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

GGUF_MAGIC = b"GGUF"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "tokenizer_config.json")


@dataclass(frozen=True)
class ModelFiles:
    """Where a model's parts are; `folder` holds Hugging Face files, `gguf` the GGUF file."""

    name: str
    folder: Path | None = None
    gguf: Path | None = None
    hub_id: str | None = None
    pack: str | None = None

    @property
    def has_weights(self) -> bool:
        """True when Hugging Face weights are there to load (or a hub id can fetch them)."""
        return self.hub_id is not None or (
            self.folder is not None and packs.has_weights(self.folder)
        )

    @property
    def has_tokenizer_files(self) -> bool:
        """True when the folder carries a Hugging Face tokenizer."""
        folder = self.folder
        return folder is not None and any((folder / f).is_file() for f in _TOKENIZER_FILES)


def resolve(name: str) -> ModelFiles:
    """The files behind `name`: an installed pack, a folder, a .gguf file or a hub id."""
    if name in packs.PACKS:
        folder = packs.installed_path(name)
        return ModelFiles(name, folder, packs.gguf_path(name), pack=name)
    path = Path(name).expanduser()
    if path.exists() or name.startswith((".", "/", "~")):
        if path.is_file():
            check_gguf(path)
            return ModelFiles(name, gguf=path)
        if not path.is_dir():
            raise ModelFolderError(f"model folder {path} does not exist or is not a folder")
        return ModelFiles(name, path, _folder_gguf(path))
    if name.count("/") == 1 and not os.environ.get("HF_HUB_OFFLINE"):
        return ModelFiles(name, hub_id=name)  # for users who are online
    known = ", ".join(packs.PACKS)
    raise ModelNotFoundError(
        f"model {name!r} is neither a model pack ({known}), a local folder or .gguf file, "
        "nor a hub id"
    )


def check_model_folder(path: Path) -> None:
    """Raise ModelFolderError naming what a Hugging Face model folder lacks."""
    if not path.is_dir():
        raise ModelFolderError(f"model folder {path} does not exist or is not a folder")
    missing = []
    if not (path / "config.json").is_file():
        missing.append("config.json")
    if not packs.has_weights(path):
        missing.append("weights (*.safetensors or *.bin)")
    if not any((path / f).is_file() for f in _TOKENIZER_FILES):
        missing.append("tokenizer files (tokenizer.json or tokenizer_config.json)")
    if missing:
        raise ModelFolderError(f"model folder {path} is missing: {', '.join(missing)}")


def check_gguf(path: Path) -> None:
    """Raise ModelFolderError unless `path` starts like a GGUF file."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelFolderError(f"cannot read model file {path}: {exc}") from exc
    if magic != GGUF_MAGIC:
        raise ModelFolderError(
            f"{path} is not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r})"
        )


def load_tokenizer(files: ModelFiles, trust_remote_code: bool = False) -> PreTrainedTokenizerBase:
    """The Hugging Face tokenizer: the folder's own files, else the one inside the GGUF."""
    from transformers import AutoTokenizer

    try:
        if files.has_tokenizer_files or files.hub_id is not None:
            source = str(files.folder) if files.folder is not None else files.hub_id
            return AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
        if files.gguf is not None:
            return AutoTokenizer.from_pretrained(files.gguf.parent, gguf_file=files.gguf.name)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFolderError(f"could not load the tokenizer of {files.name!r}: {exc}") from exc
    raise ModelFolderError(
        f"model folder {files.folder} is missing: tokenizer files "
        "(tokenizer.json or tokenizer_config.json)"
    )


def load_config(files: ModelFiles) -> Any:
    """The model's transformers config: the folder's config.json, else read from the GGUF."""
    from transformers import AutoConfig

    try:
        if files.folder is not None and (files.folder / "config.json").is_file():
            return AutoConfig.from_pretrained(files.folder)
        if files.gguf is not None:
            return AutoConfig.from_pretrained(files.gguf.parent, gguf_file=files.gguf.name)
        return AutoConfig.from_pretrained(str(files.hub_id))
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFolderError(f"could not read the config of {files.name!r}: {exc}") from exc


def configured_eos(files: ModelFiles) -> Any:
    """The generation config's eos_token_id (an id, a list of ids or None) from the folder."""
    folder = files.folder
    if folder is None or not (folder / "generation_config.json").is_file():
        return None
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(folder).eos_token_id
    except (OSError, ValueError) as exc:
        raise ModelFolderError(f"unreadable generation_config.json in {folder}: {exc}") from exc


def _folder_gguf(folder: Path) -> Path | None:
    """The one GGUF file in a folder, None if there is none; several are ambiguous."""
    found = sorted(folder.glob("*.gguf"))
    if len(found) > 1:
        names = ", ".join(p.name for p in found)
        raise ModelFolderError(
            f"model folder {folder} holds several GGUF files ({names}): name one of them"
        )
    if found:
        check_gguf(found[0])
    return found[0] if found else None
