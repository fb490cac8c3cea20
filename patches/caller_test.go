package patches

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlagen/mlagen/patches/resolve"
)

// TestPlatformAt reads the tests around a call of entry() the way the route
// proof does, on GPUs of compute capability 12 (sm_120) and 8 (sm_89).
func TestPlatformAt(t *testing.T) {
	cases := []struct {
		name, src  string
		on12, on8  reach
		test       string
		line       int
		unknownMaj bool // with no target the verdict is unknown, the test still named
		test8      string
		line8      int // the deciding test on major 8, where it is another
	}{
		{"no test", "def f():\n    return entry()\n", reachUnknown, reachUnknown, "", 0, false, "", 0},
		{"a test of something else", "def f():\n    if x.ready:\n        return entry()\n", reachUnknown, reachUnknown, "", 0, false, "", 0},
		{"0.5.19 on", "def f():\n    if get_platform().is_sm120:\n        return entry()\n", reachYes, reachNo, "get_platform().is_sm120", 2, true, "", 0},
		{"0.5.14 to 0.5.18", "_is_sm120 = is_sm120_supported()\n\n\ndef f():\n    if _is_sm120:\n        return entry()\n", reachYes, reachNo, "_is_sm120", 5, true, "", 0},
		{"called predicate", "def f():\n    if utils.is_sm120_supported():\n        return entry()\n", reachYes, reachNo, "utils.is_sm120_supported()", 2, true, "", 0},
		{"negated", "def f():\n    if not _is_sm120:\n        return entry()\n", reachNo, reachYes, "not _is_sm120", 2, true, "", 0},
		{"else of a negated test", "def f():\n    if not _is_sm120:\n        return other()\n    else:\n        return entry()\n", reachYes, reachNo, "_is_sm120", 2, true, "", 0},
		{"else of the test", "def f():\n    if _is_sm120:\n        return other()\n    else:\n        return entry()\n", reachNo, reachYes, "not _is_sm120", 2, true, "", 0},
		{"elif after the test", "def f():\n    if _is_sm120:\n        return other()\n    elif ready:\n        return entry()\n", reachNo, reachYes, "not _is_sm120", 2, true, "", 0},
		{"elif test", "def f():\n    if is_sm100:\n        return other()\n    elif get_platform().is_sm120:\n        return entry()\n", reachYes, reachNo, "get_platform().is_sm120", 4, true, "", 0},
		{"and with another test", "def f():\n    if _is_sm120 and ready:\n        return entry()\n", reachYes, reachNo, "_is_sm120 and ready", 2, true, "", 0},
		{"an elif after another test", "def f():\n    if ready:\n        return other()\n    elif _is_sm120:\n        return entry()\n", reachYes, reachNo, "_is_sm120", 4, true, "", 0},
		{"or with another test", "def f():\n    if _is_sm120 or _is_xpu:\n        return entry()\n", reachYes, reachYes, "_is_sm120 or _is_xpu", 2, true, "", 0},
		{"parenthesised", "def f():\n    if (get_platform().is_sm120):\n        return entry()\n", reachYes, reachNo, "(get_platform().is_sm120)", 2, true, "", 0},
		{"nested: an outer test that excludes", "def f():\n    if not _is_sm120:\n        if ready:\n            return entry()\n", reachNo, reachYes, "not _is_sm120", 2, true, "", 0},
		{"nested: each excludes one", "def f():\n    if is_sm100:\n        pass\n    elif _is_sm120:\n        if not _is_sm120:\n            return entry()\n", reachNo, reachNo, "not _is_sm120", 5, true, "_is_sm120", 4},
		{"a lambda's branch is still under the if", "def f():\n    if _is_sm120:\n        g = lambda: entry()\n", reachYes, reachNo, "_is_sm120", 2, true, "", 0},
		{"else of an and with another test", "def f():\n    if avail and not _is_sm120:\n        return other()\n    else:\n        return entry()\n", reachYes, reachYes, "not (avail and not _is_sm120)", 2, true, "", 0},
		{"not over an and with another test", "def f():\n    if not (ready and _is_sm120):\n        return entry()\n", reachYes, reachYes, "not (ready and _is_sm120)", 2, true, "", 0},
		{"a conditional expression is not read", "def f():\n    return entry() if _is_sm120 else other()\n", reachUnknown, reachUnknown, "", 0, false, "", 0},
	}
	s := &session{rec: mustRecipe(t)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, call := entryCall(t, c.src)
			for _, m := range []struct {
				major int
				want  reach
			}{{12, c.on12}, {8, c.on8}} {
				got, test, line, _ := s.platformAt(st, call, m.major)
				if got != m.want {
					t.Errorf("major %d: reach %v, want %v (test %q)", m.major, got, m.want, test)
				}
				want, wantLine := c.test, c.line
				if m.major == 8 && c.test8 != "" {
					want, wantLine = c.test8, c.line8
				}
				if got != reachUnknown && (test != want || line != wantLine) {
					t.Errorf("major %d: test %q at line %d, want %q at line %d", m.major, test, line, want, wantLine)
				}
			}
			got, test, _, _ := s.platformAt(st, call, -1)
			if got != reachUnknown || (test != "") != c.unknownMaj {
				t.Errorf("no target: reach %v test %q, want unknown, test named %v", got, test, c.unknownMaj)
			}
		})
	}
}

