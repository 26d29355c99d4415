"""Server settings: one schema, wire names, validation that keeps the last good settings, files."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from inference.config import EngineConfig
from lsp_server.cli import main
from lsp_server.config import (
    ENGINE_KEYS,
    WIRE_NAMES,
    Settings,
    SettingsLayers,
    settings_schema,
    unknown_keys,
    validate_settings,
)
from lsp_server.errors import SettingsError
from lsp_server.trace import Trace, read_workspace_settings
from tests.paths import REPO, TEST_DATA

pytestmark = pytest.mark.timeout(60)

DATA = TEST_DATA / "server"


def test_wire_names_are_camel_case_and_snake_case_is_accepted_too():
    settings = validate_settings({"maxTokens": 32, "prompt_format": "chat", "draftPreview": True})
    assert settings.max_tokens == 32
    assert (settings.prompt_format, settings.draft_preview) == ("chat", True)
    assert WIRE_NAMES["max_tokens"] == "maxTokens"
    assert WIRE_NAMES["draft_on"] == "draftOn"


def test_engine_settings_are_the_engines_own_fields():
    """Types, bounds and defaults come from EngineConfig: they cannot drift apart."""
    assert set(ENGINE_KEYS) == set(EngineConfig.model_fields) - {"trust_remote_code"}
    for name in ENGINE_KEYS:
        ours, engines = Settings.model_fields[name], EngineConfig.model_fields[name]
        assert ours.annotation == engines.annotation, name
        assert ours.metadata == engines.metadata, name
        assert ours.default == engines.default, name
    assert Settings().engine_config() == EngineConfig()


def test_invalid_settings_name_each_field_by_its_wire_name():
    with pytest.raises(SettingsError) as failure:
        validate_settings({"maxTokens": 0, "acceptance": "greedy", "idleMs": -5})
    assert sorted(failure.value.fields) == ["acceptance", "idleMs", "maxTokens"]
    assert "maxTokens" in str(failure.value)


def test_a_bad_update_keeps_the_previous_settings():
    layers = SettingsLayers()
    layers.update("initial", {"model": "smollm2-135m", "maxTokens": 64})
    with pytest.raises(SettingsError):
        layers.update("client", {"maxTokens": "many"})
    assert layers.current.max_tokens == 64
    assert layers.client == {}
    with pytest.raises(SettingsError):
        layers.update("client", ["not", "an", "object"])
    assert layers.current.model == "smollm2-135m"


def test_layers_merge_key_by_key_and_the_workspace_file_wins():
    layers = SettingsLayers()
    layers.update("initial", {"model": "smollm2-135m", "promptFormat": "chat"})
    layers.update("client", {"maxTokens": 48})
    layers.update("workspace", {"max_tokens": 16})
    current = layers.current
    assert (current.model, current.prompt_format) == ("smollm2-135m", "chat")
    assert current.max_tokens == 16


def test_unknown_keys_are_listed():
    assert unknown_keys({"maxTokens": 1, "max_tokens": 1, "serverPath": "x"}) == ["serverPath"]


def test_the_schema_lists_every_setting_with_its_default():
    schema = settings_schema()
    defaults = Settings()
    assert schema["section"] == "prewrite"
    assert set(schema["properties"]) == set(WIRE_NAMES.values())
    for name, wire in WIRE_NAMES.items():
        prop = schema["properties"][wire]
        assert prop["description"], wire
        default = getattr(defaults, name)
        assert prop["default"] == (list(default) if isinstance(default, tuple) else default), wire
    assert schema["properties"]["acceptance"]["enum"] == ["exact", "threshold", "sample"]
    assert schema["properties"]["maxTokens"]["minimum"] == 1


def test_prewrite_settings_schema_prints_the_schema(capsys):
    assert main(["settings-schema"]) == 0
    assert json.loads(capsys.readouterr().out) == settings_schema()


async def test_the_workspace_file_is_read(tmp_path):
    shutil.copy(DATA / "workspace" / "prewrite.toml", tmp_path / "prewrite.toml")
    values = await read_workspace_settings(str(tmp_path))
    assert validate_settings(values).max_tokens == 48
    assert await read_workspace_settings(str(tmp_path / "elsewhere")) == {}
    assert await read_workspace_settings(None) == {}


async def test_a_broken_workspace_file_is_named(tmp_path):
    (tmp_path / "prewrite.toml").write_text("maxTokens = = 3\n")
    with pytest.raises(SettingsError, match="prewrite.toml"):
        await read_workspace_settings(str(tmp_path))


async def test_the_trace_appends_one_json_line_per_entry_in_order(tmp_path):
    failures: list[BaseException] = []
    trace = Trace(on_error=failures.append)
    trace.configure("trace.jsonl", str(tmp_path))
    for index in range(20):
        trace.record({"index": index})
    await trace.flush()
    lines = (tmp_path / "trace.jsonl").read_text().splitlines()
    assert [json.loads(line)["index"] for line in lines] == list(range(20))
    assert failures == []


async def test_a_trace_that_cannot_be_written_is_reported_once_and_stops(tmp_path):
    failures: list[BaseException] = []
    trace = Trace(on_error=failures.append)
    trace.configure(str(tmp_path / "missing-dir" / "trace.jsonl"), None)
    trace.record({"a": 1})
    trace.record({"a": 2})
    await trace.flush()
    assert len(failures) == 1 and trace.path is None


def test_the_settings_table_in_the_docs_matches_the_schema():
    doc = (REPO / "docs" / "server.md").read_text(encoding="utf-8")
    after = doc.split("<!-- settings-table: checked by tests/lsp_server/test_config.py -->")[1]
    table = after.strip().split("\n\n")[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {}
    for row in rows:
        cells = re.split(r"(?<!\\)\|", row.strip().strip("|"))
        name, _, default, description = (cell.strip() for cell in cells)
        documented[name.strip("`")] = (json.loads(default.strip("`")), description)
    properties = settings_schema()["properties"]
    assert set(documented) == set(properties)
    for name, prop in properties.items():
        assert documented[name] == (prop["default"], prop["description"]), name


def test_relative_adapter_drafter_and_model_folders_are_taken_from_the_workspace_root():
    settings = validate_settings(
        {"adapter": "adapters/early", "drafter": "../drafters/d", "model": "./models/m"}
    )
    config = settings.engine_config("/work/project")
    assert config.adapter == "/work/project/adapters/early"
    assert config.drafter == "/work/project/../drafters/d"
    assert config.model == "/work/project/models/m"
    packs = validate_settings({"model": "smollm2-135m", "adapter": "/abs/adapter"})
    assert packs.engine_config("/work/project").model == "smollm2-135m"  # a pack name stays
    assert packs.engine_config("/work/project").adapter == "/abs/adapter"
    assert settings.engine_config(None).adapter == "adapters/early"  # no workspace: as given
