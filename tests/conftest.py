"""Shared fixtures: tiny random-weight models built from a config, and the real test model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.tiny_models import build_tiny_model, write_tiny_gguf  # noqa: E402

TEST_MODEL = "smollm2-135m"
CODE_TEST_MODEL = "qwen2.5-coder-0.5b"  # a real code model: writes bodies in brace languages


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny Llama with random weights and a small byte-level BPE tokenizer."""
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"), seed=0)


@pytest.fixture(scope="session")
def tiny_gguf_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tiny Llama as a float32 GGUF with its tokenizer: what llama.cpp runs."""
    return write_tiny_gguf(tiny_model_dir, tmp_path_factory.mktemp("tiny-gguf"))


@pytest.fixture(scope="session")
def reference_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Adaptation rows with reference targets from the fixture corpus (built without a model)."""
    import shutil

    from inference.lab.adapt.build import build_dataset
    from inference.lab.adapt.settings import BuildSettings

    corpus = tmp_path_factory.mktemp("corpus")
    for source in (Path(__file__).parent / "data" / "adapt" / "corpus").glob("*.py.txt"):
        shutil.copy(source, corpus / source.name.removesuffix(".txt"))
    out = tmp_path_factory.mktemp("data")
    build_dataset(BuildSettings(out=out, sources=[str(corpus)], target="reference", progress=False))
    return out


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One torch thread: tiny models run faster so, and a busy machine is not oversubscribed."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _installed_pack(name: str) -> str:
    """`name` when its pack is installed; else a failure in CI and a skip elsewhere."""
    from inference import packs

    if not packs.is_installed(name):
        if os.environ.get("CI"):
            pytest.fail(f"{name} must be installed in CI (make models-test)")
        pytest.skip(f"{name} is not installed; run `prewrite models install {name}`")
    return name


@pytest.fixture(scope="session")
def real_model_name() -> str:
    """The installed real test model, or skip when running without it (make test installs it)."""
    return _installed_pack(TEST_MODEL)


@pytest.fixture(scope="session")
def code_model_name() -> str:
    """The installed real code model (qwen2.5-coder-0.5b, llama.cpp), as real_model_name."""
    return _installed_pack(CODE_TEST_MODEL)
