# Two entry points, both self-contained on a fresh machine:
#   make run   set up, fetch the demo model, open the window on it
#   make test  set up, fetch the demo model, run the checks and the test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.tightfit-installed
DEMO   := models/SmolLM2-135M-Instruct.Q4_1.gguf

.PHONY: run test setup engine demo-model lint bench screenshot clean

run: setup
	$(PY) -m gui --model $(DEMO) --load

test: setup
	$(VENV)/bin/ruff check gui tests bench
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n 2 --dist loadfile  # two processes, each test file in one

setup: $(STAMP) demo-model

# The engine first, on every set-up: llama-cpp-python built for this machine's NVIDIA GPUs (CUDA, for exactly
# their compute capabilities), or the CPU build and what to install to use the GPU. It does nothing when
# nothing changed, so installing a CUDA toolkit and running the same command again builds for the card.
# TIGHTFIT_ENGINE=cpu|cuda overrides the choice. See `tightfit engine --plan`.
engine:
	test -x $(PY) || { $(PYTHON) -m venv $(VENV) && $(PY) -m pip install --disable-pip-version-check -q --upgrade pip; }
	$(PY) -m gui.commands.engine_setup

# The project itself, with the engine already in place; the stamp skips pip until pyproject.toml changes.
$(STAMP): pyproject.toml | engine
	$(PY) -m pip install --disable-pip-version-check -q --upgrade pip
	$(PY) -m pip install --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

# Verifies the SHA-256 every time; fetches only when the file is missing, partial or corrupt.
demo-model: $(STAMP)
	$(PY) -m gui fetch-demo --dest models

bench: setup
	$(PY) bench/stream_rate.py

# A fresh user directory, so the picture shows a first run and not this machine's history or settings.
screenshot: setup
	home=$$(mktemp -d) && XDG_DATA_HOME=$$home/data XDG_CONFIG_HOME=$$home/config XDG_STATE_HOME=$$home/state \
	$(PY) -m gui --model $(DEMO) --load --threads 2 --ctx 2048 \
		--prompt "Show a Python function that adds two numbers, then explain it in one sentence." \
		--screenshot docs/screenshot.png
	home=$$(mktemp -d) && XDG_DATA_HOME=$$home/data XDG_CONFIG_HOME=$$home/config XDG_STATE_HOME=$$home/state \
	$(PY) -m gui --models models --simulate v100-16gb --tab doctor --screenshot docs/doctor.png

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
