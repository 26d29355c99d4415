# Newcomer entry points: `make demo` and `make test` each set everything up from nothing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.prewrite-installed
DEMO_MODEL ?= qwen2.5-coder-0.5b
TEST_MODEL ?= smollm2-135m

.PHONY: venv demo engine-demo test lint models-test

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock torch==2.13.0
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: venv
	$(BIN)/prewrite models install $(DEMO_MODEL)
	$(BIN)/prewrite engine-demo --model $(DEMO_MODEL)

engine-demo: venv
	$(BIN)/prewrite models install $(DEMO_MODEL)
	$(BIN)/prewrite engine-demo --model $(DEMO_MODEL)

lint: venv
	$(BIN)/ruff check inference lsp_server tests
	$(BIN)/mypy

models-test: venv
	$(BIN)/prewrite models install $(TEST_MODEL)

test: lint models-test
	$(BIN)/python -m pytest -q -p no:cacheprovider
