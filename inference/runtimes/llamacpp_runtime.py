"""The llama.cpp runtime: a GGUF file in one llama.cpp context, a sequence id per session.

Through llama-cpp-python's low-level API (`llama_decode` over a `llama_batch`). With
batch-invariant numerics (llamacpp_numerics.py: where the build allows it) each sequence has a
KV stream of its own, `context_size / sequences` cells, and any batch gives one-token decoding's
logits bit for bit; with `fast` numerics the KV cache is unified, its cells shared by all
sequences (split per sequence with the fast kernels, 1 argmax in 40 differed here). Sequence
ids are handed out on first use; when they run out, or the shared cells do, the least recently
used idle sequence is evicted: its cache is dropped and the engine encodes its tokens again
when it comes back. Logits are computed only for the rows a feed asks for
(the lm_head over all 150 rows of a verify pass was about 30% of it on a 2-core CPU).

Where llama.cpp was built with its AMX kernels (a native build on a Sapphire Rapids or later
Xeon), the weights stay in plain CPU buffers: those kernels crashed the process (SIGSEGV in
`ggml_backend_amx_mul_mat`) on the first forward of more than one token on such a machine here,
as in llama.cpp issue 20824, closed unfixed. `PREWRITE_LLAMACPP_AMX=1` lets them run.
"""

from __future__ import annotations

import ctypes
import itertools
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from inference.api import RuntimeInfo
from inference.errors import ConfigError, ContextOverflowError, ModelFolderError, RuntimeFailure
from inference.runtimes import model_files
from inference.runtimes.base import Feed, ForwardHook, Output, ShapeHints, eos_ids
from inference.runtimes.cpu_load import FreeCores
from inference.runtimes.llamacpp_numerics import TILED_VARIABLE, choose_numerics
from inference.runtimes.machine import amx_state, describe_cpu, llamacpp_vector
from inference.runtimes.model_files import ModelFiles

if TYPE_CHECKING:
    from inference.adapters.drafter import Drafter
    from inference.config import EngineConfig

AMX_VARIABLE = "PREWRITE_LLAMACPP_AMX"  # "1": let llama.cpp's AMX kernels run (module docstring)
_NO_SLOT = 1  # llama_decode: no KV cells for the batch; the cache is as it was before the call
_LOG_LINES: deque[str] = deque(maxlen=40)
_state: dict[str, Any] = {}  # the library, its log callback (kept alive) and backend init


def library() -> Any:
    """llama_cpp's low-level module, initialised once with its log kept for error messages."""
    if "lib" in _state:
        return _state["lib"]
    # read by llama.cpp at its first tiled matmul: off, as batch-invariant numerics need
    os.environ.setdefault(TILED_VARIABLE, "0")
    try:
        import llama_cpp
    except ImportError as exc:  # also a build whose shared library does not load
        raise ConfigError(
            "the llama.cpp runtime needs llama-cpp-python (see README: `make venv` builds it); "
            f"or set runtime to 'torch' ({exc})"
        ) from exc

    @llama_cpp.llama_log_callback  # type: ignore[misc]
    def keep(level: int, text: bytes, data: ctypes.c_void_p) -> None:
        _LOG_LINES.append(text.decode("utf-8", errors="replace"))

    llama_cpp.llama_log_set(keep, ctypes.c_void_p(0))
    llama_cpp.llama_backend_init()
    _state.update(lib=llama_cpp, log=keep)
    return llama_cpp


def system_info() -> str:
    """llama.cpp's system info: the CPU features it was built for and found."""
    return str(library().llama_print_system_info().decode(errors="replace"))


def amx_use() -> str:
    """Whether this process lets llama.cpp's AMX kernels run: 'on', 'off' or 'absent'."""
    return amx_state(system_info(), os.environ.get(AMX_VARIABLE, ""))


def library_llama(gguf: Any, config: EngineConfig, threads: int, invariant: bool = False) -> Any:
    """llama-cpp-python's own `Llama` on `gguf`, set as this runtime's context is (batch, threads,
    weights kept out of AMX buffers where the runtime keeps them out, and with `invariant` the
    batch-invariant kernels: no repacked weights, flash attention off): the conventional request
    the benchmarks compare against, and the independent reference exact answers are held to."""
    import llama_cpp.llama_cpp as low  # `Llama` takes its model parameters from here
    from llama_cpp import Llama

    default = low.llama_model_default_params
    amx = amx_use()

    def params() -> Any:  # `Llama` has no argument for it
        chosen = default()
        chosen.use_extra_bufts = amx != "off" and not invariant
        return chosen

    low.llama_model_default_params = params
    try:
        return Llama(
            model_path=str(gguf), n_ctx=config.context_size, n_batch=config.batch_size,
            n_ubatch=config.batch_size, n_threads=threads, n_threads_batch=threads,
            flash_attn=not invariant, verbose=False,  # as the engine's context (its default is off)
        )  # fmt: skip
    finally:
        low.llama_model_default_params = default


