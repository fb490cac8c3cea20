package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mlagen/mlagen/gen"
	"github.com/spf13/pflag"
)

// sweepFlags are the variant flags shared by emit and budget. Each tile flag
// takes a comma list; the sweep is their cross product.
type sweepFlags struct {
	target    string
	heads     int
	blockH    []int
	blockT    []int
	splitK    []int
	numWarps  []int
	numStages []int
	wsSplitK  string
}

func (f *sweepFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.target, "target", "sm_120", "GPU target: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120")
	fs.IntVar(&f.heads, "heads", 64, "query heads per rank (H); used for selection, any H runs")
	fs.IntSliceVar(&f.blockH, "block-h", nil, "heads per program, powers of two >= 16 (default: the target's curated sweep)")
	fs.IntSliceVar(&f.blockT, "block-t", nil, "tokens per tile, powers of two >= 16")
	fs.IntSliceVar(&f.splitK, "split-k", nil, "programs per (batch, head block) over the token list, >= 1")
	fs.IntSliceVar(&f.numWarps, "num-warps", nil, "warps per program: 1, 2, 4, 8 or 16")
	fs.IntSliceVar(&f.numStages, "num-stages", nil, "software-pipelining stages, >= 1")
	fs.StringVar(&f.wsSplitK, "ws-split-k", "", "SPLIT_K values of the warp-specialised family (sm_90: BLOCK_H 64, BLOCK_T 64,\n8 consumer warps, 2 K buffers), or \"none\" to leave it out (default: the target's)")
}

// sweep builds the sweep: the target's default lists, overridden by every
// flag the user set.
func (f *sweepFlags) sweep(fs *pflag.FlagSet) (gen.Sweep, error) {
	t, err := gen.LookupTarget(f.target)
	if err != nil {
		return gen.Sweep{}, fmt.Errorf("--target: %w", err)
	}
	s := gen.DefaultSweep(t)
	s.Heads = f.heads
	for _, l := range []struct {
		flag string
		dst  *[]int
		val  []int
	}{
		{"block-h", &s.BlockH, f.blockH}, {"block-t", &s.BlockT, f.blockT}, {"split-k", &s.SplitK, f.splitK},
		{"num-warps", &s.NumWarps, f.numWarps}, {"num-stages", &s.NumStages, f.numStages},
	} {
		if fs.Changed(l.flag) {
			*l.dst = l.val
		}
	}
	if fs.Changed("ws-split-k") {
		ks, err := parseWSSplitK(f.wsSplitK)
		if err != nil {
			return s, err
		}
		s.WSSplitK = ks
	}
	return s, s.Validate()
}

// parseWSSplitK reads --ws-split-k: a comma list of integers, or "none".
func parseWSSplitK(val string) ([]int, error) {
	if val == "none" {
		return nil, nil
	}
	var ks []int
	for _, f := range strings.Split(val, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--ws-split-k %q: want a comma list of integers >= 1, or none", val)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// sweepCommand is the canonical command line that reproduces s: the target and
// only the lists that differ from its default sweep, in a fixed order.
func sweepCommand(verb string, s gen.Sweep, extra ...string) string {
	d := gen.DefaultSweep(s.Target)
	parts := []string{"mlagen", verb, "--target", s.Target.Name}
	if s.Heads != d.Heads {
		parts = append(parts, fmt.Sprintf("--heads %d", s.Heads))
	}
	for _, l := range []struct {
		name      string
		got, dflt []int
	}{
		{"--block-h", s.BlockH, d.BlockH}, {"--block-t", s.BlockT, d.BlockT}, {"--split-k", s.SplitK, d.SplitK},
		{"--num-warps", s.NumWarps, d.NumWarps}, {"--num-stages", s.NumStages, d.NumStages},
	} {
		if !slices.Equal(l.got, l.dflt) {
			parts = append(parts, l.name+" "+joinInts(l.got))
		}
	}
	if !slices.Equal(s.WSSplitK, d.WSSplitK) {
		ws := "none"
		if len(s.WSSplitK) > 0 {
			ws = joinInts(s.WSSplitK)
		}
		parts = append(parts, "--ws-split-k "+ws)
	}
	return strings.Join(append(parts, extra...), " ")
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// newFlagSet makes a FlagSet that reports errors instead of exiting.
func newFlagSet(name string, e *env) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.SortFlags = false
	// pflag calls Usage itself on --help and on errors; parseFlags prints
	// the help once, to stdout, and errors get a one-line pointer instead.
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args; it returns (done, code): done when --help was
// asked for (usage and the flags go to stdout) or parsing failed.
func parseFlags(fs *pflag.FlagSet, e *env, args []string, usage string) (bool, int) {
	err := fs.Parse(args)
	if err == pflag.ErrHelp {
		fmt.Fprint(e.stdout, usage)
		fmt.Fprintln(e.stdout, "\nFlags:")
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return true, exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mlagen %s: %v\nRun 'mlagen %s --help' for usage.\n", fs.Name(), err, fs.Name())
		return true, exitUsage
	}
	return false, 0
}