// TestPlatformAtOtherParts: where a call runs on the target's GPUs under a
// test that also tests something else, the route names what else must
// hold: what the test comes down to once its tests of the GPU are read.
func TestPlatformAtOtherParts(t *testing.T) {
	s := &session{rec: mustRecipe(t)}
	for _, c := range []struct {
		cond          string
		rest12, rest8 string // "-": the call does not run there
	}{
		{"_is_sm120", "", "-"},
		{"_is_sm120 and ready", "ready", "-"},
		{"ready and get_platform().is_sm120", "ready", "-"},
		{"(_is_sm120 and a) and not b", "a and not b", "-"},
		{"_is_sm120 and (a or b)", "(a or b)", "-"},
		{"_is_sm120 or ready", "", "ready"},
		{"(_is_sm120 or _is_sm100) and envs.X.get()", "envs.X.get()", "_is_sm100 and envs.X.get()"},
		{"_is_sm120 and (ready or get_platform().is_sm120)", "", "-"},
		{"not (ready and _is_sm120)", "not ready", ""},
		{"not (_is_sm120 or ready)", "-", "not ready"},
		{"(_is_sm120 and a) or (_is_sm120 and b)", "(a or b)", "-"},
		{"(_is_sm120 and a and b) or (not _is_sm120 and c)", "a and b", "c"},
		{"not (_is_sm120 and (a or b))", "not (a or b)", ""},
		{"_is_sm120 and (x if a else b)", "(x if a else b)", "-"},
	} {
		src := "def f():\n    if " + c.cond + ":\n        return entry()\n"
		st, call := entryCall(t, src)
		for _, m := range []struct {
			major int
			want  string
		}{{12, c.rest12}, {8, c.rest8}} {
			r, _, _, rest := s.platformAt(st, call, m.major)
			switch {
			case m.want == "-" && r != reachNo:
				t.Errorf("if %s on major %d: reach %v, rest %q; want no", c.cond, m.major, r, rest)
			case m.want != "-" && (r != reachYes || rest != m.want):
				t.Errorf("if %s on major %d: reach %v, rest %q; want yes, %q", c.cond, m.major, r, rest, m.want)
			}
		}
	}
}

// TestPlatformAtEarlierTests: a branch of an if runs only where the if's
// earlier tests do not hold, and an elif's own test of something else
// holds; the route names those beside the test of the GPU that decides.
func TestPlatformAtEarlierTests(t *testing.T) {
	s := &session{rec: mustRecipe(t)}
	for _, c := range []struct {
		name, src  string
		major      int
		want       reach
		test, rest string
	}{
		{"an elif after another test", "def f():\n    if ready:\n        return other()\n    elif _is_sm120:\n        return entry()\n", 12, reachYes, "_is_sm120", "not ready"},
		{"an elif of something else after the test", "def f():\n    if _is_sm120:\n        return other()\n    elif ready:\n        return entry()\n", 8, reachYes, "not _is_sm120", "ready"},
		{"several earlier tests", "def f():\n    if a:\n        pass\n    elif b or c:\n        pass\n    elif is_sm100:\n        pass\n    elif _is_sm120 and d:\n        return entry()\n", 12, reachYes, "_is_sm120 and d", "d and not a and not (b or c) and not is_sm100"},
		{"an else after both", "def f():\n    if ready:\n        pass\n    elif not _is_sm120:\n        pass\n    else:\n        return entry()\n", 12, reachYes, "_is_sm120", "not ready"},
		{"where it does not run, nothing", "def f():\n    if ready:\n        pass\n    elif _is_sm120:\n        return entry()\n", 8, reachNo, "_is_sm120", ""},
		{"an earlier test of the GPU and something else", "def f():\n    if _is_sm120 and ready:\n        return other()\n    else:\n        return entry()\n", 12, reachYes, "not (_is_sm120 and ready)", "not ready"},
		{"that test where it does not hold", "def f():\n    if _is_sm120 and ready:\n        return other()\n    else:\n        return entry()\n", 8, reachYes, "not (_is_sm120 and ready)", ""},
		{"an outer if is not named", "def f():\n    if ready:\n        if _is_sm120:\n            return entry()\n", 12, reachYes, "_is_sm120", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, call := entryCall(t, c.src)
			r, test, _, rest := s.platformAt(st, call, c.major)
			if r != c.want || test != c.test || rest != c.rest {
				t.Errorf("major %d: reach %v, test %q, rest %q; want %v, %q, %q", c.major, r, test, rest, c.want, c.test, c.rest)
			}
		})
	}
}

