// Package source delivers a server's log, line by line, from wherever it
// lives: a file that grows, rotates and gets truncated (File), the output of
// a command such as "ssh host tail -F log" (Command), or a server process
// this tool starts itself (Server). Every way a source can stop delivering is
// an error the caller must see: a log that stops is never "no error".
package source

import (
	"context"
	"fmt"
	"strings"
)

// Event is one thing a source has to say: a log line, or a notice about the
// source itself.
type Event struct {
	// Line is a log line without its newline (empty for notices).
	Line string
	// Notice reports a change in the source (the file appeared, was
	// truncated or rotated); empty for lines.
	Notice string
	// Restarted is set with the notice of a truncation: what was read before
	// is gone, and the lines that follow are a new log (a restarted server
	// writing with "> log").
	Restarted bool
	// Continued marks a piece of a line too long to be held whole (over
	// the 1 MiB cap): it continues the line of the event before it, and
	// starts with the last bytes of that piece again, so that a phrase cut
	// by the cap is whole in one of the two.
	Continued bool
	// Absent is set with the notice that the followed path does not exist
	// (yet); any other notice means it does.
	Absent bool
}

// Source is a log that can be read until it is lost or ctx ends.
type Source interface {
	// Describe names the source for people ("log file /root/x.log").
	Describe() string
	// Run sends events to out until ctx ends (then it returns nil) or the
	// log cannot be read any more (then it returns why, usually a
	// *LostError or an *ExitError).
	Run(ctx context.Context, out chan<- Event) error
}

// Stopper is a source that started something (a server) which must be
// stopped when the watch does not succeed.
type Stopper interface {
	// Stop ends what the source started and says how that went.
	Stop() string
}

// Detacher is a source that started something which is left running when
// the watch succeeds.
type Detacher interface {
	// Detach says what is left running, and where.
	Detach() string
}

// StderrKeeper is a source whose command writes to a standard error of its
// own (Command), which the watch shows when the log says nothing.
type StderrKeeper interface {
	StderrTail() []string
}

// LostError means the log can no longer be read. The server may be fine or
// dead; nobody can tell from here, and that must be said.
type LostError struct {
	What string
	Err  error
	// Stderr holds the last lines the source command wrote to stderr (for
	// ssh, the reason the connection failed).
	Stderr []string
}

func (e *LostError) Error() string {
	msg := e.What
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if len(e.Stderr) > 0 {
		msg += "\n  its stderr ended with:\n    " + strings.Join(e.Stderr, "\n    ")
	}
	return msg
}

func (e *LostError) Unwrap() error { return e.Err }

// ExitError means the server this tool started has exited.
type ExitError struct {
	Pid int
	Err error // from Wait: nil for status 0
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("server (pid %d) exited with status 0", e.Pid)
	}
	return fmt.Sprintf("server (pid %d) exited: %v", e.Pid, e.Err)
}

func (e *ExitError) Unwrap() error { return e.Err }

// send delivers ev unless ctx ends first.
func send(ctx context.Context, out chan<- Event, ev Event) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
