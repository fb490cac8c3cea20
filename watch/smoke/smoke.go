// Package smoke asks a freshly started SGLang server one question and checks
// the answer. A server that logs "ready" but computes garbage (a kernel that
// compiles, launches and returns the wrong numbers) passes every log check;
// only an answer can show it.
package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
	// Client is used for every request (default: 60s time-out).
	Client *http.Client
}

// Result is what was asked and answered, and whether that is good.
type Result struct {
	HealthStatus int     `json:"health_status"`
	Endpoint     string  `json:"endpoint,omitempty"`
	Model        string  `json:"model,omitempty"`
	Prompt       string  `json:"prompt"`
	Answer       string  `json:"answer"`
	Check        string  `json:"check"`
	OK           bool    `json:"ok"`
	Problem      string  `json:"problem,omitempty"`
	Seconds      float64 `json:"seconds"`
}

// Run checks /health, then sends one greedy completion and judges it.
func Run(ctx context.Context, req Request) Result {
	t0 := time.Now()
	res := Result{Prompt: req.Prompt, Check: describeCheck(req)}
	defer func() { res.Seconds = time.Since(t0).Seconds() }()
	c := req.Client
	if c == nil {
		c = &http.Client{Timeout: 60 * time.Second}
	}
	base := strings.TrimRight(req.URL, "/")

	status, body, err := do(ctx, c, http.MethodGet, base+"/health", nil)
	res.HealthStatus = status
	if err != nil {
		res.Problem = fmt.Sprintf("GET /health failed: %v", err)
		return res
	}
	if status != http.StatusOK {
		res.Problem = fmt.Sprintf("GET /health answered %d %s%s", status, http.StatusText(status), quoteBody(body))
		return res
	}

	var answer string
	if req.OpenAI {
		model := req.Model
		if model == "" {
			if model, err = askModel(ctx, c, base); err != nil {
				res.Problem = err.Error()
				return res
			}
		}
		res.Model = model
		res.Endpoint = "/v1/completions"
		answer, err = complete(ctx, c, base+res.Endpoint, map[string]any{
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
	} else {
		res.Endpoint = "/generate"
		answer, err = complete(ctx, c, base+res.Endpoint, map[string]any{
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
	res.Answer = answer
	if err != nil {
		res.Problem = fmt.Sprintf("POST %s failed: %v", res.Endpoint, err)
		return res
	}
	res.Problem = judge(req, answer)
	res.OK = res.Problem == ""
	return res
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

func askModel(ctx context.Context, c *http.Client, base string) (string, error) {
	status, body, err := do(ctx, c, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return "", fmt.Errorf("GET /v1/models failed: %v", err)
	}
	if status != http.StatusOK {
		return "", fmt.Errorf("GET /v1/models answered %d%s", status, quoteBody(body))
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

func complete(ctx context.Context, c *http.Client, url string, payload any, parse func([]byte) (string, error)) (string, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	status, body, err := do(ctx, c, http.MethodPost, url, b)
	if err != nil {
		return "", err
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

func do(ctx context.Context, c *http.Client, method, url string, body []byte) (int, []byte, error) {
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
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("reading the response: %w", err)
	}
	return resp.StatusCode, data, nil
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
