# The set-up contract: `make serve` and `make test` each work alone on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install serve test validate browser clean gpu-payload

install: $(STAMP)

$(STAMP): pyproject.toml errkb/_candidates.c errkb/_paste.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

serve: $(STAMP)
	$(BIN)/errkb serve --host $(HOST) --port $(PORT)

# The web page is tested in a real headless Chromium from Debian's packages (no downloads).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null)

# pytest exits 5 when it collected nothing: that must fail, not pass silently. One worker per
# core (pytest-xdist), a test module per worker: the slow modules (pre-commit building its hook
# environment, the CLI's cache tests) overlap instead of adding up on CI's two cores.
test: $(STAMP) browser
	$(BIN)/errkb validate
	$(BIN)/python -m pytest -q -n auto --dist loadfile; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

validate: $(STAMP)
	$(BIN)/errkb validate

# What the lent H200 needs for `errkb verify`, fetched from PyPI by payload.lock.json's pins and
# hashes into .gpu-cache/, packed into .gpu/call1..4/ (docs/verification.md). Standard library + pip.
gpu-payload:
	$(PYTHON) verification/device/payload.py

clean:
	rm -rf $(VENV) build *.egg-info
