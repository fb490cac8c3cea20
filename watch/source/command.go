package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Command reads the log from the standard output of a shell command, such as
// "ssh host tail -F /root/server.log". Its standard error is kept apart (it
// is where ssh says why it failed) and shown when the command ends. A
// command that ends, for any reason and with any status, means the log is
// lost: the watch cannot know what the server does next.
type Command struct {
	// Line is the command, run with "sh -c".
	Line string
	// Grace is how long the command gets to exit after SIGTERM when the
	// watch is over (default 2s).
	Grace time.Duration

	stderr atomic.Pointer[tailBuffer] // set by Run
}

// StderrTail returns the last lines the command has written to its
// standard error so far: a "tail -F" of a misspelt path complains there and
// goes on waiting, so that a watch that times out on an empty log can say
// why.
func (c *Command) StderrTail() []string {
	if b := c.stderr.Load(); b != nil {
		return b.lines()
	}
	return nil
}

func (c *Command) Describe() string { return fmt.Sprintf("output of %q", c.Line) }

func (c *Command) Run(ctx context.Context, out chan<- Event) error {
	cmd := exec.Command("sh", "-c", c.Line)
	// Its own process group, so that the whole pipeline (sh, ssh, tail) is
	// stopped together when the watch is over.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &tailBuffer{max: 10}
	cmd.Stderr = stderr
	c.stderr.Store(stderr)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return &LostError{What: "cannot run " + c.Line, Err: err}
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return &LostError{What: "cannot run " + c.Line, Err: err}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			grace := c.Grace
			if grace <= 0 {
				grace = 2 * time.Second
			}
			stopGroup(cmd.Process.Pid, grace, done)
		case <-done:
		}
	}()

	emit := func(ev Event) bool { return send(ctx, out, ev) }
	var lines lineSplitter
	buf := make([]byte, 64<<10)
	for {
		n, err := stdout.Read(buf)
		if n > 0 && !lines.feed(buf[:n], emit) {
			break
		}
		if err != nil {
			lines.flush(emit)
			break
		}
	}
	// Drain what is left so Wait cannot block on a full pipe.
	_, _ = io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil
	}
	what := fmt.Sprintf("the log command %q ended after %s", c.Line, time.Since(start).Round(time.Millisecond))
	if werr == nil {
		what += " with status 0"
		werr = errors.New("no more log lines can come")
	}
	return &LostError{What: what, Err: werr, Stderr: stderr.lines()}
}

// tailBuffer keeps the last max lines written to it.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	partial string
	kept    []string
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	parts := strings.Split(b.partial+string(p), "\n")
	b.partial = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		b.kept = append(b.kept, strings.TrimRight(l, "\r"))
	}
	if over := len(b.kept) - b.max; over > 0 {
		b.kept = append(b.kept[:0], b.kept[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]string(nil), b.kept...)
	if b.partial != "" {
		out = append(out, b.partial)
	}
	return out
}
