// Package smoke asks a freshly started SGLang server one question and checks
// the answer. A server that logs "ready" but computes garbage (a kernel that
// compiles, launches and returns the wrong numbers) passes every log check;
// only an answer can show it.
package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Request says where to ask, what, and what a right answer looks like.
type Request struct {
	// URL is the server's base URL, such as http://127.0.0.1:30000.
	URL    string
	Prompt string
	// MaxTokens bounds the answer (greedy decoding, so it is repeatable).
	MaxTokens int
	// OpenAI asks /v1/completions instead of SGLang's native /generate.
	OpenAI bool
	// Model is sent to /v1/completions; empty asks /v1/models for it.
	Model string
	// Contains, when not empty, must occur in the answer.
	Contains string
	// Exact, when not nil, must equal the answer (a saved good answer).
	Exact *string
	// MaxResponseBytes bounds what is read of each response (default
	// DefaultMaxResponseBytes). A longer response is an error, never cut
	// short silently: a cut JSON body cannot be judged.
	MaxResponseBytes int64
	// APIKey, when set, is sent as "Authorization: Bearer KEY" with every
	// request: a server started with --api-key refuses a completion
	// without it (401).
	APIKey string
	// Client is used for every request (default: one with no time-out of
	// its own). Time is bounded by Run's context: the watch gives it what
	// is left of its --timeout.
	Client *http.Client
}

// ErrUnauthorized: the server wants its API key with the request.
var ErrUnauthorized = errors.New("the server wants its API key (it was started with --api-key)")

// DefaultMaxResponseBytes is ample for the one short completion asked for
// (its JSON is a few hundred bytes) and small enough that a server sending
// something else entirely cannot fill memory.
const DefaultMaxResponseBytes = 1 << 20

// Result is what was asked and answered, and whether that is good.
type Result struct {
	HealthStatus int    `json:"health_status"`
	Endpoint     string `json:"endpoint,omitempty"`
	Model        string `json:"model,omitempty"`
	Prompt       string `json:"prompt"`
	Answer       string `json:"answer"`
	Check        string `json:"check"`
	OK           bool   `json:"ok"`
	Problem      string `json:"problem,omitempty"`
	// Unauthorized is set when the server refused a request for want of
	// its API key (401): it was started with --api-key.
	Unauthorized bool `json:"unauthorized,omitempty"`
	// TimedOut is set when a request got no answer before Run's deadline.
	TimedOut bool    `json:"timed_out,omitempty"`
	Seconds  float64 `json:"seconds"`
}

// HealthPath is the path of the health check under the server's base URL
// (/health, or /v1/health for a base of http://host:30000/v1): what the
// messages name is what was asked.
func HealthPath(base string) string { return pathOf(base) + "/health" }

// pathOf is the path of a base URL, without its trailing slash.
func pathOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}

// Run checks /health, then sends one greedy completion and judges it.
func Run(ctx context.Context, req Request) (res Result) {
	t0 := time.Now()
	res = Result{Prompt: req.Prompt, Check: describeCheck(req)}
	defer func() {
		res.Seconds = time.Since(t0).Seconds()
		res.TimedOut = !res.OK && ctx.Err() == context.DeadlineExceeded
	}()
	if req.Client == nil {
		req.Client = &http.Client{}
	}
	if req.MaxResponseBytes <= 0 {
		req.MaxResponseBytes = DefaultMaxResponseBytes
	}
	base := strings.TrimRight(req.URL, "/")

	health := HealthPath(req.URL)
	status, body, err := do(ctx, req, http.MethodGet, base+"/health", nil)
	res.HealthStatus = status
	if err != nil {
		res.Problem = fmt.Sprintf("GET %s failed: %v", health, err)
		return res
	}
	if status != http.StatusOK {
		res.Problem = fmt.Sprintf("GET %s answered %d %s%s", health, status, http.StatusText(status), quoteBody(body))
		res.Unauthorized = status == http.StatusUnauthorized
		return res
	}

	var answer string
	if req.OpenAI {
		answer, err = askOpenAI(ctx, req, base, &res)
	} else {
		res.Endpoint = pathOf(req.URL) + "/generate"
		answer, err = askNative(ctx, req, base+"/generate")
	}
	res.Unauthorized = errors.Is(err, ErrUnauthorized)
	if err != nil && res.Endpoint == "" {
		res.Problem = err.Error() // before any completion was asked
		return res
	}
	res.Answer = answer
	if err != nil {
		res.Problem = fmt.Sprintf("POST %s failed: %v", res.Endpoint, err)
		return res
	}
	res.Problem = judge(req, answer)
	res.OK = res.Problem == ""
	return res
}

