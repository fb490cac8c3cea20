# mlagen: `make test` is what CI runs (.ci/run runs exactly it);
# `make kernels` and `make golden` regenerate what is checked in; `make bench`
# prints the speed figures the issues ask for.
SHELL   := /bin/bash
GO      ?= go
BIN     := bin/mlagen
VENV    := .venv
PY      := $(VENV)/bin/python3
# torch (and the CUDA libraries PyPI's wheel needs to import) lives in a venv
# of its own inside .venv, so that installing it can run beside the checks
# that only need Triton: only the checks that run the modules' host code
# on the CPU import torch (the calibration stubs it).
TVENV   := $(VENV)/torch
TPY     := $(TVENV)/bin/python3
# Every Python package is pinned there, Triton 3.6.0 (the lent GPU's, which
# the budget model is calibrated against) and black (which formats the
# generated code) above all.
PINS    := .ci/constraints.txt
# Every venv is installed without pip's cache and slimmed to what the checks
# load (.ci/slim.py): CI's disk is shared and has been too full for the
# four Triton releases and torch (7.3 GB installed as PyPI ships them,
# 5.7 GB slimmed, and pip's cache would keep every wheel besides).
PIPNC   := --no-cache-dir
# Checked-in kernel folders (kernels/<dir>), also the calibrated targets.
DIRS    := sm80 sm86 sm89 sm90 sm100 sm120
# The other Triton releases SGLang installs through the torch it pins
# (0.5.18-0.5.21: torch 2.13, Triton 3.7.1; 0.5.22-0.5.23: torch 2.14.1,
# Triton 3.8.0), and the next one (torch 2.15.0, on PyPI since before
# 2026-12-05, requires Triton 3.9.0; no SGLang pins it yet): the modules
# must compile and launch there too (calib/versions.py, calib/launch.py),
# each in a venv of its own under .venv.
TRITONS := 3.7.1 3.8.0 3.9.0

# What `mlagen version` prints: module VCS stamps are often off (a build
# outside the clone, -buildvcs=false), so make build stamps the binary.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)
DATE    := $(shell git log -1 --format=%cs 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.commitDate=$(DATE)

# The Python that has torch: the torch venv, or .venv itself where torch
# was installed into it by hand; nothing when neither has it.
torch_py = if [ -x $(TPY) ]; then echo $(TPY); elif [ -x $(PY) ] && $(PY) -c 'import torch' 2>/dev/null; then echo $(PY); fi

# time LABEL CMD...: run CMD, then say how long it took (CI logs phase times).
time = s=$$SECONDS; $(2); rc=$$?; echo "$(1): $$((SECONDS - s)) s"; exit $$rc

.PHONY: build test checks gotest kernels-check pycheck calibrate calibrate-memo versions versions-golden interp qdesc plans launch splits peers route releases kernels golden bench deps deps-torch clean

build:
	@$(call time,build,$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mlagen)

# make test: every check, three at a time, torch included: it installs into
# its own venv (first time only) while Go builds and tests and the calibration
# compiles. `make checks` is the same without installing torch (the
# interpreter run and the descriptor check then run only where torch is,
# and say they were skipped otherwise).
test:
	@$(MAKE) --no-print-directory -j3 -O checks TORCH=1

checks: $(if $(TORCH),$(TVENV)/.done) build gotest kernels-check pycheck calibrate versions interp qdesc plans launch splits peers route releases
	@echo "make test: all checks passed"

# After build: the tree-sitter grammar (cgo, most of a cold build) is then
# compiled once, not by go build and go test at the same time.
gotest: build
	@# Each package's own files: gofmt -l on a folder walks its sub-packages
	@# and testdata too.
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$($(GO) list -f '{{.Dir}}/*.go' ./...)) || exit 1; \
	  if [ -n "$$out" ]; then echo "gofmt: not formatted (gofmt -w FILE mends it):"; sed 's|^$(CURDIR)/||' <<<"$$out"; exit 1; fi; \
	  echo "gofmt: ok"
	@$(call time,go vet,$(GO) vet ./...)
	@$(call time,go test,$(GO) test ./...)

