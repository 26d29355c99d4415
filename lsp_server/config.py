"""Server settings: one pydantic schema, camelCase on the wire, validated once where settings enter.

The engine's settings are not restated: their types, bounds and defaults are taken from
`inference.config.EngineConfig` (a test checks they stay equal). `trust_remote_code` is left
out on purpose: settings can come from a workspace file, which must not run code.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from inference.config import (
    Acceptance,
    EngineConfig,
    Numerics,
    PromptFormat,
    RuntimeName,
    validate_engine_config,
)
from lsp_server.errors import SettingsError

SECTION = "prewrite"  # the didChangeConfiguration / workspace/configuration section


def _engine(name: str, description: str) -> Any:
    """The engine's own field (type bounds and default) with a description for users."""
    field: FieldInfo = copy.copy(EngineConfig.model_fields[name])
    field.description = description
    return field


class Settings(BaseModel):
    """Every server setting; wire names are the camelCase aliases."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="ignore",
        frozen=True,
    )

    model: str = _engine(
        "model",
        "Model pack name, local Hugging Face folder, .gguf file or hub id; auto: "
        "qwen2.5-coder-1.5b where it keeps up with typing (AVX-512 and 2+ cores, or a CUDA GPU) "
        "and is installed, else qwen2.5-coder-0.5b.",
    )
    runtime: RuntimeName = _engine(
        "runtime",
        "What runs the model: llamacpp (GGUF on the CPU), torch (CUDA, adapters, the drafter), "
        "vllm (a vLLM server at vllmUrl) or auto (torch on CUDA or for torch-only settings, "
        "else llama.cpp).",
    )
    vllm_url: str = _engine(
        "vllm_url",
        "runtime vllm: the vLLM server's base URL (its API key is read from the server's "
        "environment, PREWRITE_VLLM_API_KEY, never from settings).",
    )
    vllm_model: str | None = _engine(
        "vllm_model", "runtime vllm: the served model's name (null: the only one it serves)."
    )
    vllm_timeout_s: float = _engine(
        "vllm_timeout_s", "runtime vllm: seconds a request may take before it fails."
    )
    adapter: str | None = _engine(
        "adapter", "LoRA adapter folder (prewrite adapt train) merged into the model at load."
    )
    drafter: str | None = _engine(
        "drafter", "Parallel drafter folder (prewrite drafter train): regenerates in blocks."
    )
    drafter_mode: Literal["fused", "seed"] = _engine(
        "drafter_mode", "fused: verify and draft in one forward; seed: two forwards per step."
    )
    drafter_block: int | None = _engine(
        "drafter_block", "Tokens per drafted block (null: as the drafter was trained)."
    )
    device: Literal["auto", "cpu", "cuda"] = _engine("device", "Where the model runs.")
    dtype: Literal["auto", "float32", "bfloat16", "float16", "float64"] = _engine(
        "dtype", "torch: weight and activation precision (llama.cpp runs the GGUF's own)."
    )
    threads: int | None = _engine(
        "threads",
        "CPU threads for the model (null: torch default; llama.cpp: per forward, the cores "
        "other processes leave free).",
    )
    context_size: int = _engine(
        "context_size",
        "llama.cpp: KV cache tokens, split evenly between the documents cached at once "
        "(invariant numerics) or shared by them.",
    )
    batch_size: int = _engine("batch_size", "llama.cpp: most tokens in one decode call.")
    sequences: int = _engine(
        "sequences", "llama.cpp: documents cached at once (the least recently used one yields)."
    )
    numerics: Numerics = _engine(
        "numerics",
        "llama.cpp on a CPU: invariant (a verify pass gives one-token decoding's logits bit for "
        "bit, so exact answers are plain greedy's; slower prompts), fast (exact up to "
        "near-ties), auto (invariant for exact acceptance where the build allows it).",
    )
    memory_budget_mb: int | None = _engine(
        "memory_budget_mb",
        "Most MiB the documents' caches hold (torch; llama.cpp is bounded by contextSize); the "
        "least recently used give theirs up first (null: a quarter of the machine's memory).",
    )
    acceptance: Acceptance = _engine(
        "acceptance", "How draft tokens are kept: exact (greedy-identical), threshold or sample."
    )
    threshold: float = _engine("threshold", "Probability a draft token needs under 'threshold'.")
    temperature: float = _engine("temperature", "Sampling temperature under 'sample'.")
    seed: int = _engine("seed", "Random seed under 'sample'.")
    max_tokens: int = _engine("max_tokens", "Most tokens in one answer.")
    respec_ratio: float = _engine(
        "respec_ratio",
        "respec: a line of a body stays while the changed docstring gives each of its tokens "
        "at least this share of the probability the docstring before the change gave it.",
    )
    respec_threshold: float = _engine(
        "respec_threshold",
        "respec: the probability each token needs instead where the docstring before the "
        "change is not known.",
    )
    prompt_format: PromptFormat = _engine(
        "prompt_format",
        "Prompt format: auto (FIM when the prompt has code below and the model has it; else "
        "the model pack's, chosen by pass@1; else raw), raw, fim or chat.",
    )
    code_below: Literal["auto", "always", "never"] = _engine(
        "code_below",
        "The code after the function in FIM and chat prompts: auto (on a GPU or a vLLM server, "
        "not on a CPU, where every edit of the spec would encode it again), always or never.",
    )
    system_prompt: str | None = _engine("system_prompt", "System prompt for the chat format.")
    stop_strings: tuple[str, ...] = _engine("stop_strings", "Extra strings that end an answer.")
    lookahead: int | None = _engine(
        "lookahead", "Stale-draft tokens proposed per forward (0: off; null: the runtime's)."
    )
    verify_chunk: int | None = _engine(
        "verify_chunk",
        "First chunk of a verify pass, doubling, stopping at a rejection (0: one pass; "
        "null: the runtime's).",
    )
    prefill_chunk: int | None = _engine(
        "prefill_chunk",
        "While drafting, the changed prompt goes in forwards of at most this many tokens, so "
        "newer text stops a stale draft between them (0: one forward; null: the runtime's).",
    )

    drafting: bool = Field(
        default=True, description="Keep a draft current while the spec is typed."
    )
    prefill_on_open: bool = Field(
        default=True,
        description="Encode the head of a document just opened, before its first edit, so "
        "that a comment then typed in a body within it starts drafting from the cache.",
    )
    draft_on: Literal["keystroke", "word", "idle"] = Field(
        default="word",
        description="When an edit starts drafting: every keystroke; the end of a word (or "
        "after idleMs without typing); or only after idleMs without typing.",
    )
    idle_ms: int = Field(
        default=300, ge=0, le=10_000, description="Pause (ms) that starts drafting (word, idle)."
    )
    draft_min_forwards: int = Field(
        default=0,
        ge=0,
        le=256,
        description="Forwards a draft may run before a newer keystroke stops it (0: at once).",
    )
    draft_preview: bool = Field(
        default=False, description="Send prewrite/draft notifications with the live draft."
    )
    check_examples: Literal["auto", "off"] = Field(
        default="auto",
        description="Run the docstring's >>> examples against each verified draft in a "
        "bubblewrap sandbox: auto (where the sandbox works) or off.",
    )
    search_on_failure: bool = Field(
        default=False,
        description="When a verified draft fails its docstring's examples and the machine is "
        "idle, sample up to searchTries alternatives, run the same examples, and offer the "
        "first that passes beside the greedy answer (marked as not the greedy answer).",
    )
    search_tries: int = Field(
        default=4, ge=1, le=32, description="Sampled alternatives tried per failing draft."
    )
    respec: bool = Field(
        default=True,
        description="After a changed docstring or leading comment of a function that has a "
        "body: re-verify the body and offer the lines that change (a code action and a Hint).",
    )
    respec_idle_ms: int = Field(
        default=800,
        ge=0,
        le=60_000,
        description="Pause (ms) after a spec change before its body is re-verified (respec).",
    )
    prefix_chars: int = Field(
        default=8000,
        ge=100,
        le=1_000_000,
        description="Most characters of code above the spec (then the spec, whole).",
    )
    suffix_chars: int = Field(
        default=2000, ge=0, le=100_000, description="Most characters of code after the function."
    )
    trace_path: str = Field(
        default="", description="Append a JSONL trace of triggers here (relative to the workspace)."
    )

    def engine_values(self) -> dict[str, Any]:
        """The engine's settings as EngineConfig keys."""
        return {name: getattr(self, name) for name in ENGINE_KEYS}

    def engine_config(self, root: str | None = None) -> EngineConfig:
        """The engine configuration these settings ask for.

        Relative adapter and drafter folders (and a model given as ./folder) are taken
        relative to the workspace `root`, not to wherever the editor started the server.
        """
        values = self.engine_values()
        if root:
            for name in FOLDER_SETTINGS:
                value = values.get(name)
                if value and _relative_folder(name, value):
                    values[name] = str(Path(root) / Path(value).expanduser())
        return validate_engine_config(values)


