package fakesglang

import (
	"encoding/json"
	"net/http"
	"sync"
)

// GoodAnswer is what a healthy DeepSeek answers, greedily, to "The capital
// of France is".
const GoodAnswer = " Paris. It is the largest city in France and its political centre."

// Server answers like SGLang's HTTP front end. Set its fields before serving;
// NewServer gives a healthy one.
type Server struct {
	// HealthStatus is what /health returns (0 means 200).
	HealthStatus int
	// Answer is the completion text of /generate and /v1/completions.
	Answer string
	// Model is the id /v1/models lists (default deepseek-ai/DeepSeek-V4-Flash).
	Model string
	// Hang makes /generate and /v1/completions never answer: they wait
	// until the client gives up, as a server stuck in its first decode does.
	Hang bool
	// APIKey, when set, is wanted as "Authorization: Bearer KEY" with each
	// completion, as a server started with --api-key wants it (401 without).
	APIKey string
	// OnGenerate, when set, runs before a completion is answered: a test
	// writes the log lines a first decode produces (the kernel module's
	// line) from here.
	OnGenerate func()

	mu       sync.Mutex
	requests []Request
}

// NewServer returns a healthy server that answers GoodAnswer.
func NewServer() *Server { return &Server{Answer: GoodAnswer} }

// Request is what the server was asked, for tests to check.
type Request struct {
	Path string
	Body map[string]any
}

// Requests returns the requests seen so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Body: body})
	s.mu.Unlock()

	answer := s.Answer
	model := s.Model
	if model == "" {
		model = "deepseek-ai/DeepSeek-V4-Flash"
	}
	if s.APIKey != "" && r.URL.Path != "/health" && r.Header.Get("Authorization") != "Bearer "+s.APIKey {
		http.Error(w, `{"error": "Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if r.URL.Path == "/generate" || r.URL.Path == "/v1/completions" {
		if s.OnGenerate != nil {
			s.OnGenerate()
		}
		if s.Hang {
			// (After OnGenerate: a first decode that crashes the server
			// writes its traceback and never answers.)
			<-r.Context().Done()
			return
		}
	}
	switch r.URL.Path {
	case "/health":
		if s.HealthStatus != 0 && s.HealthStatus != http.StatusOK {
			http.Error(w, "unhealthy", s.HealthStatus)
			return
		}
		w.WriteHeader(http.StatusOK)
	case "/generate":
		writeJSON(w, map[string]any{
			"text":      answer,
			"meta_info": map[string]any{"prompt_tokens": 7, "completion_tokens": 4, "finish_reason": map[string]any{"type": "length"}},
		})
	case "/v1/completions":
		writeJSON(w, map[string]any{
			"object":  "text_completion",
			"model":   model,
			"choices": []any{map[string]any{"index": 0, "text": answer, "finish_reason": "length"}},
		})
	case "/v1/models":
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": model, "object": "model"}}})
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