# The checked-in kernels/<dir>/ are what `mlagen emit` writes (gen's golden
# test checks the same bytes, and calib/*.budget.json, without the binary).
kernels-check: build
	@for d in $(DIRS); do \
	  $(BIN) emit --target $$d --check >/dev/null || { $(BIN) emit --target $$d --check --diff; exit 1; }; \
	done
	@echo "kernels/ is up to date"

# Every emitted file compiles as Python and is black-formatted (by the
# pinned black: a new release cannot fail unchanged generated code).
pycheck: $(VENV)/.done
	$(PY) -m py_compile kernels/*/*.py calib/*.py gpu/*.py gpu/*/*.py
	$(VENV)/bin/black --check -q kernels calib gpu
	@echo "py_compile and black: ok"
	@# Without torch (.venv has Triton alone) a harness gives its --help,
	@# and otherwise says where it runs.
	@if ! $(PY) -c 'import torch' 2>/dev/null; then for d in $(DIRS); do \
	  out=$$($(PY) kernels/$$d/harness.py --help 2>&1); st=$$?; \
	  if [ $$st != 0 ] || ! grep -q -- '--variants' <<<"$$out"; then \
	    echo "kernels/$$d/harness.py --help without torch: exit $$st: $$out"; exit 1; fi; \
	  out=$$($(PY) kernels/$$d/harness.py --no-timing 2>&1); st=$$?; \
	  if [ $$st != 2 ] || ! grep -q 'runs on the machine with the GPU' <<<"$$out"; then \
	    echo "kernels/$$d/harness.py without torch: exit $$st: $$out"; exit 1; fi; \
	  for bad in '--window -128:want 1 or more' '--reps-ms 0:want 1 or more' '--graph-max-batch -1:want 0 or more' '--batches 1,x:positive integers'; do \
	    out=$$($(PY) kernels/$$d/harness.py $${bad%%:*} 2>&1); st=$$?; \
	    if [ $$st != 2 ] || ! grep -q -- "$${bad#*:}" <<<"$$out"; then \
	      echo "kernels/$$d/harness.py $${bad%%:*}: exit $$st, want 2 and '$${bad#*:}': $$out"; exit 1; fi; \
	  done; \
	done; echo "harnesses without torch: --help works, a flag's mistake exits 2 before anything runs, a run exits 2 and says where it runs"; fi

# The budget model against the real compiler, for every variant of the
# default sweeps, accepted and refused, compiled from the shipped module's
# kernels, with no GPU: Triton cross-compiles for an explicit target. The
# compiler's answers are memoised in calib/compiled/<dir>.json by a key
# of everything the compile is given (the kernel's code as Triton hashes
# it, options, target, Triton's version): every run judges the model
# against them, and compiles only what the memo lacks (a kernel changed).
# 'make calibrate-memo' compiles what is missing and rewrites the memos:
# run it after changing a kernel template, and commit calib/compiled/.
# calib/code-<dir>.txt lists each variant's machine code as a digest of its
# SASS, then that of the combine kernels the variants launch: a template
# change's diff there names every kernel whose code it changed (and so
# whose timings predate it); a change that moves source without changing
# code leaves the file as it was. A run whose compiles disagree with the
# file fails until calibrate-memo rewrites it, as does a combine kernel
# that spills.
calibrate: $(addprefix calibrate-,$(DIRS))
calibrate-%: $(VENV)/.done
	@$(call time,calibrate $*,$(PY) calib/calibrate.py --budget calib/$*.budget.json --kernel kernels/$*/sparse_mla_mma.py \
	    --known calib/known-$*.txt --memo calib/compiled/$*.json --code calib/code-$*.txt $(MEMO) --json $(VENV)/calib-$*.json > $(VENV)/calib-$*.log \
	    || { cat $(VENV)/calib-$*.log; exit 1; }; tail -n 2 $(VENV)/calib-$*.log | grep -v '^$$')
calibrate-memo:
	@$(MAKE) --no-print-directory calibrate MEMO=--update-memo

