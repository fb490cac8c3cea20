package source

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server starts the server command itself, with extra environment variables,
// sends its combined output to a log file, and follows that file. The server
// writes to the file, not to a pipe of ours, so it keeps running (and
// logging) after a successful watch ends; Stop ends it when the watch fails
// or is interrupted.
type Server struct {
	Argv []string
	// Env holds NAME=VALUE pairs added to this process's environment.
	Env []string
	// LogPath is the file that keeps the server's output; it is appended
	// to, never truncated, so an earlier run's log is not lost.
	LogPath string
	// Poll is how often the log file is checked (default DefaultPoll).
	Poll time.Duration
	// Grace is how long the server gets to exit after SIGTERM before it is
	// killed (default 10s).
	Grace time.Duration

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

func (s *Server) Describe() string {
	return fmt.Sprintf("server `%s` (log %s)", shellJoin(s.Argv), s.LogPath)
}

// shellJoin writes argv the way a person would type it, quoting only the
// words that need it.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// Pid is the server's process id, 0 before it starts.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

func (s *Server) Run(ctx context.Context, out chan<- Event) error {
	if len(s.Argv) == 0 {
		return &LostError{What: "no server command"}
	}
	logf, err := os.OpenFile(s.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return &LostError{What: "cannot open the server log", Err: err}
	}
	defer logf.Close() // the child has its own copy of the descriptor
	info, err := logf.Stat()
	if err != nil {
		return &LostError{What: "cannot stat the server log", Err: err}
	}
	// Reading starts where this run's output will start.
	offset := info.Size()

	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Stdin = nil
	// Its own process group: SGLang forks scheduler and detokenizer
	// processes, and all of them must stop together. It also keeps the
	// terminal's Ctrl-C away from the server, so that the watch decides how
	// to stop it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return &LostError{What: fmt.Sprintf("cannot start %q", s.Argv[0]), Err: err}
	}
	exited := make(chan struct{})
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(exited)
	}()

	f := &File{Path: s.LogPath, Poll: s.Poll, Offset: offset, stop: exited, own: true}
	if err := f.Run(ctx, out); err != nil {
		return err
	}
	select {
	case <-exited:
		s.mu.Lock()
		defer s.mu.Unlock()
		return &ExitError{Pid: cmd.Process.Pid, Err: s.waitErr}
	default:
		return nil // ctx ended; the server runs on unless Stop is called
	}
}

// Stop ends the server's process group: SIGTERM, then SIGKILL to the group
// after Grace whenever any member still runs (SGLang's scheduler and
// detokenizer processes are members, and the leader's exit does not end
// them), and says what exited on which signal. A leader that has exited
// already is not the end of it: the members it leaves behind still hold
// GPU memory, and are stopped the same way.
func (s *Server) Stop() string {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return "the server was never started"
	}
	pid := cmd.Process.Pid
	grace := s.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	if isClosed(exited) {
		return stopOrphans(pid, grace, exited)
	}
	res := stopGroup(pid, grace, exited)
	return fmt.Sprintf("stopped the server (pid %d): %s", pid, res.describe("it", pid, grace))
}

// stopOrphans stops what is left of the process group of a server whose
// leader (pid) has exited and been reaped (exited is closed).
func stopOrphans(pid int, grace time.Duration, exited <-chan struct{}) string {
	gone := fmt.Sprintf("the server (pid %d) had already exited", pid)
	// The leader has been reaped, so it is not among the members (where
	// there is no /proc, the group's own id stands for "some still run").
	orphans := liveMembers(pid)
	if len(orphans) == 0 {
		return gone
	}
	res := stopGroup(pid, grace, exited)
	return gone + "; " + res.describeOrphans(orphans, pid, grace)
}

// Detach leaves a ready server running and says where it is.
func (s *Server) Detach() string {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return "the server was never started"
	}
	select {
	case <-exited:
		return fmt.Sprintf("the server (pid %d) has exited since it was ready; its log: %s", cmd.Process.Pid, s.LogPath)
	default:
		return fmt.Sprintf("the server runs on: pid %d (process group %d), log %s", cmd.Process.Pid, cmd.Process.Pid, s.LogPath)
	}
}