// askNative asks SGLang's own /generate.
func askNative(ctx context.Context, req Request, url string) (string, error) {
	return complete(ctx, req, url, map[string]any{
		"text":            req.Prompt,
		"sampling_params": map[string]any{"temperature": 0, "max_new_tokens": req.MaxTokens},
	}, func(b []byte) (string, error) {
		var r struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return "", err
		}
		if r.Text == nil {
			return "", fmt.Errorf("no \"text\" in the response")
		}
		return *r.Text, nil
	})
}

// askOpenAI asks /v1/completions, for the model given or the first one the
// server lists; it fills in res's model and endpoint as it goes.
func askOpenAI(ctx context.Context, req Request, base string, res *Result) (string, error) {
	model := req.Model
	if model == "" {
		var err error
		if model, err = askModel(ctx, req, base); err != nil {
			return "", err
		}
	}
	res.Model = model
	res.Endpoint = pathOf(req.URL) + "/v1/completions"
	return complete(ctx, req, base+"/v1/completions", map[string]any{
		"model": model, "prompt": req.Prompt, "temperature": 0, "max_tokens": req.MaxTokens,
	}, func(b []byte) (string, error) {
		var r struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return "", err
		}
		if len(r.Choices) == 0 {
			return "", fmt.Errorf("no choices in the response")
		}
		return r.Choices[0].Text, nil
	})
}

func describeCheck(req Request) string {
	switch {
	case req.Exact != nil:
		return "equals the saved answer"
	case req.Contains != "":
		return fmt.Sprintf("contains %q", req.Contains)
	default:
		return "is not empty"
	}
}

// judge says what is wrong with an answer, or "" when nothing is.
func judge(req Request, answer string) string {
	if strings.TrimSpace(answer) == "" {
		return fmt.Sprintf("the answer is empty (%q)", answer)
	}
	if req.Exact != nil {
		want := *req.Exact
		// A saved file may have gained a final newline in an editor.
		if answer != want && !(strings.HasSuffix(want, "\n") && answer == strings.TrimSuffix(want, "\n")) {
			return fmt.Sprintf("the answer %q differs from the saved answer %q", answer, want)
		}
		return ""
	}
	if req.Contains != "" && !strings.Contains(answer, req.Contains) {
		return fmt.Sprintf("the answer %q does not contain %q", answer, req.Contains)
	}
	return ""
}

func askModel(ctx context.Context, req Request, base string) (string, error) {
	status, body, err := do(ctx, req, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return "", fmt.Errorf("GET /v1/models failed: %v", err)
	}
	if status != http.StatusOK {
		err := fmt.Errorf("GET /v1/models answered %d%s", status, quoteBody(body))
		if status == http.StatusUnauthorized {
			err = fmt.Errorf("%w: %w", err, ErrUnauthorized)
		}
		return "", err
	}
	var r struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || len(r.Data) == 0 || r.Data[0].ID == "" {
		return "", fmt.Errorf("GET /v1/models named no model%s (pass --model)", quoteBody(body))
	}
	return r.Data[0].ID, nil
}

func complete(ctx context.Context, req Request, url string, payload any, parse func([]byte) (string, error)) (string, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	status, body, err := do(ctx, req, http.MethodPost, url, b)
	if err != nil {
		return "", err
	}
	if status == http.StatusUnauthorized {
		return "", fmt.Errorf("answered %d %s%s: %w", status, http.StatusText(status), quoteBody(body), ErrUnauthorized)
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("answered %d %s%s", status, http.StatusText(status), quoteBody(body))
	}
	text, err := parse(body)
	if err != nil {
		return "", fmt.Errorf("unreadable response%s: %v", quoteBody(body), err)
	}
	return text, nil
}

func do(ctx context.Context, r Request, method, url string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	resp, err := r.Client.Do(req)
	if err != nil {
		return 0, nil, noAnswer(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, r.MaxResponseBytes+1))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading the response: %w", noAnswer(ctx, err))
	}
	if int64(len(data)) > r.MaxResponseBytes {
		return resp.StatusCode, nil, fmt.Errorf("the response is longer than %d bytes (--max-response-bytes), so it was not read whole and cannot be judged", r.MaxResponseBytes)
	}
	return resp.StatusCode, data, nil
}

// noAnswer says plainly that time ran out, instead of Go's "context
// deadline exceeded" inside a URL error.
func noAnswer(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return errors.New("no answer before the time-out")
	}
	return err
}

func quoteBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Sprintf(" (body %q)", s)
}
