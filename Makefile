# Two commands for a fresh machine: `make test` and `make demo` (docs: Quick start).
# Needs Linux, Python 3.11 or newer and bubblewrap: checked first (scripts/check_requirements.sh).
PYTHON ?= python3
# PyTorch's wheel index: its CPU build unless told otherwise (pip's own index has the multi-GB
# CUDA build on Linux). A CUDA build: make TORCH_INDEX=https://download.pytorch.org/whl/cu128
# (docs: Grading on a GPU); TORCH_INDEX= (empty) for pip's own index.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH  := torch==2.13.0
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The reference solutions' recorded hypothesis runs (autograder/checks/kept_runs.py: SHIPPED),
# made again whenever the grading code changes.
RUNS   := $(VENV)/share/attention-autograder/reference-runs
GRADER := $(shell find autograder reference -name '*.py') grader.yml

.PHONY: test demo docs release bench requirements sandbox-deps browser-deps clean wheels gpu-check

$(STAMP): pyproject.toml | requirements
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	bash scripts/install_torch.sh $(PY) $(TORCH) $(TORCH_INDEX)
	$(PY) -m pip install -q -e '.[test,docs]'
	touch $(STAMP)

# Linux, Python >= 3.11, bubblewrap or a way to install it: every missing one named, before any work.
requirements:
	@bash scripts/check_requirements.sh $(if $(wildcard $(PY)),$(PY),$(PYTHON))

# Grades the bundled correct notebooks once, keeping only their recorded runs: a TA's first
# correct notebook then replays them instead of paying hypothesis's search (about 0.9 s).
$(RUNS)/.made: $(STAMP) $(GRADER) | sandbox-deps
	rm -rf $(RUNS) && mkdir -p $(RUNS)
	for a in attention_scoring bahdanau; do \
	  $(VENV)/bin/autograder grade examples/$$a/correct.ipynb --assignment $$a --output $(RUNS)/.grading/$$a --jobs 1 >/dev/null || exit 1; \
	  cp -r $(RUNS)/.grading/$$a/.recorded-runs/. $(RUNS)/; \
	done
	rm -rf $(RUNS)/.grading && touch $@

# bubblewrap is the sandbox that runs student code (docs: Security and limits). apt-get runs
# as root, or through sudo (scripts/apt_install.sh).
sandbox-deps:
	@command -v bwrap >/dev/null || bash scripts/apt_install.sh bubblewrap

# Debian's chromium renders the feedback pages in tests/pages (Playwright drives it; its own
# browser download cannot be fetched here).
browser-deps:
	@test -x /usr/bin/chromium || bash scripts/apt_install.sh chromium

# Lint first (pyproject.toml: the complexity and commented-out-code rules), then the suite
# (the docs' build, links and quick start included: tests/docs).
test: $(STAMP) $(RUNS)/.made sandbox-deps browser-deps
	$(VENV)/bin/ruff check .
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(PY) -m pytest -p no:cacheprovider

# Grades the bundled example submissions (correct, untouched, buggy, hostile).
demo: $(STAMP) $(RUNS)/.made sandbox-deps
	$(VENV)/bin/autograder grade examples/attention_scoring --assignment attention_scoring --output demo_output/attention_scoring --force
	$(VENV)/bin/autograder grade examples/bahdanau --assignment bahdanau --output demo_output/bahdanau --force

# The docs site, offline, into build/docs/ (open build/docs/index.html); warnings are errors.
docs: $(STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -n -E -q -b html docs build/docs
	@echo "docs: build/docs/index.html"

release: $(STAMP)
	$(VENV)/bin/autograder release

bench: $(STAMP)
	$(PY) benchmarks/attention_speed.py
	$(PY) benchmarks/decoder_speed.py

# What a GPU machine without a package registry needs, downloaded here into wheels/
# (ignored; under 60 MB); scripts/gpu_check_device.md says how to carry and run it.
wheels: $(STAMP)
	$(PY) scripts/gpu_check_wheels.py --dest wheels

# CUDA vs CPU grades, run on a GPU machine with its own python3 and torch (no .venv, no
# pip install there). Its CPU self-test is tests/engine/test_gpu_check.py.
gpu-check:
	bash scripts/gpu_check.sh --device $(or $(DEVICE),cuda)

clean:
	rm -rf $(VENV)
