package smoke

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mlagen/mlagen/watch/fakesglang"
)

func serve(t *testing.T, s *fakesglang.Server) string {
	t.Helper()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL
}

func strp(s string) *string { return &s }

func TestSmoke(t *testing.T) {
	tests := []struct {
		name        string
		server      *fakesglang.Server
		req         Request
		wantOK      bool
		wantProblem string
	}{
		{"native good", fakesglang.NewServer(), Request{Contains: "Paris"}, true, ""},
		{"openai good", fakesglang.NewServer(), Request{OpenAI: true, Contains: "Paris"}, true, ""},
		{"wrong answer", &fakesglang.Server{Answer: " the the the the"}, Request{Contains: "Paris"}, false, `does not contain "Paris"`},
		{"empty answer", &fakesglang.Server{Answer: "  "}, Request{}, false, "the answer is empty"},
		{"health 503", &fakesglang.Server{HealthStatus: 503, Answer: fakesglang.GoodAnswer}, Request{Contains: "Paris"}, false, "GET /health answered 503 Service Unavailable"},
		{"exact good with editor newline", fakesglang.NewServer(), Request{Exact: strp(fakesglang.GoodAnswer + "\n")}, true, ""},
		{"exact differs", fakesglang.NewServer(), Request{Exact: strp(" Paris.")}, false, "differs from the saved answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.URL = serve(t, tt.server)
			tt.req.Prompt = "The capital of France is"
			tt.req.MaxTokens = 16
			got := Run(context.Background(), tt.req)
			if got.OK != tt.wantOK || !strings.Contains(got.Problem, tt.wantProblem) {
				t.Errorf("Run = ok %v, problem %q; want ok %v, problem containing %q", got.OK, got.Problem, tt.wantOK, tt.wantProblem)
			}
		})
	}
}

// The request is greedy and bounded, in the shape each API expects.
func TestSmokeRequestShape(t *testing.T) {
	s := fakesglang.NewServer()
	Run(context.Background(), Request{URL: serve(t, s), Prompt: "The capital of France is", MaxTokens: 8})
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/health" || reqs[1].Path != "/generate" {
		t.Fatalf("requests = %+v, want /health then /generate", reqs)
	}
	want := map[string]any{"text": "The capital of France is", "sampling_params": map[string]any{"temperature": 0.0, "max_new_tokens": 8.0}}
	if diff := cmp.Diff(want, reqs[1].Body); diff != "" {
		t.Errorf("/generate body (-want +got):\n%s", diff)
	}

	s = fakesglang.NewServer()
	res := Run(context.Background(), Request{URL: serve(t, s), Prompt: "p", MaxTokens: 8, OpenAI: true})
	reqs = s.Requests()
	if len(reqs) != 3 || reqs[1].Path != "/v1/models" || reqs[2].Path != "/v1/completions" {
		t.Fatalf("requests = %+v, want /health, /v1/models, /v1/completions", reqs)
	}
	want = map[string]any{"model": "deepseek-ai/DeepSeek-V4-Flash", "prompt": "p", "temperature": 0.0, "max_tokens": 8.0}
	if diff := cmp.Diff(want, reqs[2].Body); diff != "" {
		t.Errorf("/v1/completions body (-want +got):\n%s", diff)
	}
	if res.Model != "deepseek-ai/DeepSeek-V4-Flash" {
		t.Errorf("model = %q", res.Model)
	}
}

func TestSmokeUnreachable(t *testing.T) {
	ts := httptest.NewServer(fakesglang.NewServer())
	url := ts.URL
	ts.Close()
	got := Run(context.Background(), Request{URL: url, Prompt: "p", MaxTokens: 1})
	if got.OK || !strings.Contains(got.Problem, "GET /health failed") {
		t.Errorf("Run on a closed port = ok %v, problem %q", got.OK, got.Problem)
	}
}

// The request is bounded by its context, not by a fixed time of its own: a
// server that never answers is given up on when the context says so.
func TestSmokeHonoursTheDeadline(t *testing.T) {
	url := serve(t, &fakesglang.Server{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got := Run(ctx, Request{URL: url, Prompt: "p", MaxTokens: 1})
	if got.OK || !got.TimedOut || !strings.Contains(got.Problem, "POST /generate failed: no answer before the time-out") {
		t.Errorf("Run = ok %v, timed out %v, problem %q", got.OK, got.TimedOut, got.Problem)
	}
	if got.Seconds <= 0 {
		t.Errorf("Seconds = %v, want the time the request took", got.Seconds)
	}
}

// A response longer than the limit is an error that says so, never an
// answer cut short.
func TestSmokeResponseLimitIsExplicit(t *testing.T) {
	big := strings.Repeat(" Paris", 400) // about 2.4 KB of JSON
	url := serve(t, &fakesglang.Server{Answer: big})
	got := Run(context.Background(), Request{URL: url, Prompt: "p", MaxTokens: 1, Contains: "Paris", MaxResponseBytes: 1000})
	if got.OK || !strings.Contains(got.Problem, "longer than 1000 bytes (--max-response-bytes)") {
		t.Errorf("Run = ok %v, problem %q", got.OK, got.Problem)
	}
	got = Run(context.Background(), Request{URL: url, Prompt: "p", MaxTokens: 1, Contains: "Paris", MaxResponseBytes: 4000})
	if !got.OK || got.Answer != big {
		t.Errorf("within the limit: ok %v, problem %q", got.OK, got.Problem)
	}
	// The default limit is the documented one.
	huge := serve(t, &fakesglang.Server{Answer: strings.Repeat("x", DefaultMaxResponseBytes)})
	got = Run(context.Background(), Request{URL: huge, Prompt: "p", MaxTokens: 1})
	if got.OK || !strings.Contains(got.Problem, "longer than 1048576 bytes") {
		t.Errorf("default limit: ok %v, problem %q", got.OK, got.Problem)
	}
}
