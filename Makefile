# The set-up contract: `make serve` and `make test` each work alone on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install serve test validate browser clean gpu-payload gpu-fa-src

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
# core (pytest-xdist), tests handed out as workers free up (worksteal): the slow modules
# (validation of dataset copies, the CLI's cache tests, pre-commit building its hook environment)
# are shared out instead of each landing whole on one of CI's two cores (2 cores: 113 s against
# 134 s with a module per worker, 2026-12-07). The shipped dataset's validation is one of those
# tests (test_shipped_dataset_is_valid), not a serial step before them that leaves a core idle.
test: $(STAMP) browser
	$(BIN)/python -m pytest -q -n auto --dist worksteal; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$rc

validate: $(STAMP)
	$(BIN)/errkb validate

# What the lent H200 needs for `errkb verify`, fetched from PyPI by payload.lock.json's pins and
# hashes into .gpu-cache/, packed into .gpu/call1..4/ (docs/verification.md). Standard library + pip.
gpu-payload:
	$(PYTHON) verification/device/payload.py
	$(MAKE) --no-print-directory gpu-fa-src

# The FlashAttention-2/3 sources the device builds from (docs/verification.md, "The FA2 recipe",
# "The FA3 recipe"): flash-attn 2.8.3's sdist from PyPI, and FA3's pinned git trees packed by
# fa3_src.py from clones of flash-attention and cutlass (FA_GIT, CUTLASS_GIT: any clone holding the
# pinned commits; blobless clones are made when the folders are missing). The device checks both sha256s.
FA_GIT ?= .gpu-cache/git/flash-attention
CUTLASS_GIT ?= .gpu-cache/git/cutlass
FA2_SDIST := .gpu/fa-src/flash_attn-2.8.3.tar.gz
FA2_SDIST_URL := https://files.pythonhosted.org/packages/3b/b2/8d76c41ad7974ee264754709c22963447f7f8134613fd9ce80984ed0dab7/flash_attn-2.8.3.tar.gz
gpu-fa-src:
	@[ -f $(FA2_SDIST) ] || { mkdir -p $(dir $(FA2_SDIST)) && curl -sSfL -o $(FA2_SDIST) $(FA2_SDIST_URL); }
	@[ -d $(FA_GIT) ] || git clone -q --bare --filter=blob:none https://github.com/Dao-AILab/flash-attention $(FA_GIT)
	@[ -d $(CUTLASS_GIT) ] || git clone -q --bare --filter=blob:none https://github.com/NVIDIA/cutlass $(CUTLASS_GIT)
	$(PYTHON) verification/device/fa3_src.py --flash-attention $(FA_GIT) --cutlass $(CUTLASS_GIT)

clean:
	rm -rf $(VENV) build *.egg-info
