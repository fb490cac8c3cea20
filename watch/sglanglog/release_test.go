package sglanglog

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReleaseLogLines holds the line prefix, the phase rules and the
// capture-failure and SIGQUIT signatures to the startup lines of a real
// SGLang release, rendered from the release's own sources by
// .ci/sglang_log_lines.py (PATH:LINE, a tab, the text).
// .ci/sglang-releases.sh runs it for every release it checks, with
// MLAGEN_SGLANG_LOG_LINES naming the file; a plain go test has no release
// to read and skips it.
func TestReleaseLogLines(t *testing.T) {
	path := os.Getenv("MLAGEN_SGLANG_LOG_LINES")
	if path == "" {
		t.Skip("MLAGEN_SGLANG_LOG_LINES is unset: .ci/sglang-releases.sh runs this on each release's lines")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		// What the line says it is, by its own words.
		target  = regexp.MustCompile(`(?i)^Capture target (?:decode|verify) CUDA graph (begin|end)\b`)
		prefill = regexp.MustCompile(`(?i)^Capture target prefill CUDA graph (begin|end)\b`)
		draft   = regexp.MustCompile(`(?i)^Capture draft `)
		failed  = regexp.MustCompile(`(?i)\bcuda graph failed\b`)
		sigquit = regexp.MustCompile(`(?i)^SIGQUIT received\b|^Received sigquit\b`)
		// The tags of a rendered prefix line, "[DATE TIME TAGS] x".
		stampTags = regexp.MustCompile(`^\[\S+ \S+ ([^\]]*)\] x$`)
		seen      = map[Kind]bool{}
		batches   bool
		lines     int
		quits     int
		prefixes  int
		starts    int
		handled   int
		problems  []string
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		where, text, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("%s: a line without PATH:LINE and a tab: %q", path, sc.Text())
		}
		lines++
		if raw, ok := strings.CutPrefix(text, "prefix\t"); ok {
			// A whole line under the scheduler's log prefix: every rank
			// tag it can add, the stamp with or without milliseconds.
			prefixes++
			m := stampTags.FindStringSubmatch(raw)
			if m == nil {
				t.Fatalf("%s: a prefix line not of the form [DATE TIME TAGS] x: %q", where, raw)
			}
			tags := m[1]
			if r := Parse(raw); !r.Prefixed || r.Rank != tags || r.Stamp.IsZero() || r.Text != "x" {
				problems = append(problems, where+": "+raw+"\n    parsed as "+fmt.Sprintf("%+v", r)+", want rank "+strconv.Quote(tags))
			}
			continue
		}
		if msg, ok := strings.CutPrefix(text, "handled\t"); ok {
			// A message logged below an error's level with the traceback
			// of the exception it handled: that traceback is no failure.
			handled++
			if !MatchHandled(strings.ReplaceAll(msg, "{}", "x")) {
				problems = append(problems, where+": "+msg+"\n    logged with a handled exception's traceback, not in handledMessages")
			}
			continue
		}
		if strings.HasPrefix(text, "server_args=") {
			starts++
			if !MatchStart(text) {
				problems = append(problems, where+": "+text+"\n    not read as a server's start")
			}
		}
		p, isPhase := MatchPhase(text)
		if isPhase {
			seen[p.Kind] = true
			if (p.Kind == CaptureBegin || p.Kind == CaptureEnd || p.Kind == CaptureBatches) && p.Batches != "" {
				batches = true
			}
		}
		want := func(k Kind) {
			if !isPhase || p.Kind != k {
				problems = append(problems, where+": "+text+"\n    read as "+describe(p, isPhase)+", want "+k.String())
			}
		}
		switch m := target.FindStringSubmatch(text); {
		case m != nil && m[1] == "begin":
			want(CaptureBegin)
		case m != nil:
			want(CaptureEnd)
		}
		switch m := prefill.FindStringSubmatch(text); {
		case m != nil && m[1] == "begin":
			want(PiecewiseBegin)
		case m != nil:
			want(PiecewiseEnd)
		}
		if draft.MatchString(text) && isPhase {
			problems = append(problems, where+": "+text+"\n    the draft model's capture read as "+p.Kind.String())
		}
		if failed.MatchString(text) {
			if s, _, ok := MatchSignature(text); !ok || s.Kind != "cuda-graph-capture" {
				problems = append(problems, where+": "+text+"\n    not read as a CUDA graph capture failure")
			}
		}
		if sigquit.MatchString(text) {
			quits++
			if s, _, ok := MatchSignature(text); !ok || s.Kind != "sigquit" {
				problems = append(problems, where+": "+text+"\n    not read as a child's SIGQUIT")
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for _, k := range []Kind{LoadBegin, LoadEnd, CaptureBegin, CaptureEnd, PiecewiseBegin, PiecewiseEnd, Ready} {
		if !seen[k] {
			t.Errorf("no line of the release reads as %s: SGLang's wording changed, or the rule did (%d lines in %s)", k, lines, path)
		}
	}
	if prefixes == 0 {
		t.Errorf("no scheduler log prefix found in the release (%d lines in %s)", lines, path)
	}
	if quits == 0 {
		t.Errorf("no line of the release reports a child's SIGQUIT (%d lines in %s)", lines, path)
	}
	if starts == 0 {
		t.Errorf("no line of the release is a server's start, server_args= (%d lines in %s)", lines, path)
	}
	if handled == 0 {
		t.Errorf("no message of the release is logged with a handled exception's traceback: the script's handled lines are missing (%d lines in %s)", lines, path)
	}
	if !batches {
		t.Errorf("no capture line gives the captured batch sizes (%d lines in %s)", lines, path)
	}
}

func describe(p Phase, ok bool) string {
	if !ok {
		return "no phase"
	}
	return p.Kind.String()
}