// TestEndsBefore: a call after a return or raise in a block around it
// never runs; one after a return that may not be taken (in an if, a try, a
// with) may.
func TestEndsBefore(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int // of the statement that ends it first; 0: none
	}{
		{"return before the test", "def f():\n    return other()\n    if _is_sm120:\n        return entry()\n", 2},
		{"raise in the branch", "def f():\n    if _is_sm120:\n        raise NotImplementedError\n        entry()\n", 3},
		{"a def after a return", "def f():\n    return 1\n\n    def g():\n        return entry()\n", 2},
		{"a lambda after a return", "def f():\n    return 1\n    g = lambda: entry()\n", 2},
		{"at module level", "raise ImportError\nentry()\n", 1},
		{"a return in an if", "def f():\n    if x:\n        return other()\n    return entry()\n", 0},
		{"a return in a try", "def f():\n    try:\n        return other()\n    except E:\n        pass\n    return entry()\n", 0},
		{"a return in a with", "def f():\n    with c:\n        return other()\n    entry()\n", 0},
		{"a return after", "def f():\n    entry()\n    return 1\n", 0},
		{"a nested def's return", "def f():\n    def g():\n        return 1\n\n    return entry()\n", 0},
		{"the call's own return", "def f():\n    return entry()\n", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, call := entryCall(t, c.src)
			got := 0
			if n := endsBefore(st, call); n >= 0 {
				got, _ = resolve.LineCol(st.Src(), st.Start(n))
			}
			if got != c.line {
				t.Errorf("ended by line %d, want %d", got, c.line)
			}
		})
	}
}

