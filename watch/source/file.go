package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// DefaultPoll is how often a File is checked unless its Poll says otherwise.
const DefaultPoll = 200 * time.Millisecond

// File follows a log file the way "tail -F" does: it waits for the file to
// exist, reads what is added, notices when the file is truncated (reads it
// again from the start) or replaced by rotation (finishes the old file, then
// follows the new one), and reports each of these as a notice.
type File struct {
	Path string
	// Poll is how often the file is checked (default DefaultPoll).
	Poll time.Duration
	// Offset is where reading starts in the file that exists at the first
	// look: 0 reads everything, a negative value starts at the end.
	Offset int64
	// StartsRun, when set, tells the line with which a server's run begins
	// (SGLang's "server_args=..."). With Offset 0, a file that already
	// holds several runs at the first look (a log appended to, "tee -a",
	// ">>") is read from the start of its last one: the earlier runs'
	// "ready" and kernel lines are not this run's.
	StartsRun func(line string) bool

	// stop, when closed, makes Run read what is left once more and return
	// nil; Server uses it to drain the log of a server that exited.
	stop <-chan struct{}
	// own: every byte past Offset is this run's (Server's log of the
	// server it started), so bytes found at the first look are news, not
	// an earlier run's log to warn about.
	own bool
}

func (f *File) Describe() string { return "log file " + f.Path }

// fingerprintLen is how much of the start of a file is kept to recognise
// it: a log emptied and written again past its old size within one poll
// has the same identity and no smaller size, only other first bytes.
const fingerprintLen = 4 << 10

type follower struct {
	*File
	out     chan<- Event
	fh      *os.File
	info    fs.FileInfo // of fh when opened
	offset  int64
	lines   lineSplitter
	start   []byte // the first bytes of fh, up to fingerprintLen, as read
	looked  bool   // the path was looked at once
	missing bool   // the path did not exist at the last look
	gone    bool   // the followed file was renamed or removed
}

func (f *File) Run(ctx context.Context, out chan<- Event) error {
	poll := f.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	fl := &follower{File: f, out: out}
	defer fl.close()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := fl.step(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-f.stop:
			err := fl.step(ctx)
			if err == nil {
				fl.flushPartial(ctx)
			}
			return err
		case <-t.C:
		}
	}
}

func (fl *follower) close() {
	if fl.fh != nil {
		fl.fh.Close()
		fl.fh = nil
	}
}

func (fl *follower) notice(ctx context.Context, msg string, restarted bool) {
	send(ctx, fl.out, Event{Notice: msg, Restarted: restarted, Absent: fl.missing})
}

// step opens the file if needed, checks that the file being read is still
// the one read so far, reads what is new, and checks whether the path still
// names the file being read.
func (fl *follower) step(ctx context.Context) error {
	if fl.fh == nil {
		if err := fl.open(ctx); err != nil || fl.fh == nil {
			return err
		}
	}
	if err := fl.checkRewritten(ctx); err != nil {
		return err
	}
	if err := fl.read(ctx); err != nil {
		return err
	}
	st, err := os.Stat(fl.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !fl.gone {
			fl.gone = true
			fl.notice(ctx, fmt.Sprintf("%s was renamed or removed; reading the old file until a new one appears", fl.Path), false)
		}
	case err != nil:
		return &LostError{What: "cannot check " + fl.Path, Err: err}
	case !os.SameFile(st, fl.info):
		// Rotated: everything of the old file was read above.
		fl.flushPartial(ctx)
		fl.close()
		fl.gone = false
		fl.notice(ctx, fmt.Sprintf("%s was rotated; following the new file from its start", fl.Path), false)
		fl.missing = false
		if err := fl.open(ctx); err != nil {
			return err
		}
		if fl.fh != nil {
			return fl.read(ctx)
		}
	}
	return nil
}

// checkRewritten notices that the file being read was emptied (a restart
// with "> log", logrotate's copytruncate), by its size or, when it has been
// written again past the old size since the last look, by its first bytes;
// it then reads it again from the start. Its identity needs no check here:
// the file stays the same while it is held open.
func (fl *follower) checkRewritten(ctx context.Context) error {
	info, err := fl.fh.Stat()
	if err != nil {
		return &LostError{What: "cannot stat " + fl.Path, Err: err}
	}
	what := ""
	switch {
	case info.Size() < fl.offset:
		what = "was truncated"
	case len(fl.start) > 0:
		now := make([]byte, len(fl.start))
		n, err := fl.fh.ReadAt(now, 0)
		if err != nil && err != io.EOF {
			return &LostError{What: "cannot read " + fl.Path, Err: err}
		}
		if !bytes.Equal(now[:n], fl.start) {
			what = "was truncated and written again (its first bytes changed)"
		}
	}
	if what == "" {
		return nil
	}
	if _, err := fl.fh.Seek(0, io.SeekStart); err != nil {
		return &LostError{What: "cannot rewind truncated " + fl.Path, Err: err}
	}
	fl.offset = 0
	fl.start = nil
	fl.lines = lineSplitter{}
	fl.notice(ctx, fmt.Sprintf("%s %s; reading it again from the start", fl.Path, what), true)
	return nil
}