def last_log(lines: int = 3) -> str:
    """The last non-empty lines llama.cpp logged, for error messages."""
    kept = [line.strip() for line in _LOG_LINES if line.strip()]
    return " | ".join(kept[-lines:])


class LlamaSequence:
    """One session's sequence id in the context (None until first fed, or once evicted)."""

    def __init__(self, runtime: LlamaCppRuntime):
        self.runtime = runtime
        self.seq_id: int | None = None
        self.length = 0
        self.used = 0  # the runtime's clock at its last forward: least recently used goes first

    @property
    def cache_bytes(self) -> int:
        """0: the cells live in the context's KV cache, allocated once (`context_size`)."""
        return 0

    def truncate(self, length: int) -> None:
        """Keep the first `length` cached tokens."""
        self.runtime.truncate(self, length)

    def fork(self) -> LlamaSequence:
        """A new sequence sharing this one's cells (llama.cpp tags them with both ids)."""
        return self.runtime.fork(self)

    def settle(self) -> None:
        """Nothing runs ahead in process."""

    def close(self) -> None:
        """Free the sequence id and its cells."""
        self.runtime.release(self)


@dataclass
class _Part:
    """One sequence's tokens in one llama_decode call; logits wanted from `first_row` on."""

    sequence: LlamaSequence
    tokens: list[int]
    first_row: int


