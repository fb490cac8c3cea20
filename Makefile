# mlagen: `make test` is what CI runs (.ci/run); `make kernels` and
# `make golden` regenerate what is checked in; `make bench` prints the speed
# figures the issues ask for.
GO      ?= go
BIN     := bin/mlagen
VENV    := .venv
PY      := $(VENV)/bin/python3
# The Triton the lent GPU runs; the budget model is calibrated against it, so
# CI compiles with exactly this version.
TRITON  := triton==3.6.0
TARGETS := sm90:sm_90 sm120:sm_120

.PHONY: build test gotest kernels-check pycheck calibrate interp qdesc kernels golden bench deps clean

build:
	$(GO) build -o $(BIN) ./cmd/mlagen

test: build gotest kernels-check pycheck calibrate interp qdesc
	@echo "make test: all checks passed"

gotest:
	$(GO) vet ./...
	$(GO) test ./...

# The checked-in kernels/<dir>/ are what `mlagen emit` writes (gen's golden
# test checks the same bytes, and calib/*.budget.json, without the binary).
kernels-check: build
	@for tt in $(TARGETS); do t=$${tt##*:}; \
	  $(BIN) emit --target $$t --check >/dev/null || { $(BIN) emit --target $$t --check; exit 1; }; \
	done
	@echo "kernels/ is up to date"

# Every emitted file compiles as Python and is black-formatted.
pycheck: $(VENV)/.done
	$(PY) -m py_compile kernels/*/*.py calib/*.py gpu/*.py gpu/dispatch/*.py
	$(VENV)/bin/black --check -q kernels calib gpu
	@echo "py_compile and black: ok"

# The budget model against the real compiler, for every variant of the
# default sweeps, accepted and refused, compiled from the shipped module's
# kernels, with no GPU: Triton cross-compiles for an explicit target.
calibrate: $(VENV)/.done
	@for tt in $(TARGETS); do d=$${tt%%:*}; \
	  $(PY) calib/calibrate.py --budget calib/$$d.budget.json --kernel kernels/$$d/sparse_mla_mma.py \
	    --known calib/known-$$d.txt --json $(VENV)/calib-$$d.json > $(VENV)/calib-$$d.log \
	    || { cat $(VENV)/calib-$$d.log; exit 1; }; tail -n 1 $(VENV)/calib-$$d.log; \
	done

# Every Triton configuration of each shipped module, the SIMT baseline and
# the module's own selection, on a tiny case under the Triton interpreter,
# where torch is installed (CI installs it; `make deps TORCH=1` does locally).
interp: $(VENV)/.done
	@if $(PY) -c 'import torch' 2>/dev/null; then \
	  for tt in $(TARGETS); do d=$${tt%%:*}; \
	    TRITON_INTERPRET=1 $(PY) calib/interp.py kernels/$$d/harness.py > $(VENV)/interp-$$d.log 2>&1 \
	      || { cat $(VENV)/interp-$$d.log; exit 1; }; tail -n 1 $(VENV)/interp-$$d.log; \
	  done; \
	else echo "interp: skipped (no torch in $(VENV); run 'make deps TORCH=1')"; fi

# The warp-specialised kernels read Q through a host-side TMA descriptor;
# check on the CPU that it covers Q's heads in order for every layout the
# harness tests (the kernels themselves only run on a GPU).
qdesc: $(VENV)/.done
	@if $(PY) -c 'import torch' 2>/dev/null; then $(PY) calib/qdesc.py kernels/sm90; \
	else echo "qdesc: skipped (no torch in $(VENV); run 'make deps TORCH=1')"; fi

# Regenerate what the default sweeps check in: kernels/<dir>/ and the
# calibration inputs calib/<dir>.budget.json (gen's golden files).
kernels:
	$(GO) test ./gen -run '^TestGolden(Kernels|CalibrationInput)$$' -update

# Rewrite the golden files of the packages that have them, then review the diff.
GOLDEN_PKGS := ./gen ./patches ./patches/resolve ./watch ./cmd/mlagen
golden:
	$(GO) test $(GOLDEN_PKGS) -update

bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./gen ./patches

$(VENV)/.done:
	$(MAKE) deps

deps:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "$(TRITON)" black "numpy<2.3"
	@if [ -n "$(TORCH)" ]; then $(VENV)/bin/pip install -q torch==2.11.0 "numpy<2.3"; fi
	touch $(VENV)/.done

clean:
	rm -rf bin $(VENV)
