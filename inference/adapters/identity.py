"""What identifies a base model and a tokenizer, so an adapter or a dataset is used with its own.

Names do not (a pack name, its folder and a copy of it are the same model), so a model is
identified by its shapes and by a signature of its weights: the mean absolute value of a few
embedding rows. That survives loading in another dtype (bfloat16 on CUDA, float32 on the CPU)
up to rounding, yet differs between any two trained or random models.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

SHAPE_KEYS = ("model_type", "vocab_size", "hidden_size", "num_hidden_layers",
              "num_attention_heads", "num_key_value_heads", "intermediate_size")  # fmt: skip
SIGNATURE_ROWS = 32
SIGNATURE_TOLERANCE = 1e-2  # relative; bfloat16 rounding moves a row's mean |w| by < 0.4%


def model_identity(model: torch.nn.Module) -> dict[str, Any]:
    """The model's shapes and its embedding signature."""
    config = model.config  # type: ignore[union-attr]
    shapes = {key: getattr(config, key, None) for key in SHAPE_KEYS}
    return {"shapes": shapes, "signature": embedding_signature(model)}


def embedding_signature(model: torch.nn.Module) -> list[float]:
    """Mean |w| of SIGNATURE_ROWS evenly spaced rows of the input embedding."""
    weight = model.get_input_embeddings().weight.detach()  # type: ignore[operator]  # [V, H]
    rows = torch.linspace(0, weight.shape[0] - 1, SIGNATURE_ROWS).long().to(weight.device)
    return [float(v) for v in weight[rows].double().abs().mean(dim=1)]


def gguf_identity(path: Path, config: Any) -> dict[str, Any]:
    """The identity of the model in a GGUF file (its config read beside it or from it)."""
    shapes = {key: getattr(config, key, None) for key in SHAPE_KEYS}
    return {"shapes": shapes, "signature": gguf_embedding_signature(path)}


def gguf_embedding_signature(path: Path) -> list[float]:
    """`embedding_signature` of a GGUF's token embedding, de-quantising only those rows."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(path)
    table = next(t for t in reader.tensors if t.name == "token_embd.weight")
    rows = np.linspace(0, table.data.shape[0] - 1, SIGNATURE_ROWS).astype(np.int64)
    values = gguf.quants.dequantize(table.data[rows], table.tensor_type)  # [rows, H]
    return [float(v) for v in np.abs(values.astype(np.float64)).mean(axis=1)]


def identity_problem(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """How `actual` differs from `expected` (shapes first), or None when they match."""
    for key, value in expected.get("shapes", {}).items():
        if actual["shapes"].get(key) != value:
            return f"{key} is {actual['shapes'].get(key)}, the adapter expects {value}"
    want, have = expected.get("signature") or [], actual["signature"]
    if len(want) != len(have) or any(
        abs(a - b) > SIGNATURE_TOLERANCE * max(abs(a), abs(b), 1e-12)
        for a, b in zip(want, have, strict=False)
    ):
        return "same shapes, different weights (the embedding signature differs)"
    return None


def tokenizer_signature(tokenizer: PreTrainedTokenizerBase) -> str:
    """A hash of the vocabulary: token ids in a dataset mean the same tokens only under it."""
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    return hashlib.sha256(json.dumps(vocab, ensure_ascii=False).encode("utf-8")).hexdigest()[:24]
