"""A `prewrite adapt train` adapter (peft LoRA) as the GGUF LoRA that llama.cpp applies at run time.

llama.cpp reads `<base tensor>.lora_a` [r, in] and `.lora_b` [out, r] (numpy order, as peft saves
them) and scales B·A by alpha / r, as peft does with `lora_alpha / r`. A Llama GGUF stores q and
k with its rows permuted for its rope layout, so their B matrices are permuted the same way. The
file is written beside the adapter once and again whenever the adapter's weights change.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from inference.adapters.adapter import PEFT_CONFIG, adapter_folder
from inference.adapters.errors import AdapterFolderError, AdapterMismatchError

GGUF_LORA = "prewrite-lora.gguf"
SOURCE_KEY = "prewrite.adapter_sha256"
_PERMUTED = {"q_proj": "head_count", "k_proj": "head_count_kv"}  # rope-ordered rows (Llama)


def gguf_lora(name: str, base_gguf: Path) -> Path:
    """The adapter `name` as a GGUF LoRA for the model in `base_gguf` (converted when stale)."""
    folder = adapter_folder(name)
    weights = folder / "adapter_model.safetensors"
    if not weights.is_file():
        raise AdapterFolderError(f"adapter folder {folder} has no adapter_model.safetensors")
    base = _Base.read(base_gguf)
    source = _digest(weights, base)
    out = folder / GGUF_LORA
    if out.is_file() and _recorded_source(out) == source:
        return out
    config = json.loads((folder / PEFT_CONFIG).read_text(encoding="utf-8"))
    partial = out.with_suffix(".gguf.partial")
    _write(partial, _lora_tensors(weights, base), base.arch, _alpha(config), source)
    partial.replace(out)
    return out


def _alpha(config: dict[str, Any]) -> float:
    """The alpha that makes llama.cpp's alpha / r equal peft's scaling."""
    r, alpha = int(config["r"]), float(config.get("lora_alpha", config["r"]))
    if config.get("use_rslora"):
        return alpha * math.sqrt(r)  # peft: alpha / sqrt(r)
    return alpha


@dataclass(frozen=True)
class _Base:
    """What the LoRA must fit in the base GGUF: its architecture and tensor shapes [in, out]."""

    arch: str
    blocks: int
    head_count: int
    head_count_kv: int
    shapes: dict[str, tuple[int, ...]]

    @classmethod
    def read(cls, path: Path) -> _Base:
        import gguf

        reader = gguf.GGUFReader(path)

        def field(key: str) -> Any:
            value = reader.fields[key]
            part = value.parts[value.data[0]]
            return bytes(part).decode() if value.types[0].name == "STRING" else int(part[0])

        arch = field("general.architecture")
        shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}
        return cls(arch, field(f"{arch}.block_count"), field(f"{arch}.attention.head_count"),
                   field(f"{arch}.attention.head_count_kv"), shapes)  # fmt: skip

    def misfit(self, name: str, array: np.ndarray) -> str | None:
        """Why a LoRA tensor does not fit its base tensor, or None."""
        shape = self.shapes.get(name.rsplit(".lora_", 1)[0])
        if shape is None:
            return f"{name}: the model has no such tensor"
        is_a = name.endswith("lora_a")
        width, expected = (array.shape[1], shape[0]) if is_a else (array.shape[0], shape[1])
        return None if width == expected else f"{name} is {width} wide, the model's is {expected}"


def _lora_tensors(weights: Path, base: _Base) -> dict[str, np.ndarray]:
    """GGUF tensor name -> float32 array, for every LoRA A and B of the adapter."""
    import gguf
    from safetensors.numpy import load_file

    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[base.arch.upper()], base.blocks)
    tensors: dict[str, np.ndarray] = {}
    for key, value in load_file(str(weights)).items():
        module, _, part = key.rpartition(".lora_")  # ...layers.0.self_attn.q_proj, A.weight
        hf_name = module.removeprefix("base_model.model.")
        target = names.get_name(hf_name)
        if target is None or part not in ("A.weight", "B.weight"):
            raise AdapterMismatchError(f"adapter tensor {key} has no place in a {base.arch} GGUF")
        array = value.astype(np.float32)
        heads = _PERMUTED.get(hf_name.rsplit(".", 1)[-1])
        if part == "B.weight" and base.arch == "llama" and heads:
            array = _rope_permute(array, getattr(base, heads))
        name = f"{target}.weight.lora_{part[0].lower()}"
        problem = base.misfit(name, array)
        if problem:
            raise AdapterMismatchError(f"the adapter does not fit the model: {problem}")
        tensors[name] = array
    return tensors


def _rope_permute(weight: np.ndarray, heads: int) -> np.ndarray:
    """Rows from transformers' rotate-half order to llama.cpp's interleaved pairs."""
    shape = weight.shape
    pairs = weight.reshape(heads, 2, shape[0] // heads // 2, *shape[1:])
    return pairs.swapaxes(1, 2).reshape(shape)


def _digest(weights: Path, base: _Base) -> str:
    digest = hashlib.sha256()
    digest.update(f"{base.arch}/{base.head_count}/{base.head_count_kv}".encode())
    with open(weights, "rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _recorded_source(path: Path) -> str | None:
    import gguf

    try:
        value = gguf.GGUFReader(path).fields.get(SOURCE_KEY)
    except (OSError, ValueError):
        return None
    return bytes(value.parts[value.data[0]]).decode() if value is not None else None


def _write(
    path: Path, tensors: dict[str, np.ndarray], arch: str, alpha: float, source: str
) -> None:
    import gguf

    writer = gguf.GGUFWriter(path, arch)
    writer.add_type("adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    writer.add_string(SOURCE_KEY, source)
    for name, array in sorted(tensors.items()):
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