FOLDER_SETTINGS = ("model", "adapter", "drafter")


def _relative_folder(name: str, value: str) -> bool:
    """A relative path; for `model` only an explicit ./ or ../ one (else it is a pack name)."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return False
    return name != "model" or value.startswith(("./", "../"))


ENGINE_KEYS = tuple(name for name in Settings.model_fields if name in EngineConfig.model_fields)
WIRE_NAMES = {name: field.alias or name for name, field in Settings.model_fields.items()}


def validate_settings(values: Mapping[str, Any]) -> Settings:
    """Settings from wire (or snake_case) values; SettingsError names each bad field."""
    try:
        return Settings.model_validate(dict(values))
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in exc.errors()
        ]
        fields = [str(err["loc"][0]) for err in exc.errors() if err["loc"]]
        raise SettingsError("invalid prewrite settings: " + "; ".join(problems), fields) from exc


def unknown_keys(values: Mapping[str, Any]) -> list[str]:
    """Keys that are no setting (ignored, but worth a log line: they are often typos)."""
    known = set(WIRE_NAMES) | set(WIRE_NAMES.values())
    return sorted(str(key) for key in values if key not in known)


def settings_schema() -> dict[str, Any]:
    """The settings as JSON schema (wire names, types, bounds, defaults, descriptions).

    Editor clients generate or check their settings (VS Code `package.json`, Neovim defaults)
    against this.
    """
    schema = Settings.model_json_schema(by_alias=True)
    properties = {}
    for name, spec in schema["properties"].items():
        properties[name] = {key: value for key, value in spec.items() if key != "title"}
    return {"section": SECTION, "type": "object", "properties": properties}


class SettingsLayers:
    """Effective settings from defaults, the client and the workspace's prewrite.toml.

    Later layers win: defaults < initializationOptions < didChangeConfiguration <
    prewrite.toml (a project's file pins what the project needs, as pyright's does). A bad
    update raises SettingsError and leaves everything as it was.
    """

    def __init__(self) -> None:
        self.initial: dict[str, Any] = {}
        self.client: dict[str, Any] = {}
        self.workspace: dict[str, Any] = {}
        self.current = Settings()

    def update(self, layer: Literal["initial", "client", "workspace"], values: Any) -> Settings:
        """Replace one layer; returns the new effective settings."""
        if values is None:
            values = {}
        if not isinstance(values, Mapping):
            raise SettingsError(
                f"prewrite settings must be an object, not {type(values).__name__}", []
            )
        layers = {"initial": self.initial, "client": self.client, "workspace": self.workspace}
        layers[layer] = dict(values)
        merged = {**_wire(layers["initial"]), **_wire(layers["client"])}
        merged.update(_wire(layers["workspace"]))
        self.current = validate_settings(merged)
        self.initial, self.client, self.workspace = (
            layers["initial"],
            layers["client"],
            layers["workspace"],
        )
        return self.current


def _wire(values: Mapping[str, Any]) -> dict[str, Any]:
    """Field names to wire names, so that layers merge key by key and errors use wire names."""
    return {WIRE_NAMES.get(str(key), str(key)): value for key, value in values.items()}
