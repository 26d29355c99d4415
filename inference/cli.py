"""Engine-side command-line commands: `models` and `engine-demo`."""

from __future__ import annotations

import argparse

from inference import packs
from inference.config import DEFAULT_THRESHOLD, EngineConfig, RuntimeName
from inference.packs import DEFAULT_MODEL

RUNTIMES = list(RuntimeName.__args__)  # type: ignore[attr-defined]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the engine's subcommands to the `prewrite` parser."""
    models = commands.add_parser("models", help="list or install model packs")
    actions = models.add_subparsers(dest="models_command", required=True)
    actions.add_parser("list", help="list the model packs and whether they are installed")
    install = actions.add_parser("install", help="install a model pack into the cache")
    install.add_argument("name", choices=sorted(packs.PACKS))
    install.add_argument(
        "--safetensors",
        action="store_true",
        help="also write the de-quantised weights the torch runtime loads (else on its first use)",
    )
    install.add_argument("--quiet", action="store_true")
    models.set_defaults(handler=_models)

    demo = commands.add_parser(
        "engine-demo", help="replay a docstring typed sentence by sentence against the engine"
    )
    add_engine_arguments(demo)
    demo.set_defaults(handler=_engine_demo)


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The engine options shared by every command that runs a model."""
    parser.add_argument("--model", default=DEFAULT_MODEL, help="pack name, folder or hub id")
    parser.add_argument(
        "--adapter", default=None, help="LoRA adapter folder from `prewrite adapt train`"
    )
    parser.add_argument(
        "--drafter", default=None, help="parallel drafter folder from `prewrite drafter train`"
    )
    parser.add_argument(
        "--drafter-mode",
        choices=["fused", "seed"],
        default="fused",
        help="fused: verify and draft in one forward; seed: the paper's two forwards per step",
    )
    parser.add_argument("--drafter-block", type=int, default=None, help="default: as trained")
    parser.add_argument("--acceptance", choices=["exact", "threshold", "sample"], default="exact")
    parser.add_argument(
        "--threshold", type=float, default=DEFAULT_THRESHOLD, help="tau of threshold acceptance"
    )
    parser.add_argument(
        "--runtime",
        choices=RUNTIMES,
        default="auto",
        help="auto: torch on CUDA or for torch-only settings (adapter, drafter, dtype), "
        "else llama.cpp; vllm: a vLLM server (--vllm-url)",
    )
    add_vllm_arguments(parser)
    parser.add_argument("--dtype", default="auto", help="torch only")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=None)
    defaults = EngineConfig.model_fields
    parser.add_argument(
        "--context-size", type=positive, default=defaults["context_size"].default,
        help="llama.cpp: KV cache tokens shared by all sessions",
    )  # fmt: skip
    parser.add_argument(
        "--batch-size", type=positive, default=defaults["batch_size"].default,
        help="llama.cpp: most tokens per decode call",
    )  # fmt: skip
    parser.add_argument(
        "--sequences", type=positive, default=defaults["sequences"].default,
        help="llama.cpp: sessions cached at once",
    )  # fmt: skip
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--prompt-format", default="auto", choices=["auto", "raw", "fim", "chat"])
    parser.add_argument(
        "--code-below", default="auto", choices=["auto", "always", "never"],
        help="the code after the function in FIM and chat prompts (auto: not on a CPU)",
    )  # fmt: skip
    parser.add_argument(
        "--lookahead", type=int, default=None,
        help="stale-draft tokens per forward (default: the runtime's; 8 on torch, 0 on a CPU "
        "llama.cpp)",
    )  # fmt: skip
    parser.add_argument(
        "--verify-chunk", type=int, default=None,
        help="first chunk of a verify pass, doubling, stopping at a rejection; 0: one pass "
        "(default: the runtime's, one pass on both)",
    )  # fmt: skip


def add_vllm_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the vLLM runtime finds its server (the API key: $PREWRITE_VLLM_API_KEY)."""
    defaults = EngineConfig.model_fields
    parser.add_argument("--vllm-url", default=defaults["vllm_url"].default,
                        help="runtime vllm: the server's base URL")  # fmt: skip
    parser.add_argument("--vllm-model", default=None,
                        help="runtime vllm: the served model (default: the only one)")  # fmt: skip


def vllm_values(args: argparse.Namespace) -> dict:
    """The vLLM settings parsed by add_vllm_arguments, as engine keys."""
    return {"vllm_url": args.vllm_url, "vllm_model": args.vllm_model}


def engine_config_from(args: argparse.Namespace) -> dict:
    """Plain engine settings from parsed engine arguments (validated by the engine).

    With an adapter, the prompt format and system prompt it was trained with fill in for
    settings left at their defaults.
    """
    values = {
        "model": args.model,
        "acceptance": args.acceptance,
        "threshold": args.threshold,
        "dtype": args.dtype,
        "device": args.device,
        "runtime": args.runtime,
        "threads": args.threads,
        "context_size": args.context_size,
        "batch_size": args.batch_size,
        "sequences": args.sequences,
        "max_tokens": args.max_tokens,
        "prompt_format": args.prompt_format,
        "code_below": args.code_below,
        "lookahead": args.lookahead,
        "verify_chunk": args.verify_chunk,
        "drafter": args.drafter,
        "drafter_mode": args.drafter_mode,
        "drafter_block": args.drafter_block,
        **vllm_values(args),
    }
    if args.adapter is None:
        return values
    from inference.adapters.adapter import with_adapter_settings

    return with_adapter_settings({**values, "adapter": args.adapter})


def _models(args: argparse.Namespace) -> int:
    if args.models_command == "list":
        for pack, installed in packs.list_packs():
            state = "not installed"
            if installed:
                torch_ready = packs.has_weights(packs.pack_dir(pack.name))
                state = "installed" + (" (+torch)" if torch_ready else "")
            size = f"{pack.params:>7} {pack.download_mib:>5} MiB"
            print(f"{pack.name:20} {size}  {state:21}  {pack.description}")
        return 0
    path = packs.install(args.name, safetensors=args.safetensors, quiet=args.quiet)
    print(f"{args.name}: {path}")
    return 0


def _engine_demo(args: argparse.Namespace) -> int:
    from inference.demo import run_engine_demo

    run_engine_demo(engine_config_from(args))
    return 0


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