class LlamaCppRuntime:
    """A GGUF model in one llama.cpp context behind the runtime seam."""

    def __init__(self, config: EngineConfig, files: ModelFiles):
        assert files.gguf is not None
        self.lib = lib = library()
        self.name = config.model
        self.tokenizer = model_files.load_tokenizer(files)
        # threads unset: per forward, the cores other processes leave free (cpu_load.py)
        self.free_cores = None if config.threads else FreeCores()
        self.threads = self.free_cores.cores if self.free_cores else config.threads or 1
        self._threads_now = self.threads
        self.offload = self._offload(config.device)  # layers on a GPU
        self.amx = amx_use()
        features = system_info()
        self.numerics = choose_numerics(
            config.numerics, features, os.environ, self.offload, config.acceptance
        )
        self.model = self._load_model(files.gguf)
        self.vocab_size = int(lib.llama_vocab_n_tokens(lib.llama_model_get_vocab(self.model)))
        self._check_vocabulary()
        self.batch_size = config.batch_size
        self.sequences = config.sequences
        self.context = self._new_context(config.context_size)
        self.batch_size = int(lib.llama_n_batch(self.context))  # llama.cpp caps it at the context
        self.memory = lib.llama_get_memory(self.context)
        self.batch = lib.llama_batch_init(self.batch_size, 0, 1)
        train = int(lib.llama_model_n_ctx_train(self.model))
        self.context_length = min(train, int(lib.llama_n_ctx_seq(self.context)))
        self.eos_ids = eos_ids(self.tokenizer, model_files.configured_eos(files))
        self.drafter: Drafter | None = None  # the parallel drafter is torch-only
        self.batch_limit = self.sequences
        self.evictions = 0  # sequences whose cells went to another (`_evict_for_room`)
        # On a CPU each token of a forward costs about as much as a one-token decode (qwen 0.5B
        # Q4_K_M, 1 thread: 1 token 83 ms, 3 tokens 266 ms): stale-draft proposals rarely pay.
        # A verify pass goes in chunks of 16, 32, ... that stop at the first rejection: a
        # forward's fixed cost is about 40 ms (2 threads: 1 token 58 ms, 50 tokens 841 ms), so a
        # draft kept whole pays one or two of them more, while a stale draft of 200 tokens
        # rejected early is not paid for (editor sessions, bench-lsp; chunks of 8 lost on
        # HumanEval, where drafts are mostly kept: engine.md). On a GPU proposals are free.
        # a proposed token costs ~40% of a forward here: propose after a 3-token match, 4 at first
        # While drafting, a long changed context (a document's first draft, a docstring edit
        # before the code below) goes in forwards of 32 tokens: newer text stops a stale draft
        # within about half a second instead of after one forward over all of it (seconds on a
        # 1.5B); the split leaves the results as they are only with batch-invariant kernels.
        prefill = 32 if self.numerics.invariant else 0
        on_cpu = ShapeHints(lookahead=16, verify_chunk=16, lookahead_match=3, lookahead_first=4,
                            prefill_chunk=prefill)  # fmt: skip
        self.hints = ShapeHints(lookahead=8, verify_chunk=0) if self.offload else on_cpu
        self.on_forward: ForwardHook = lambda tokens: None
        self.info = RuntimeInfo(
            kind="llamacpp",
            device="gpu" if self.offload else "cpu",
            dtype=self._describe(),
            threads=self.threads,
            version=str(getattr(lib, "__version__", "?")),
            extra={"context_size": config.context_size, "batch_size": self.batch_size,
                   "sequences": self.sequences, "gguf": str(files.gguf),
                   "threads_by_load": self.free_cores is not None,
                   **({} if self.offload else {"cpu": describe_cpu(llamacpp_vector(features)),
                                               "amx": self.amx}),
                   "numerics": self.numerics.kind, "numerics_note": self.numerics.reason},
        )  # fmt: skip
        if config.adapter:
            self._apply_adapter(config.adapter, files)
        self._free = list(range(self.sequences))
        self._held: dict[int, LlamaSequence] = {}
        self._clock = itertools.count(1)

    # -- the seam -------------------------------------------------------------------------------

    def open_sequence(self) -> LlamaSequence:
        """A new, empty sequence (it takes an id when it is first fed)."""
        return LlamaSequence(self)

    def forward(self, feeds: Sequence[Feed]) -> list[Output]:
        """As few llama_decode calls as the batch size and the sequence ids allow."""
        outputs: dict[int, list[np.ndarray]] = {i: [] for i in range(len(feeds))}
        for group in self._groups(feeds):
            parts = [_Part(self._sequence(f), f.tokens, f.first_row) for _, f in group]
            for (index, _), rows in zip(group, self._decode_fitting(parts), strict=True):
                outputs[index].append(rows)
        self.on_forward(sum(len(f.tokens) for f in feeds))
        return [Output(torch.from_numpy(np.concatenate(outputs[i]))) for i in range(len(feeds))]

    def truncate(self, sequence: LlamaSequence, length: int) -> None:
        """Drop the sequence's cells from position `length` on."""
        if length >= sequence.length:
            return
        if sequence.seq_id is not None:
            self.lib.llama_memory_seq_rm(self.memory, sequence.seq_id, length, -1)
        sequence.length = length

    def fork(self, sequence: LlamaSequence) -> LlamaSequence:
        """A sequence that starts with `sequence`'s cells, copied by reference (no compute)."""
        twin = LlamaSequence(self)
        if sequence.seq_id is None or not sequence.length:
            return twin
        self._assign(twin, {id(sequence)})
        # a sequence of its own stream is copied whole (llama.cpp copies streams only so): its
        # cells land where the original's are, as batch-invariant numerics need
        end = -1 if self.numerics.invariant else sequence.length
        self.lib.llama_memory_seq_cp(self.memory, sequence.seq_id, twin.seq_id, 0, end)
        twin.length, twin.used = sequence.length, next(self._clock)
        return twin

    def release(self, sequence: LlamaSequence) -> None:
        """Free a sequence's id and cells."""
        self._evict(sequence)

    def close(self) -> None:
        """Free the batch, the context and the model."""
        lib = self.lib
        if self.context is not None:
            lib.llama_batch_free(self.batch)
            lib.llama_free(self.context)
            lib.llama_model_free(self.model)
            self.context = None

    # -- batches --------------------------------------------------------------------------------

    def _groups(self, feeds: Sequence[Feed]) -> list[list[tuple[int, Feed]]]:
        """Feeds split into decode calls: at most `batch_size` tokens and `sequences` ids each.

        A feed longer than the batch goes alone, in chunks of it.
        """
        groups: list[list[tuple[int, Feed]]] = []
        current: list[tuple[int, Feed]] = []
        tokens = 0
        for index, feed in enumerate(feeds):
            if feed.noise:
                raise ConfigError("the parallel drafter runs on the torch runtime only")
            n = len(feed.tokens)
            if current and (tokens + n > self.batch_size or len(current) == self.sequences):
                groups.append(current)
                current, tokens = [], 0
            current.append((index, feed))
            tokens += n
        if current:
            groups.append(current)
        return [chunk for group in groups for chunk in self._chunked(group)]

    def _chunked(self, group: list[tuple[int, Feed]]) -> list[list[tuple[int, Feed]]]:
        if len(group) > 1 or len(group[0][1].tokens) <= self.batch_size:
            return [group]
        index, feed = group[0]
        chunks = []
        for start in range(0, len(feed.tokens), self.batch_size):
            tokens = feed.tokens[start : start + self.batch_size]
            first = min(max(feed.first_row - start, 0), len(tokens))
            chunks.append([(index, Feed(feed.sequence, tokens, first))])
        return chunks

    def _sequence(self, feed: Feed) -> LlamaSequence:
        sequence = feed.sequence
        assert isinstance(sequence, LlamaSequence) and sequence.runtime is self
        return sequence

    def _decode_fitting(self, parts: list[_Part]) -> list[np.ndarray]:
        """Decode, evicting idle sequences for cells; halve the batch when that is not enough.

        Only shared cells (fast numerics) are freed by evicting another sequence; under
        invariant numerics each sequence has a stream of its own, so the others keep theirs.
        """
        shared = not self.numerics.invariant
        while True:
            try:
                return self._decode(parts)
            except _NoSlot:
                if shared and self._evict_idle({id(p.sequence) for p in parts}):
                    continue
                if len(parts) > 1:
                    half = len(parts) // 2
                    return self._decode_fitting(parts[:half]) + self._decode_fitting(parts[half:])
                whose = "" if shared else f" (context_size / {self.sequences} sequences)"
                raise ContextOverflowError(
                    f"the llama.cpp context of {self.context_length} tokens{whose} has no room "
                    f"for {len(parts[0].tokens)} more tokens of one session; raise context_size"
                ) from None

    def _decode(self, parts: list[_Part]) -> list[np.ndarray]:
        """One llama_decode over all parts; the wanted logits rows of each, in order."""
        protected = {id(p.sequence) for p in parts}
        for part in parts:
            self._assign(part.sequence, protected)
        batch, n = self.batch, 0
        for part in parts:
            sequence = part.sequence
            for i, token in enumerate(part.tokens):
                batch.token[n] = token
                batch.pos[n] = sequence.length + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = sequence.seq_id
                batch.logits[n] = i >= part.first_row
                n += 1
        batch.n_tokens = n
        self._follow_load()
        status = self.lib.llama_decode(self.context, batch)
        if status == _NO_SLOT:
            raise _NoSlot
        if status != 0:
            for part in parts:  # a failed call can leave some of its cells behind
                sequence = part.sequence
                self.lib.llama_memory_seq_rm(self.memory, sequence.seq_id, sequence.length, -1)
            raise RuntimeFailure(f"llama_decode failed with status {status}: {last_log()}")
        wanted = sum(len(p.tokens) - p.first_row for p in parts)
        logits = np.zeros((0, self.vocab_size), dtype=np.float32)
        if wanted:  # [wanted, V], valid until the next decode: copied out below
            pointer = self.lib.llama_get_logits(self.context)
            logits = np.ctypeslib.as_array(pointer, shape=(wanted, self.vocab_size))
        rows, at, now = [], 0, next(self._clock)
        for part in parts:
            count = len(part.tokens) - part.first_row
            rows.append(logits[at : at + count].copy())
            at += count
            part.sequence.length += len(part.tokens)
            part.sequence.used = now
        return rows

    def _follow_load(self) -> None:
        """With threads unset, run on the cores other processes leave free just now."""
        if self.free_cores is None or self.offload:
            return
        threads = self.free_cores.free()
        if threads != self._threads_now:
            self.lib.llama_set_n_threads(self.context, threads, threads)
            self._threads_now = threads

    # -- sequence ids -----------------------------------------------------------------------------

    def _assign(self, sequence: LlamaSequence, protected: set[int]) -> None:
        if sequence.seq_id is not None:
            return
        if not self._free:
            idle = [s for s in self._held.values() if id(s) not in protected]
            self._evict_for_room(min(idle, key=lambda s: s.used))
        sequence.seq_id = self._free.pop()
        self._held[sequence.seq_id] = sequence

    def _evict_idle(self, protected: set[int]) -> bool:
        """Evict the least recently used sequence outside `protected` that holds cells."""
        idle = [s for s in self._held.values() if id(s) not in protected and s.length]
        if not idle:
            return False
        self._evict_for_room(min(idle, key=lambda s: s.used))
        return True

    def _evict_for_room(self, sequence: LlamaSequence) -> None:
        self.evictions += bool(sequence.length)
        self._evict(sequence)

    def _evict(self, sequence: LlamaSequence) -> None:
        if sequence.seq_id is not None:
            self.lib.llama_memory_seq_rm(self.memory, sequence.seq_id, -1, -1)
            del self._held[sequence.seq_id]
            self._free.append(sequence.seq_id)
        sequence.seq_id, sequence.length = None, 0

    # -- loading ----------------------------------------------------------------------------------

    def _offload(self, device: str) -> bool:
        """Whether the layers go to a GPU: where the build can and `device` allows it."""
        offload = bool(self.lib.llama_supports_gpu_offload())
        if device == "cuda" and not offload:
            raise ConfigError(
                "device 'cuda' was asked for, but this llama-cpp-python build runs on the CPU "
                "only; use runtime 'torch' for CUDA, or a CUDA build of llama-cpp-python"
            )
        return offload and device != "cpu"

    def _load_model(self, path: Any) -> Any:
        lib = self.lib
        params = lib.llama_model_default_params()
        params.n_gpu_layers = -1 if self.offload else 0
        # repacked weights (AMX is the first extra buffer type taken) have a gemm and a gemv
        params.use_extra_bufts = self.amx != "off" and not self.numerics.invariant
        model = lib.llama_model_load_from_file(str(path).encode(), params)
        if not model:
            raise ModelFolderError(
                f"llama.cpp could not load {path} (truncated, or a model it does not support): "
                f"{last_log()}"
            )
        return model

    def _new_context(self, size: int) -> Any:
        lib = self.lib
        params = lib.llama_context_default_params()
        params.n_ctx = size
        params.n_batch = params.n_ubatch = self.batch_size
        params.n_seq_max = self.sequences
        params.n_threads = params.n_threads_batch = self.threads
        if self.numerics.invariant:  # llamacpp_numerics.py: a KV stream per sequence
            params.kv_unified = False
            params.flash_attn_type = lib.LLAMA_FLASH_ATTN_TYPE_DISABLED
        else:  # see the module docstring; flash attention stays on `auto`
            params.kv_unified = True
        params.no_perf = True
        context = lib.llama_init_from_model(self.model, params)
        if not context:
            lib.llama_model_free(self.model)
            raise ConfigError(
                f"llama.cpp could not create a context of {size} tokens: {last_log()}"
            )
        return context

    def _apply_adapter(self, name: str, files: ModelFiles) -> None:
        """Convert the adapter to a GGUF LoRA (once) and set it on the context, scale 1."""
        from inference.adapters.adapter import check_adapter
        from inference.adapters.gguf import gguf_lora
        from inference.adapters.identity import gguf_identity

        assert files.gguf is not None
        gguf = files.gguf
        check_adapter(name, self.name, lambda: gguf_identity(gguf, model_files.load_config(files)))
        path = gguf_lora(name, gguf)
        lib = self.lib
        adapter = lib.llama_adapter_lora_init(self.model, str(path).encode())
        if not adapter:
            raise ModelFolderError(f"llama.cpp could not load the LoRA {path}: {last_log()}")
        adapters = (lib.llama_adapter_lora_p_ctypes * 1)(adapter)
        if lib.llama_set_adapters_lora(self.context, adapters, 1, (ctypes.c_float * 1)(1.0)):
            raise ModelFolderError(f"llama.cpp could not apply the LoRA {path}: {last_log()}")
        self._adapter = adapter  # freed with the model

    def _check_vocabulary(self) -> None:
        """The tokenizer must not produce ids the model has no row for."""
        if len(self.tokenizer) > self.vocab_size:
            raise ModelFolderError(
                f"the tokenizer of {self.name!r} has {len(self.tokenizer)} tokens but the GGUF "
                f"model only {self.vocab_size}: they do not belong together"
            )

    def _describe(self) -> str:
        buffer = ctypes.create_string_buffer(256)
        self.lib.llama_model_desc(self.model, buffer, len(buffer))
        return buffer.value.decode("utf-8", errors="replace")


class _NoSlot(Exception):  # noqa: N818 - internal signal, caught in _decode_fitting
    """llama_decode found no KV cells for the batch."""
