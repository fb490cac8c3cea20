package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mlagen/mlagen/watch/fakesglang"
)

// An example is one command line of the README or of a --help, run as
// written by bash in a folder laid out for it, with HOME there too (so that
// ~/sglang is the fixture's) and the mlagen under test first on PATH.
type example struct {
	// fixtures lay out the folder before the run (see layFixture).
	fixtures []string
	// exit is the status the example must end with in that folder (a
	// watch whose log shows a failure exits 1).
	exit int
	// skip, when set, is why the example cannot run here; it is logged.
	skip string
}

// examples holds every example, word for word (comments after # cut). A
// new example in the README or a help text fails the test until it is
// added here; an entry that no text holds any more fails too.
var examples = map[string]example{
	// README
	"bin/mlagen emit":               {fixtures: []string{"repo", "bin"}},
	"mlagen emit --target sm_90":    {fixtures: []string{"repo"}},
	"mlagen budget --target sm_120": {},
	"mlagen patch ~/sglang":         {fixtures: []string{"sglang"}},
	"mlagen verify ~/sglang":        {fixtures: []string{"sglang", "patched"}},
	"mlagen version":                {},
	"mlagen help CMD":               {skip: "CMD stands for any command; cli_style.txtar runs 'mlagen help' with each"},
	"mlagen select --dry-run gpu/results/selection-input-sm90.json": {fixtures: []string{"repo"}},
	"mlagen watch --log server.log --expect-kernel":                 {fixtures: []string{"failed-log"}, exit: 1},
	"mlagen select my-card-all.json":                                {skip: "my-card-all.json is what the harness writes on your GPU; select_peers.txtar runs select on such a file"},
	"mlagen select --selections . my-card-all.json":                 {skip: "my-card-all.json is what the harness writes on your GPU; emit_selection.txtar runs select --selections on such a file"},
	"mlagen emit --selection sm120.json --kernels my-sm120":         {fixtures: []string{"repo", "card-selection"}},
	"mlagen patch --kernels my-sm120 ~/sglang":                      {fixtures: []string{"repo", "card-selection", "card-kernels", "sglang"}},
	"mlagen patch --selection sm120.json ~/sglang":                  {fixtures: []string{"repo", "card-selection", "sglang"}},
	"mlagen watch --env SGLANG_SM120_MMA_FLASHMLA=1 --log server.log -- python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash": {
		skip: "starts a real SGLang server, on a GPU (watch_kernel.txtar runs these flags with a fake server)"},

	// mlagen --help
	"mlagen --version":                     {},
	"mlagen emit --target sm_90 --dry-run": {fixtures: []string{"repo"}},
	"mlagen help patch":                    {},

	// budget, emit
	"mlagen budget": {},
	"mlagen budget --json | jq '.variants[] | select(.fits | not)'":           {},
	"mlagen budget --target sm_90 --block-h 64 --block-t 64 --num-stages 2,3": {},
	"mlagen emit": {fixtures: []string{"repo"}},
	"mlagen emit --block-h 16,32 --block-t 16 --split-k 1,8 --dry-run": {},
	"mlagen emit --target sm_90 --check":                               {fixtures: []string{"repo"}},
	"mlagen emit --target sm_90 --check --diff":                        {fixtures: []string{"repo"}},
	"mlagen emit --target sm_90 --per-variant --kernels k-all":         {},

	"mlagen emit --target sm_90 --ws-split-k none --ws-cluster-split-k none --ws-narrow-split-k none --kernels k-triton": {},

	// patch, verify
	"mlagen patch --dry-run ~/sglang":                                         {fixtures: []string{"sglang"}},
	"mlagen patch --check ~/sglang":                                           {fixtures: []string{"sglang", "patched"}},
	"mlagen patch --json --dry-run ~/sglang | jq .route":                      {fixtures: []string{"sglang"}},
	"mlagen patch --kernels kernels/sm120 ~/sglang":                           {fixtures: []string{"repo", "sglang"}},
	"mlagen patch --revert ~/sglang":                                          {fixtures: []string{"sglang", "patched"}},
	"mlagen patch .venv/lib/python3.11/site-packages/sglang":                  {fixtures: []string{"site-packages"}},
	"mlagen patch --target sm_89 ~/sglang":                                    {fixtures: []string{"sglang"}, exit: 1},
	"mlagen patch --target sm_89 --allow-unreached ~/sglang":                  {fixtures: []string{"sglang"}},
	"mlagen patch --accept-unjudged python/sglang/srt/registry.py:3 ~/sglang": {fixtures: []string{"sglang", "registry"}},
	"mlagen verify --json ~/sglang | jq '.missed | length'":                   {fixtures: []string{"sglang", "patched"}},
	"mlagen verify --json ~/sglang | jq .route.entries":                       {fixtures: []string{"sglang", "patched"}},

	// select, version
	"mlagen select --check gpu/results/selection-input-sm90.json":                                {fixtures: []string{"repo"}},
	"mlagen select --dry-run gpu/results/selection-input-sm120.json":                             {fixtures: []string{"repo"}},
	"mlagen select --json --dry-run gpu/results/selection-input-sm90.json | jq .selection.table": {fixtures: []string{"repo"}},
	"mlagen select --selections . gpu/results/selection-input-sm120.json":                        {fixtures: []string{"repo"}},
	"mlagen select --selections . my-card-all.json --also my-card-all-triton-3.8.0.json": {
		skip: "the harness writes both files on your GPU, one under each Triton; select.txtar runs select --also on such files"},
	"mlagen version --json | jq '.targets[] | select(.calibrated)'": {},

	// watch: with a log whose start fails (out of memory), each runs as
	// written and ends in that failure; nothing needs a server.
	"mlagen watch --log ~/dsv4_mma.log":                 {fixtures: []string{"failed-log"}, exit: 1},
	"mlagen watch --log ~/dsv4_mma.log --expect-kernel": {fixtures: []string{"failed-log"}, exit: 1},
	`mlagen watch --cmd "ssh root@gpu1 tail -n +1 -F /root/dsv4_mma.log" --url http://gpu1:30000`: {
		skip: "reads a log over ssh from a GPU host (watch_failure.txtar runs --cmd with a local command)"},
	"mlagen watch --env SGLANG_SM120_MMA_FLASHMLA=1 --log ~/dsv4_mma.log -- python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp 4": {
		skip: "starts a real SGLang server, on GPUs (watch_kernel.txtar runs these flags with a fake server)"},
	"mlagen watch --log server.log --save-baseline start.json --save-answer answer.txt": {fixtures: []string{"failed-log"}, exit: 1},
	"mlagen watch --log server.log --baseline start.json --expect-file answer.txt":      {fixtures: []string{"failed-log", "baseline"}, exit: 1},
	"mlagen watch --log server.log --json > watch.json":                                 {fixtures: []string{"failed-log"}, exit: 1},
}