func (fl *follower) open(ctx context.Context) error {
	// Without O_NONBLOCK, opening a named pipe waits for a writer, past any
	// time-out; a regular file reads the same either way.
	fh, err := os.OpenFile(fl.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if !fl.missing {
			fl.missing = true
			fl.notice(ctx, fmt.Sprintf("waiting for %s to appear", fl.Path), false)
		}
		fl.looked = true
		return nil
	}
	if err != nil {
		return &LostError{What: "cannot open " + fl.Path, Err: err}
	}
	info, err := fh.Stat()
	if err != nil {
		fh.Close()
		return &LostError{What: "cannot stat " + fl.Path, Err: err}
	}
	if !info.Mode().IsRegular() {
		// A pipe, socket or device cannot be read from its start again or
		// followed across rotation; mlagen watch refuses one given as
		// --log, and this is one that took the file's place since.
		fh.Close()
		return &LostError{What: fl.Path + " is " + FileKind(info.Mode()), Err: ErrNotRegular}
	}
	fl.fh, fl.info, fl.offset, fl.start = fh, info, 0, nil
	if fl.missing {
		fl.missing = false
		fl.notice(ctx, fl.Path+" appeared", false)
	}
	from := fl.Offset
	if !fl.looked && fl.Offset == 0 && info.Size() > 0 && !fl.own {
		// Said so that a "ready" found here is not mistaken for news: the
		// file may hold an earlier run's log.
		last, line, runs, err := lastRun(fh, info.Size(), fl.StartsRun)
		if err != nil {
			fh.Close()
			return &LostError{What: "cannot read " + fl.Path, Err: err}
		}
		switch {
		case last > 0 && runs > 1:
			from = last
			fl.notice(ctx, fmt.Sprintf("%s already holds %d bytes, of %d runs of the server; reading it from the last one's start (line %d)", fl.Path, info.Size(), runs, line), false)
		case last > 0:
			// One run, after lines of something else (a launcher's
			// output, import warnings): not an earlier run's log.
			from = last
			fl.notice(ctx, fmt.Sprintf("%s already holds %d bytes, of one run of the server; reading it from that run's start (line %d)", fl.Path, info.Size(), line), false)
		default:
			fl.notice(ctx, fmt.Sprintf("%s already holds %d bytes; reading it from the start", fl.Path, info.Size()), false)
		}
	}
	if !fl.looked && from != 0 {
		// Only the file found at the first look starts late; a file that
		// appears or replaces it later is new and read whole.
		where := from
		if where < 0 || where > info.Size() {
			where = info.Size()
		}
		if _, err := fh.Seek(where, io.SeekStart); err != nil {
			return &LostError{What: "cannot seek in " + fl.Path, Err: err}
		}
		fl.offset = where
		// The skipped start is what recognises the file later.
		fl.start = make([]byte, min(where, fingerprintLen))
		n, err := fh.ReadAt(fl.start, 0)
		if err != nil && err != io.EOF {
			return &LostError{What: "cannot read " + fl.Path, Err: err}
		}
		fl.start = fl.start[:n]
	}
	fl.looked = true
	return nil
}

func (fl *follower) read(ctx context.Context) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := fl.fh.Read(buf)
		if n > 0 {
			if fl.offset == int64(len(fl.start)) && len(fl.start) < fingerprintLen {
				fl.start = append(fl.start, buf[:min(n, fingerprintLen-len(fl.start))]...)
			}
			fl.offset += int64(n)
			fl.lines.feed(buf[:n], func(ev Event) bool { return send(ctx, fl.out, ev) })
		}
		if err == io.EOF || (n == 0 && err == nil) {
			return nil
		}
		if err != nil {
			return &LostError{What: "cannot read " + fl.Path, Err: err}
		}
	}
}

// flushPartial delivers a last line that has no newline yet; used when the
// file is left behind (rotation, end of a server) so no line is lost.
func (fl *follower) flushPartial(ctx context.Context) {
	fl.lines.flush(func(ev Event) bool { return send(ctx, fl.out, ev) })
}

// lastRun finds, in the first size bytes of f, the start of the last line
// for which starts is true, its line number (1-based) and how many such
// lines there are (the runs the file holds); 0, 0, 0 when there is none or
// starts is nil. A line longer than the reader's buffer is judged by its
// first piece.
func lastRun(f *os.File, size int64, starts func(string) bool) (offset int64, line, runs int, err error) {
	if starts == nil {
		return 0, 0, 0, nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10)
	var at int64
	n := 0
	lineStart := true
	for {
		b, err := r.ReadSlice('\n')
		if len(b) > 0 && lineStart {
			n++
			if starts(strings.TrimRight(string(b), "\r\n")) {
				offset, line = at, n
				runs++
			}
		}
		at += int64(len(b))
		switch err {
		case nil:
			lineStart = true
		case bufio.ErrBufferFull:
			lineStart = false // the rest of a long line follows
		case io.EOF:
			return offset, line, runs, nil
		default:
			return 0, 0, 0, err
		}
	}
}

// ErrNotRegular: a log path that is a pipe, a socket or a device. Opening a
// named pipe blocks until its other end opens (a watch that never started,
// or never ended), and a stream cannot be re-read from its start or
// followed across rotation as a file is. mlagen watch refuses such a --log
// with it, and the file source ends with it where one took the file's place.
var ErrNotRegular = errors.New("not a regular file")

// FileKind names a mode that is neither a regular file's nor a directory's,
// for messages: "a named pipe", "a socket", "a device".
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
