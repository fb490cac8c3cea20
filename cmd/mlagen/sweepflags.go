package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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
	wscSplitK string
	wsnSplitK string
	ppSplitK  string
}

// register defines the flags; targetHelp is --target's help, and its
// default is sm_120 unless the subcommand takes the target from elsewhere
// (select: the results file) and passes "".
func (f *sweepFlags) register(fs *pflag.FlagSet, targetDefault, targetHelp string) {
	fs.StringVar(&f.target, "target", targetDefault, targetHelp)
	fs.IntVar(&f.heads, "heads", 64, "query heads per rank (H) for the heuristic selection, where no measured one applies; any H runs")
	fs.IntSliceVar(&f.blockH, "block-h", nil, "heads per program of the tl.dot family (mma_*; pp_* and ws_* take only their\n--pp-split-k and --ws-* flags), powers of two >= 16 (default: the target's curated sweep)")
	fs.IntSliceVar(&f.blockT, "block-t", nil, "tokens per tile, powers of two >= 16")
	fs.IntSliceVar(&f.splitK, "split-k", nil, "programs per (batch, head block) over the token list, >= 1")
	fs.IntSliceVar(&f.numWarps, "num-warps", nil, "warps per program: 1, 2, 4, 8 or 16")
	fs.IntSliceVar(&f.numStages, "num-stages", nil, "software-pipelining stages, >= 1")
	fs.StringVar(&f.wsSplitK, "ws-split-k", "", "SPLIT_K values of the warp-specialised family (sm_90: BLOCK_H 64, BLOCK_T 64,\n8 consumer warps, 2 K buffers), or \"none\" to leave it out (default: the target's)")
	fs.StringVar(&f.wscSplitK, "ws-cluster-split-k", "", fmt.Sprintf("SPLIT_K values (2-%d) of the warp-specialised variants whose splits run as one\nthread-block cluster and merge their partials without a combine kernel (wsc_*),\nor \"none\" (default: the target's)", gen.MaxCluster))
	fs.StringVar(&f.wsnSplitK, "ws-narrow-split-k", "", "SPLIT_K values of the narrow warp-specialised variants (sm_90: BLOCK_H 16 with the\nheads on the MMAs' N side, 4 consumer and 8 producer warps, 2 and 3 K buffers each),\nor \"none\" (default: the target's)")
	fs.StringVar(&f.ppSplitK, "pp-split-k", "", "SPLIT_K values of the pipelined mma.sync family (pp_*: Q in shared memory, the next\ntile's bytes loaded during the current tile's MMAs; sm_80, sm_86, sm_89, sm_100,\nsm_120), or \"none\" to leave it out (default: the target's)")
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
	for _, l := range []struct {
		flag string
		val  string
		dst  *[]int
	}{
		{"ws-split-k", f.wsSplitK, &s.WSSplitK}, {"ws-cluster-split-k", f.wscSplitK, &s.WSClusterSplitK},
		{"ws-narrow-split-k", f.wsnSplitK, &s.WSNarrowSplitK}, {"pp-split-k", f.ppSplitK, &s.PPSplitK},
	} {
		if !fs.Changed(l.flag) {
			continue
		}
		ks, err := parseSplitKList(l.flag, l.val)
		if err != nil {
			return s, err
		}
		*l.dst = ks
	}
	if t.Path != gen.PathWGMMA {
		for _, l := range []struct {
			flag string
			ks   []int
		}{{"--ws-split-k", s.WSSplitK}, {"--ws-cluster-split-k", s.WSClusterSplitK}, {"--ws-narrow-split-k", s.WSNarrowSplitK}} {
			if len(l.ks) > 0 {
				// Every such variant would be refused (no wgmma): the flag
				// would add rows and nothing else, as --pp-split-k on sm_90.
				return s, fmt.Errorf("%s: %s has no warp-specialised family (ws_*, built on sm_90's wgmma); its Gluon kernels are the pipelined pp_* (--pp-split-k)", l.flag, t.Name)
			}
		}
	}
	if len(s.PPSplitK) > 0 && len(s.PPTiles) == 0 {
		// No tile to sweep the counts over: the flag would do nothing.
		return s, fmt.Errorf("--pp-split-k: %s has no pipelined mma.sync family (pp_*): its Gluon kernels are the warp-specialised ws_* (--ws-split-k, --ws-cluster-split-k, --ws-narrow-split-k)", t.Name)
	}
	return s, s.Validate()
}

// parseSplitKList reads --ws-split-k, --ws-cluster-split-k, --ws-narrow-split-k or --pp-split-k: a comma list of
// integers, or "none".
func parseSplitKList(flag, val string) ([]int, error) {
	if val == "none" {
		return nil, nil
	}
	var ks []int
	for _, f := range strings.Split(val, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--%s %q: want a comma list of integers >= 1, or none", flag, val)
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
	for _, l := range []struct {
		name      string
		got, dflt []int
	}{
		{"--ws-split-k", s.WSSplitK, d.WSSplitK}, {"--ws-cluster-split-k", s.WSClusterSplitK, d.WSClusterSplitK},
		{"--ws-narrow-split-k", s.WSNarrowSplitK, d.WSNarrowSplitK}, {"--pp-split-k", s.PPSplitK, d.PPSplitK},
	} {
		if !slices.Equal(l.got, l.dflt) {
			ks := "none"
			if len(l.got) > 0 {
				ks = joinInts(l.got)
			}
			parts = append(parts, l.name+" "+ks)
		}
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

// shellWord is s as one word of a shell command line, for the commands a
// generated file's header says regenerate it: as it is where that is
// safe, else single-quoted, or, where s holds a character that is not
// printable or a byte that is not UTF-8 (a newline would end the header's
// comment line, and Python reads its source as UTF-8), in bash's $'...'
// with each of those escaped.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+@%-") == "" {
		return s
	}
	plain := func(r rune) bool { return r != utf8.RuneError && unicode.IsPrint(r) }
	if !strings.ContainsFunc(s, func(r rune) bool { return !plain(r) }) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case plain(r):
			b.WriteRune(r)
		default:
			b.WriteString(gen.EscapeCodePoint(r))
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