// entryCall parses src and finds its call of entry().
func entryCall(t *testing.T, src string) (*resolve.Syntax, int32) {
	t.Helper()
	fi, err := resolve.Analyze("case.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Syntax()
	call := int32(-1)
	st.Descendants(0, func(i int32) bool {
		if call < 0 && st.Kind(i) == "identifier" && st.Text(i) == "entry" {
			call = i
		}
		return call < 0
	})
	if call < 0 {
		t.Fatal("no call of entry in the case")
	}
	return st, call
}

func TestTargetMajor(t *testing.T) {
	for target, want := range map[string]int{"sm_80": 8, "sm_86": 8, "sm_89": 8, "sm_90": 9, "sm_90a": 9, "sm_100": 10, "sm_120": 12, "sm_121a": 12, "": -1, "sm_": -1, "gfx942": -1, "sm_x": -1} {
		if got := targetMajor(target); got != want {
			t.Errorf("targetMajor(%q) = %d, want %d", target, got, want)
		}
	}
}

// TestUnreachedNeedsEveryCaller: one call that may run on the target keeps
// the route, and a tree with no call proves nothing either way.
func TestUnreachedNeedsEveryCaller(t *testing.T) {
	no, yes, unknown := caller{reach: reachNo}, caller{reach: reachYes}, caller{reach: reachUnknown}
	test := caller{reach: reachUnknown, inTest: true}
	for _, c := range []struct {
		cs   []caller
		want bool
	}{{nil, false}, {[]caller{no}, true}, {[]caller{no, no}, true}, {[]caller{no, yes}, false}, {[]caller{unknown, no}, false},
		{[]caller{no, test}, true}, {[]caller{test}, false}} {
		if got := unreached(c.cs); got != c.want {
			var r []string
			for _, x := range c.cs {
				r = append(r, x.reach.String()+map[bool]string{true: " (test)"}[x.inTest])
			}
			t.Errorf("unreached(%s) = %v, want %v", strings.Join(r, ","), got, c.want)
		}
	}
}

func TestTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"test/srt/test_flash_mla_sm120.py":                     true,
		"python/sglang/test/attention/test_flash_mla.py":       true,
		"tests/conftest.py":                                    true,
		"srt/layers/attention/flash_mla_test.py":               true,
		"srt/layers/attention/deepseek_v4_backend.py":          false,
		"srt/layers/attention/testing_utils.py":                false,
		"python/sglang/srt/layers/attention/latest/backend.py": false,
	} {
		if got := testPath(p); got != want {
			t.Errorf("testPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestDeadCallerRefused: a backend whose every call of the entry comes
// after a return never reaches the kernel, on any GPU: patch refuses for
// sm_120 and says where; the same call without the return is reached.
func TestDeadCallerRefused(t *testing.T) {
	const backend = `from pkg.flash_mla_sm120 import flash_mla_with_kvcache_sm120


class Backend:
    def forward(self, q):
        return self._flash_mla(q)
        if get_platform().is_sm120:
            return flash_mla_with_kvcache_sm120(q=q)
`
	for _, c := range []struct {
		name, src string
		dead      bool
	}{
		{"after a return", backend, true},
		{"no return", strings.Replace(backend, "        return self._flash_mla(q)\n", "", 1), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := upstreamFiles()
			files["pkg/backend.py"] = c.src
			root := t.TempDir()
			writeFiles(t, root, files)
			out, err := Run(patchJob(t, root))
			if !c.dead {
				if err != nil || !out.Report.OK() {
					t.Fatalf("the live caller was refused: %v", err)
				}
				return
			}
			var p *Problem
			if !errors.As(err, &p) || !strings.Contains(strings.Join(p.Lines, "\n"), "pkg/backend.py:8 (Backend.forward, after the return or raise at line 6, so never)") {
				t.Fatalf("patch did not refuse the dead caller, or did not say where: %v", err)
			}
			if got := snapshot(t, root); !cmp.Equal(got, files) {
				t.Errorf("patch wrote something:\n%s", cmp.Diff(files, got))
			}
		})
	}
}

// TestCallerHowByTarget: what the route says of a caller fits the target:
// a test that holds on the recipe's GPUs is not said to hold on a target
// outside them, nor is a call that runs everywhere else said to run only
// on them.
func TestCallerHowByTarget(t *testing.T) {
	s := &session{rec: mustRecipe(t)}
	for _, c := range []struct {
		name, src, target string
		how, why          string // why: "" where some call runs on the target
	}{
		{"the else of the test, on sm_89", "def f():\n    if _is_sm120:\n        return other()\n    else:\n        return entry()\n", "sm_89",
			"calls entry under `not _is_sm120` (line 2), which holds on sm_89, not one of compute capability 12.x GPUs (sm_120, sm_121)", ""},
		{"an or with something else, on sm_89", "def f():\n    if _is_sm120 or ready:\n        return entry()\n", "sm_89",
			"calls entry under `_is_sm120 or ready` (line 2); on sm_89, not one of compute capability 12.x GPUs (sm_120, sm_121), its branch runs where `ready` holds (mlagen does not judge it)", ""},
		{"a negated test or something else, on sm_120", "def f():\n    if not _is_sm120 or ready:\n        return entry()\n", "sm_120",
			"calls entry under `not _is_sm120 or ready` (line 2); on compute capability 12.x GPUs (sm_120, sm_121), sm_120 among them, its branch runs where `ready` holds (mlagen does not judge it)", ""},
		{"the test, on sm_120", "def f():\n    if _is_sm120:\n        return entry()\n", "sm_120",
			"calls entry under `_is_sm120` (line 2), which holds on compute capability 12.x GPUs (sm_120, sm_121): sm_120 is one", ""},
		{"the test, on sm_89", "def f():\n    if _is_sm120:\n        return entry()\n", "sm_89",
			"calls entry only under `_is_sm120` (line 2), which holds on compute capability 12.x GPUs (sm_120, sm_121), not on sm_89",
			"and only on compute capability 12.x GPUs (sm_120, sm_121)"},
		{"its negation, on sm_120", "def f():\n    if not _is_sm120:\n        return entry()\n", "sm_120",
			"calls entry only under `not _is_sm120` (line 2), which does not hold on compute capability 12.x GPUs (sm_120, sm_121), so not on sm_120",
			"and only on GPUs other than compute capability 12.x GPUs (sm_120, sm_121)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, call := entryCall(t, c.src)
			r, test, line, rest := s.platformAt(st, call, targetMajor(c.target))
			cs := []caller{{path: "case.py", line: 3, fn: "f", test: test, testLine: line, reach: r, rest: rest}}
			if got := s.callerHop(cs[0], "entry", c.target).How; got != c.how {
				t.Errorf("how:\n got %s\nwant %s", got, c.how)
			}
			why := ""
			if unreached(cs) {
				why = s.unreachedWhy("k.py", 1, "entry", c.target, cs)
			}
			if (why == "") != (c.why == "") || !strings.HasSuffix(why, c.why) {
				t.Errorf("why: %q, want one ending %q", why, c.why)
			}
		})
	}
}