# Every kernel of the shipped modules compiled under each of TRITONS, for
# its target, no GPU (calib/versions.py): a compile error or a kernel over
# its target's shared memory fails; registers, spills and the L2
# prefetches ptxas kept are held to calib/triton-<version>.txt, which
# 'make versions-golden' rewrites (after a kernel template changes: review
# the diff, commit it and the memo of compiles,
# calib/compiled/triton-<version>.json, so that CI compiles only what
# changed). Where Gluon's API changed, the module's compatibility names
# (_cta_barrier) carry both.
versions: $(addprefix versions-,$(TRITONS)) $(addprefix versions-host-,$(TRITONS))
versions-%: $(VENV)/triton-%/.done
	@$(call time,triton $*,$(VENV)/triton-$*/bin/python calib/versions.py --memo calib/compiled/triton-$*.json $(addprefix kernels/,$(DIRS)) > $(VENV)/triton-$*.txt; st=$$?; \
	  diff -u calib/triton-$*.txt $(VENV)/triton-$*.txt \
	  || { echo "calib/triton-$*.txt: the kernels compile differently under Triton $* ('make versions-golden' rewrites it after a template change)"; st=1; }; \
	  test $$st = 0)
# Their host code under the same releases, with the torch venv's torch: the
# launch plans of every configuration of every module (calib/plans.py),
# every launch against the release's own launcher (calib/launch.py) and
# the sm_120 harness under the interpreter (calib/interp.py).
versions-host-%: $(VENV)/triton-%/.done $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "triton $* host: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	site=$$($(VENV)/triton-$*/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	$(call time,triton $* host,{ PYTHONPATH=$$site $$py -c 'import triton; v = triton.__version__; assert v == "$*"; print("imported Triton " + v)' \
	  && PYTHONPATH=$$site $$py calib/plans.py $(addprefix kernels/,$(DIRS)) \
	  && PYTHONPATH=$$site $$py calib/launch.py $(addprefix kernels/,$(DIRS)) \
	  && PYTHONPATH=$$site TRITON_INTERPRET=1 $$py calib/interp.py kernels/sm120/harness.py; } > $(VENV)/triton-$*-host.log 2>&1 \
	  || { cat $(VENV)/triton-$*-host.log; exit 1; }; grep '^calib/launch.py:' $(VENV)/triton-$*-host.log; tail -n 1 $(VENV)/triton-$*-host.log)
versions-golden: $(addprefix $(VENV)/triton-,$(addsuffix /.done,$(TRITONS)))
	@for v in $(TRITONS); do \
	  $(VENV)/triton-$$v/bin/python calib/versions.py --memo calib/compiled/triton-$$v.json --update-memo $(addprefix kernels/,$(DIRS)) > calib/triton-$$v.txt || exit 1; \
	  echo "wrote calib/triton-$$v.txt"; \
	done
$(VENV)/triton-%/.done: | $(VENV)/.done
	@$(call time,triton $* deps,python3 -m venv $(VENV)/triton-$* && $(VENV)/triton-$*/bin/pip install -q $(PIPNC) -c $(PINS) pip \
	  && $(VENV)/triton-$*/bin/pip install -q $(PIPNC) --progress-bar off triton==$* \
	  && $(VENV)/triton-$*/bin/python .ci/slim.py triton && touch $@)

# The configurations of each shipped module that take distinct code paths,
# the SIMT baseline and the module's own selection, on small cases under
# the Triton interpreter (calib/interp.py says which), where torch is.
interp: $(addprefix interp-,$(DIRS))
interp-%: $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "interp $*: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,interp $*,TRITON_INTERPRET=1 $$py calib/interp.py kernels/$*/harness.py > $(VENV)/interp-$*.log 2>&1 \
	  || { cat $(VENV)/interp-$*.log; exit 1; }; tail -n 1 $(VENV)/interp-$*.log)

