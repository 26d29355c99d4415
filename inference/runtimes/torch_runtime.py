"""The torch runtime: a transformers model on the CPU or CUDA, one DynamicCache per sequence.

It is the runtime of CUDA machines (bfloat16), of adapters being trained, of the parallel
drafter (a gated LoRA inside the model), and of the tiny float64 models in the tests.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from transformers import AutoModelForCausalLM, DynamicCache, PreTrainedTokenizerBase

from inference import packs
from inference.api import RuntimeInfo
from inference.errors import ModelFolderError
from inference.runtimes import model_files
from inference.runtimes.base import Feed, ForwardHook, Output, ShapeHints, eos_ids
from inference.runtimes.device import resolve_device, resolve_dtype, set_threads
from inference.runtimes.machine import describe_cpu
from inference.runtimes.model_files import ModelFiles

if TYPE_CHECKING:
    from inference.adapters.drafter import Drafter, DrafterMode
    from inference.config import EngineConfig


@dataclass
class LoadedModel:
    """A causal LM ready for inference, with what the engine needs to know about it."""

    name: str
    model: torch.nn.Module
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    dtype: torch.dtype
    drafter: Drafter | None = None

    @property
    def context_length(self) -> int:
        """The longest sequence (prompt + answer) the model accepts."""
        config = self.model.config
        return int(getattr(config, "max_position_embeddings", None) or 2048)


def weights_source(files: ModelFiles) -> tuple[str, str | None]:
    """Where from_pretrained reads weights: (folder or hub id, GGUF file name or None).

    A pack gets its safetensors written from its GGUF the first time they are needed.
    """
    if files.pack is not None:
        return str(packs.ensure_weights(files.pack, quiet=True)), None
    if files.hub_id is not None:
        return files.hub_id, None
    if files.folder is not None and (files.has_weights or files.gguf is None):
        model_files.check_model_folder(files.folder)
        return str(files.folder), None
    assert files.gguf is not None  # de-quantised in memory at every load
    return str(files.gguf.parent), files.gguf.name


def load_model(
    name: str,
    device: torch.device,
    dtype: torch.dtype,
    *,
    trust_remote_code: bool = False,
    adapter: str | None = None,
    drafter: str | None = None,
    drafter_block: int | None = None,
    drafter_mode: DrafterMode = "fused",
) -> LoadedModel:
    """Load `name` onto `device` in `dtype`, in eval mode, with `adapter` merged in if given.

    A `drafter` is put on top, unmerged, with its gate closed: the model's forwards stay
    exactly the base model's unless the engine opens the gate at noisy positions.
    """
    files = model_files.resolve(name)
    source, gguf_file = weights_source(files)
    tokenizer = model_files.load_tokenizer(files, trust_remote_code)
    try:
        model: torch.nn.Module = AutoModelForCausalLM.from_pretrained(
            source, gguf_file=gguf_file, dtype=dtype, trust_remote_code=trust_remote_code
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFolderError(f"could not load model {name!r} from {source}: {exc}") from exc
    if adapter is not None:
        from inference.adapters.adapter import apply_adapter  # peft costs a second and a half

        model = apply_adapter(model, adapter, name)
    parallel = None
    if drafter is not None:
        from inference.adapters.drafter import load_drafter

        model, parallel = load_drafter(model, drafter, name, block=drafter_block, mode=drafter_mode)
    model = model.to(device).eval()  # type: ignore[arg-type]
    return LoadedModel(name, model, tokenizer, device, dtype, parallel)


class TorchSequence:
    """One sequence's DynamicCache."""

    def __init__(self) -> None:
        self.cache = DynamicCache()
        self.length = 0

    @property
    def cache_bytes(self) -> int:
        """The keys and values held, every layer."""
        tensors = [getattr(layer, name, None) for layer in self.cache.layers
                   for name in ("keys", "values")]  # fmt: skip
        return sum(t.nbytes for t in tensors if isinstance(t, torch.Tensor))

    def truncate(self, length: int) -> None:
        """Keep the first `length` cached tokens."""
        if length >= self.length:
            return
        if length == 0:
            self.cache = DynamicCache()
        else:
            self.cache.crop(-(self.length - length))  # transformers 5: negative = drop
        self.length = length

    def fork(self) -> TorchSequence:
        """A copy of this cache (its tensors copied: a DynamicCache cannot share them)."""
        twin = TorchSequence()
        twin.cache, twin.length = copy.deepcopy(self.cache), self.length
        return twin

    def settle(self) -> None:
        """Nothing runs ahead in process."""

    def close(self) -> None:
        """Drop the cache."""
        self.truncate(0)