// TestExamples runs every example of the README and of every --help as
// written (see examples).
func TestExamples(t *testing.T) {
	found := map[string]string{}
	for _, ex := range readmeExamples(t) {
		found[ex] = "README.md"
	}
	for ex, from := range helpExamples(t) {
		found[ex] = from
	}
	for ex, from := range found {
		if _, ok := examples[ex]; !ok {
			t.Errorf("%s has the example %q, which examples_test.go does not know: add it with its fixtures and exit status (or the reason it cannot run)", from, ex)
		}
	}
	names := slices.Sorted(maps.Keys(examples))
	for _, ex := range names {
		if _, ok := found[ex]; !ok {
			t.Errorf("examples_test.go lists %q, which neither the README nor any --help holds any more: remove it", ex)
		}
	}
	mlagen, err := exec.LookPath("mlagen")
	if err != nil {
		t.Fatalf("the mlagen under test is not on PATH: %v", err)
	}
	for _, ex := range names {
		spec := examples[ex]
		if _, ok := found[ex]; !ok {
			continue
		}
		t.Run(ex, func(t *testing.T) {
			if spec.skip != "" {
				t.Skipf("not run: %s", spec.skip)
			}
			dir := t.TempDir()
			for _, f := range spec.fixtures {
				layFixture(t, f, dir, mlagen)
			}
			runExample(t, ex, dir, spec.exit)
		})
	}
}

// runExample runs ex with bash in dir, HOME=dir, and checks its exit
// status. Without jq on the machine, a pipe into jq runs only its mlagen
// part, whose output must then be JSON.
func runExample(t *testing.T, ex, dir string, want int) {
	t.Helper()
	script, jsonOnly := ex, false
	if i := strings.Index(ex, " | jq "); i >= 0 {
		if _, err := exec.LookPath("jq"); err != nil {
			script, jsonOnly = ex[:i], true
			t.Logf("jq is not installed: running %q and checking that it prints JSON", script)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "SGLANG_SM120_MMA_FLASHMLA=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s: %v", ex, err)
	}
	if got != want {
		t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", ex, got, want, stdout.String(), stderr.String())
	}
	if jsonOnly && !json.Valid(stdout.Bytes()) {
		t.Errorf("%s: not JSON:\n%s", script, stdout.String())
	}
}