# The warp-specialised kernels read Q through a host-side TMA descriptor;
# check on the CPU that it covers Q's heads in order for every layout the
# harness tests (the kernels themselves only run on a GPU).
qdesc: $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "qdesc: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,qdesc,$$py calib/qdesc.py kernels/sm90)

# Every configuration of every module builds its launch plan on the CPU
# (calib/plans.py): a launch that forgets a parameter the template gave a
# Gluon kernel would otherwise only show on a GPU.
plans: $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "plans: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,plans,$$py calib/plans.py $(addprefix kernels/,$(DIRS)))

# After its first call each launch goes to Triton's C launcher directly,
# whose arguments changed order in Triton 3.7 (calib/launch.py): every
# launch of every plan against the pinned release's own launcher, with a
# stand-in for its C function that parses as the real one does; under
# TRITONS in versions-host-%.
launch: $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "launch: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,launch,$$py calib/launch.py $(addprefix kernels/,$(DIRS)) > $(VENV)/launch.log 2>&1 \
	  || { cat $(VENV)/launch.log; exit 1; }; tail -n 1 $(VENV)/launch.log)

# How each module fits its tables' split counts to the GPU a call runs on
# (fit_splits, calib/splits.py): the tables' own where they were measured,
# only cheaper ones elsewhere, on GPUs of 8 to 188 multiprocessors; and
# how its entry points take the count (MLAGEN_SMS, the plans' keys).
splits: $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "splits: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,splits,$$py calib/splits.py $(addprefix kernels/,$(DIRS)))

# The harness's peers on the CPU (calib/peers_check.py): absent ones
# reported with the reason, stand-ins checked against the reference, a
# wrong one failing, a bucket given to a peer declined by the module (and
# deferred by its defers_full).
peers: $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "peers: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,peers,TRITON_INTERPRET=1 $$py calib/peers_check.py kernels/sm120/harness.py > $(VENV)/peers.log 2>&1 \
	  || { cat $(VENV)/peers.log; exit 1; }; tail -n 1 $(VENV)/peers.log)

# The route a decode call takes through a real SGLang release (0.5.23's
# sm_120 entry module, SIMT module and environ.py) patched for sm_120, run
# under the Triton interpreter (gpu/route): gate unset, SGLang's own
# backends; gate set after import, the MMA kernel's whole call; gate set and
# the whole-call bucket given to a peer, SGLang's backend choice (FlashInfer).
route: build $(if $(TORCH),$(TVENV)/.done)
	@py=$$($(torch_py)); if [ -z "$$py" ]; then \
	  echo "route: skipped (no torch; run 'make deps-torch')"; exit 0; fi; \
	$(call time,route,{ bash gpu/route/prepare.sh $(BIN) && $$py gpu/route/check.py gpu/route/work/sm120 --interpret; } > $(VENV)/route.log 2>&1 \
	  || { cat $(VENV)/route.log; exit 1; }; grep -E '^(ok|FAIL)' $(VENV)/route.log)

# patch, verify, repatch, revert and a pip round trip on real SGLang
# release wheels (downloaded from PyPI once, then cached).
releases: build
	@$(call time,sglang releases,bash .ci/sglang-releases.sh $(BIN))

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

# The Python side, pinned: Triton, black and numpy in .venv (what the
# calibration and pycheck need); TORCH=1 adds the torch venv.
deps: $(VENV)/.done $(if $(TORCH),$(TVENV)/.done)
deps-torch: $(TVENV)/.done

$(VENV)/.done:
	@$(call time,python deps,python3 -m venv $(VENV) && $(VENV)/bin/pip install -q $(PIPNC) -c $(PINS) pip \
	  && $(VENV)/bin/pip install -q $(PIPNC) -c $(PINS) triton black numpy && $(PY) .ci/slim.py triton && touch $@)

# torch one wheel at a time, sharing .venv's Triton (.ci/install-torch.sh
# says why: the disk it needs at once).
$(TVENV)/.done: | $(VENV)/.done
	@$(call time,torch deps,bash .ci/install-torch.sh $(TVENV) $(PINS) \
	  "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" && touch $@)

clean:
	rm -rf bin $(VENV)