class TorchRuntime:
    """A LoadedModel behind the runtime seam; forwards run one sequence at a time."""

    def __init__(self, loaded: LoadedModel, eos: frozenset[int]):
        self.loaded = loaded
        self.name = loaded.name
        self.tokenizer = loaded.tokenizer
        self.context_length = loaded.context_length
        self.eos_ids = eos
        self.drafter = loaded.drafter
        self.batch_limit = 1  # each sequence has its own DynamicCache: one forward each
        self.evictions = 0  # the engine's memory budget evicts (`MemoryBudget`)
        # a forward's fixed cost dominates (2 threads, qwen 0.5B fp32: 1 token 201 ms, 9 tokens
        # 469 ms, 150 tokens 1455 ms): propose freely, verify in one pass
        self.hints = ShapeHints(lookahead=8, verify_chunk=0)
        self.on_forward: ForwardHook = lambda tokens: None
        self.info = RuntimeInfo(
            kind="torch",
            device=str(loaded.device),
            dtype=str(loaded.dtype).removeprefix("torch."),
            threads=torch.get_num_threads(),
            version=torch.__version__,
            extra={"cpu": describe_cpu(torch.backends.cpu.get_cpu_capability())}
            if loaded.device.type == "cpu" else {},
        )  # fmt: skip

    @classmethod
    def load(cls, config: EngineConfig) -> TorchRuntime:
        """Load the configured model on the configured device in the configured dtype."""
        set_threads(config.threads)
        device = resolve_device(config.device)
        loaded = load_model(
            config.model,
            device,
            resolve_dtype(device, config.dtype),
            trust_remote_code=config.trust_remote_code,
            adapter=config.adapter,
            drafter=config.drafter,
            drafter_block=config.drafter_block,
            drafter_mode=config.drafter_mode,
        )
        generation = getattr(loaded.model, "generation_config", None)
        return cls(loaded, eos_ids(loaded.tokenizer, getattr(generation, "eos_token_id", None)))

    def open_sequence(self) -> TorchSequence:
        """A new, empty DynamicCache."""
        return TorchSequence()

    def forward(self, feeds: Sequence[Feed]) -> list[Output]:
        """One model forward per feed."""
        return [self._forward(feed) for feed in feeds]

    def close(self) -> None:
        """Nothing to free beyond what garbage collection frees."""

    def _forward(self, feed: Feed) -> Output:
        sequence = feed.sequence
        assert isinstance(sequence, TorchSequence)
        drafter = self.drafter if feed.noise else None
        n = len(feed.tokens)
        ids = feed.tokens + ([drafter.noise_id] * feed.noise if drafter else [])
        device = self.loaded.device
        input_ids = torch.tensor([ids], dtype=torch.long, device=device)  # [1, n + noise]
        gate = torch.zeros((1, len(ids)), dtype=torch.bool, device=device)  # [1, n + noise]
        gate[0, n:] = True
        wanted = len(ids) - feed.first_row  # the lm_head runs over these last rows only
        with torch.inference_mode(), drafter.gate.open_at(gate) if drafter else nullcontext():
            out = self.loaded.model(
                input_ids=input_ids, cache=sequence.cache, use_cache=True, logits_to_keep=wanted
            )
        self.on_forward(len(ids))
        logits = out.logits[0].float()  # [n - first_row + noise, V]
        if len(ids) > n:  # the noisy keys and values were computed with the LoRA: drop them
            sequence.cache.crop(-(len(ids) - n))
        sequence.length += n
        clean = n - feed.first_row
        return Output(logits[:clean], logits[clean:] if drafter else None)