// layFixture lays out one fixture in dir:
//
//	repo           what the examples read from a clone: kernels/, gen/selections/, gpu/results/*.json
//	bin            bin/mlagen, the binary under test
//	sglang         an SGLang checkout at ~/sglang (testdata/examples/sglang.txtar under python/)
//	site-packages  the same tree as an installed SGLang under .venv/lib/python3.11/site-packages
//	patched        ~/sglang patched, as 'mlagen patch ~/sglang' leaves it
//	failed-log     server.log and ~/dsv4_mma.log: an SGLang start that runs out of memory
//	baseline       start.json and answer.txt, as --save-baseline and --save-answer write them
//	card-selection ./sm120.json, as 'mlagen select --selections .' writes it from a card's results (after repo)
//	registry       ~/sglang/python/sglang/srt/registry.py, naming the kernel in a string (after sglang)
//	card-kernels   my-sm120/, the module 'mlagen emit --selection sm120.json' writes (after card-selection)
func layFixture(t *testing.T, name, dir, mlagen string) {
	t.Helper()
	root := filepath.Join("..", "..")
	switch name {
	case "repo":
		copyTree(t, filepath.Join(root, "kernels"), filepath.Join(dir, "kernels"), "")
		copyTree(t, filepath.Join(root, "gen", "selections"), filepath.Join(dir, "gen", "selections"), "")
		copyTree(t, filepath.Join(root, "gpu", "results"), filepath.Join(dir, "gpu", "results"), ".json")
	case "bin":
		must(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
		must(t, os.Symlink(mlagen, filepath.Join(dir, "bin", "mlagen")))
	case "sglang":
		unpack(t, filepath.Join("testdata", "examples", "sglang.txtar"), filepath.Join(dir, "sglang", "python"))
	case "site-packages":
		unpack(t, filepath.Join("testdata", "examples", "sglang.txtar"), filepath.Join(dir, ".venv", "lib", "python3.11", "site-packages"))
	case "patched":
		runExample(t, "mlagen patch ~/sglang", dir, 0)
	case "registry":
		// A lookup of the kernel by name, which the proof cannot follow.
		src := "import importlib\n\nKERNEL = \"_run_triton_sparse_decode\"\n"
		must(t, os.WriteFile(filepath.Join(dir, "sglang", "python", "sglang", "srt", "registry.py"), []byte(src), 0o644))
	case "failed-log":
		log := []byte(fakesglang.Text(fakesglang.FailingStart("oom")))
		must(t, os.WriteFile(filepath.Join(dir, "server.log"), log, 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "dsv4_mma.log"), log, 0o644))
	case "card-selection":
		runExample(t, "mlagen select --selections . gpu/results/selection-input-sm120.json", dir, 0)
	case "card-kernels":
		runExample(t, "mlagen emit --selection sm120.json --kernels my-sm120", dir, 0)
	case "baseline":
		must(t, os.WriteFile(filepath.Join(dir, "start.json"), []byte(`{"version": 1, "saved": "2026-12-01T00:00:00Z", "phases": [{"name": "load-weights", "seconds": 33.84}, {"name": "startup", "seconds": 68}]}`), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "answer.txt"), []byte(" Paris."), 0o644))
	default:
		t.Fatalf("unknown fixture %q", name)
	}
}

func copyTree(t *testing.T, from, to, suffix string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, suffix) {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		data, err := os.ReadFile(p)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(to, rel), data, 0o644)
		}
		return err
	})
	must(t, err)
}

func unpack(t *testing.T, archive, to string) {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	must(t, err)
	for _, f := range a.Files {
		p := filepath.Join(to, filepath.FromSlash(f.Name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, f.Data, 0o644))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readmeExamples are the commands of README.md: the lines of its sh blocks
// and its inline code that start with "mlagen " or "bin/mlagen ".
func readmeExamples(t *testing.T) []string {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inSh := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = line == "```sh"
		case inSh:
			out = append(out, exampleIn(line)...)
		default:
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				out = append(out, exampleIn(m[1])...)
			}
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// exampleIn is the example in s, a line of a code block or inline code,
// without a trailing comment; none when s is not a command of ours.
func exampleIn(s string) []string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "  #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	for _, p := range []string{"mlagen ", "bin/mlagen "} {
		if strings.HasPrefix(s, p) {
			return []string{s}
		}
	}
	return nil
}

// helpExamples are the commands under "Examples:" of the top-level help
// and every subcommand's, with continued lines (\) joined.
func helpExamples(t *testing.T) map[string]string {
	out := map[string]string{}
	texts := map[string]string{"mlagen --help": helpOf(t, "--help")}
	for _, c := range commands() {
		if c.name != "help" {
			texts["mlagen "+c.name+" --help"] = helpOf(t, c.name, "--help")
		}
	}
	for from, text := range texts {
		_, ex, ok := strings.Cut(text, "\nExamples:\n")
		if !ok {
			t.Errorf("%s has no Examples", from)
			continue
		}
		var cont string
		for _, line := range strings.Split(ex, "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if !strings.HasPrefix(line, "  ") {
				break
			}
			line = strings.TrimSpace(line)
			if cont != "" {
				line, cont = cont+" "+line, ""
			}
			if strings.HasSuffix(line, `\`) {
				cont = strings.TrimSpace(strings.TrimSuffix(line, `\`))
				continue
			}
			for _, c := range exampleIn(line) {
				out[c] = from
			}
		}
	}
	return out
}

func helpOf(t *testing.T, args ...string) string {
	var out, errb bytes.Buffer
	if code := mainEnv(&env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args); code != exitOK {
		t.Fatalf("mlagen %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}
