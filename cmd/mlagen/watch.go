package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/mlagen/mlagen/changeset"
	"github.com/mlagen/mlagen/watch"
	"github.com/mlagen/mlagen/watch/baseline"
	"github.com/mlagen/mlagen/watch/sglanglog"
	"github.com/mlagen/mlagen/watch/smoke"
	"github.com/mlagen/mlagen/watch/source"
)

const watchUsage = `Usage: mlagen watch [flags] (--log FILE | --cmd "COMMAND" | -- SERVER COMMAND...)

Follow an SGLang server from its start until it answers a request correctly.
Each startup phase is printed as it happens (load weights, CUDA graph capture,
ready) with the time since the watch began; every known failure signature
(out of memory, SIGQUIT, CompilationError, Python traceback, CUDA error,
segmentation fault, abort, kill, CUDA graph capture failure, NCCL error) stops
the watch with the failure and the 20 log lines before it. Signatures match
failures as they are reported (an exception line, a fatal error, a killed
job), not words in a warning, nor the traceback SGLang logs below a warning
for an exception it handled (noted). Once the server says it is ready, GET
/health and one greedy request prove it computes: a server that starts with
a broken kernel answers garbage, and that fails too; the log is read while
the request is out, and a failure there ends the watch with it; after the
answer it is read on until it pauses for 0.25s (5s at most), so that a
traceback or a restart the reader had not yet passed on (a log read through
--cmd) is judged with it. The request has what is left of --timeout, and a
response longer than --max-response-bytes is an error.

The log comes from exactly one of:
  --log FILE          a file, followed like "tail -F" (it may not exist yet,
                      but its folder must; truncation, rewriting and rotation
                      are noticed and reported; a file that holds earlier
                      runs is read from the last one's server_args= line,
                      and one logged meanwhile starts the phases and the
                      kernel lines over); a pipe, <(...) included,
                      is refused: its command goes to --cmd; so is a file
                      you cannot read: --cmd "sudo tail -n +1 -F FILE"
  --cmd "COMMAND"     the output of a shell command, e.g. ssh HOST tail -F FILE;
                      a command that ends or fails is "log source lost" (exit 4)
  -- SERVER COMMAND   a server started here, with --env pairs added; its output
                      goes to --log FILE (default mlagen-server-TIME.log, always
                      appended to; its folder must exist). It is left running
                      when the watch succeeds and stopped when it does not, on
                      Ctrl-C, SIGTERM or SIGHUP (the terminal or ssh session
                      closed; not under nohup, which ignores SIGHUP): SIGTERM
                      to its process group, then SIGKILL to whatever of the
                      group still runs after --stop-grace (also what a
                      server that exited leaves running).

Which kernel served: mlagen's kernel module logs, once per process, either
  mlagen: sparse-MLA decode on the MMA kernel (ENTRY, target T, config NAME, H heads)
  mlagen: sparse-MLA decode not on the MMA kernel (ENTRY): REASON; SGLang's kernel runs
and the watch reports what it saw. When it starts the server with
SGLANG_SM120_MMA_FLASHMLA set true (1, true, yes or y; by --env or inherited),
or with --expect-kernel, READY also needs an "on the MMA kernel" line after
the smoke answer (the watch waits up to 10s for it, within --timeout);
otherwise it fails, exit 1: "the server answered, but the MMA kernel never
ran: " and the fallback reasons, or "no mlagen line in the log". Not
required, a line not yet read when the answer comes (without CUDA graphs
the module logs at the smoke request) gets 1s more; after that the report
says "served": "unknown", and a server that exits in that second fails.

Examples:
  # Follow a server started by hand:
  mlagen watch --log ~/dsv4_mma.log

  # The same server was started with the gate set: require the MMA kernel.
  mlagen watch --log ~/dsv4_mma.log --expect-kernel

  # Follow a remote log over ssh from its first line (plain tail -F shows
  # only the last 10); the server answers on its own address:
  mlagen watch --cmd "ssh root@gpu1 tail -n +1 -F /root/dsv4_mma.log" --url http://gpu1:30000

  # Start the server with the MMA kernel switched on (for the server only)
  # and watch it; READY means the MMA kernel served the smoke request:
  mlagen watch --env SGLANG_SM120_MMA_FLASHMLA=1 --log ~/dsv4_mma.log -- \
      python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Flash --tp 4

  # Record a good start, then hold later starts to it:
  mlagen watch --log server.log --save-baseline start.json --save-answer answer.txt
  mlagen watch --log server.log --baseline start.json --expect-file answer.txt

  # A server started with --api-key wants it with the smoke request:
  SGLANG_KEY=sk-... mlagen watch --log server.log --api-key-env SGLANG_KEY

  # CI: the report as JSON on stdout (its "kernel" says which kernel
  # served), progress on stderr:
  mlagen watch --log server.log --json > watch.json
`

const watchExits = `
Exit status:
  0    ready, and the server answered correctly (on the MMA kernel, when required)
  1    failure: a failure signature, a started server that exited before
       ready or before its smoke answer was taken, a
       wrong or empty answer, /health not OK, a phase >25% slower than
       --baseline (a server the watch started answered correctly, and is
       left running), the MMA kernel required and not run, a good
       start whose --save-baseline or --save-answer could not be
       written (--json: its "error" says why)
  2    bad usage, such as a --log that is a folder, lies in a folder that
       does not exist or cannot be read, or a --save-baseline or
       --save-answer in a folder that does not exist (nothing was started
       or written)
  3    time-out: not ready, or no answer to the smoke request, within
       --timeout (the last phase reached is named)
  4    log source lost: the log could not be read any more (server state unknown)
  130  interrupted (Ctrl-C, SIGTERM, or SIGHUP when the terminal closes)
`

// gateVar is the environment switch of the patched SGLang tree; a server
// started with it true must run the MMA kernel.
const gateVar = "SGLANG_SM120_MMA_FLASHMLA"

// watchOpts is everything runWatch reads from its flags.
type watchOpts struct {
	logPath, cmdLine            string
	env                         []string
	url, prompt, expect         string
	expectFile, saveAnswer      string
	model                       string
	maxTokens                   int
	openai                      bool
	timeout, interval           time.Duration
	keepGoing, jsonOut, fromEnd bool
	saveBaseline, baselinePath  string
	server                      []string
	expectKernel                bool
	maxResponse                 int64
	stopGrace                   time.Duration
	apiKeyEnv                   string
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func runWatch(e *env, args []string) int {
	var o watchOpts
	f := o.flagSet()
	if done, code := f.parse(e, args); done {
		return code
	}
	fs := f.FlagSet
	dash := fs.ArgsLenAtDash()
	rest := fs.Args()
	if dash < 0 && len(rest) > 0 || dash > 0 {
		return o.usageError(e, "unexpected argument %q; a server command goes after --", rest[0])
	}
	if dash == 0 {
		o.server = rest
	}

	cfg, code := o.config(e, fs)
	if code != exitOK {
		return code
	}

	ctx, stop := watchSignals()
	defer stop()
	// Once the watch stops its server, a Ctrl-C ends mlagen at once (the
	// handler would only cancel a watch that is over): the grace period
	// can be long, and the message says so.
	cfg.Stopping = func() { signal.Reset(os.Interrupt) }
	rep := watch.Run(ctx, cfg)
	o.saveResults(e, rep, cfg.Out)
	if o.jsonOut {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(e.stderr, "mlagen watch: writing the JSON report: %v\n", err)
			return exitFail
		}
	}
	return rep.ExitCode
}

func (o *watchOpts) flagSet() *cmdFlags {
	fs := newCmdFlags("watch", watchUsage)
	fs.after = watchExits
	fs.StringVar(&o.logPath, "log", "", "follow this log `FILE` (with a server command: where its output goes)")
	fs.StringVar(&o.cmdLine, "cmd", "", "read the log from this shell `COMMAND`'s output")
	fs.StringArrayVar(&o.env, "env", nil, "add `NAME=VALUE` to the started server's environment (repeatable)")
	fs.DurationVar(&o.stopGrace, "stop-grace", 10*time.Second, "with a server command: how long its process group gets after SIGTERM before SIGKILL")
	fs.BoolVar(&o.fromEnd, "from-end", false, "with --log: skip what the file already holds (an appended log of an earlier run)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up, with exit 3, when not ready (or not answering) after this long")
	fs.DurationVar(&o.interval, "interval", 10*time.Second, "show a status line this often while waiting")
	fs.BoolVar(&o.keepGoing, "keep-going", false, "collect every failure instead of stopping at the first")
	fs.StringVar(&o.url, "url", "http://127.0.0.1:30000", "the server's base `URL` for the smoke request")
	fs.StringVar(&o.prompt, "prompt", "The capital of France is", "the smoke request's prompt (greedy decoding)")
	fs.StringVar(&o.expect, "expect", "Paris", "the answer must contain this `TEXT`")
	fs.StringVar(&o.expectFile, "expect-file", "", "the answer must equal this `FILE`'s content (see --save-answer)")
	fs.StringVar(&o.saveAnswer, "save-answer", "", "after a good start, write the answer to `FILE`")
	fs.IntVar(&o.maxTokens, "max-tokens", 16, "tokens to generate for the smoke request")
	fs.Int64Var(&o.maxResponse, "max-response-bytes", smoke.DefaultMaxResponseBytes, "a smoke response longer than this many `BYTES` is an error (it is never cut short)")
	fs.StringVar(&o.apiKeyEnv, "api-key-env", "", "a server started with --api-key wants its key with each request: send the one in environment variable `NAME` (as a Bearer token)")
	fs.BoolVar(&o.openai, "openai", false, "ask /v1/completions instead of SGLang's native /generate")
	fs.StringVar(&o.model, "model", "", "model name for --openai (default: the first of /v1/models)")
	fs.StringVar(&o.saveBaseline, "save-baseline", "", "after a good start, write its phase durations to `FILE`")
	fs.StringVar(&o.baselinePath, "baseline", "", "fail when a phase is >25% slower than in this baseline `FILE`")
	fs.BoolVar(&o.expectKernel, "expect-kernel", false, "READY needs the kernel module's \"on the MMA kernel\" line (the default when the started server has "+gateVar+" true; =false turns that off)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report (timeline, failures, smoke result, kernel) as JSON on stdout; progress goes to stderr")
	return fs
}

// saveResults writes what --save-baseline and --save-answer ask for, from a
// good start only.
func (o *watchOpts) saveResults(e *env, rep *watch.Report, human io.Writer) {
	if o.saveBaseline != "" {
		if rep.Outcome == watch.Ready {
			data, err := baseline.Encode(baseline.File{Source: rep.Source, Phases: rep.Phases})
			if err == nil {
				err = saveFile(e, o.saveBaseline, data)
			}
			if err != nil {
				saveFailed(e, rep, fmt.Errorf("saving the baseline: %w", err))
			} else {
				fmt.Fprintf(human, "saved the baseline (%d phase durations) to %s\n", len(rep.Phases), o.saveBaseline)
			}
		} else {
			fmt.Fprintf(human, "not saving a baseline: this start was not good\n")
		}
	}
	if o.saveAnswer != "" {
		if rep.Outcome == watch.Ready && rep.Smoke != nil {
			if err := saveFile(e, o.saveAnswer, []byte(rep.Smoke.Answer)); err != nil {
				saveFailed(e, rep, fmt.Errorf("saving the answer: %w", err))
			} else {
				fmt.Fprintf(human, "saved the answer to %s (use it with --expect-file)\n", o.saveAnswer)
			}
		} else {
			fmt.Fprintf(human, "not saving the answer: this start was not good\n")
		}
	}
}

// saveFailed reports a save that failed after a good start: exit 1, and
// the report's "error" says why (the server is ready all the same, and a
// server the watch started is left running), so that --json does not show
// a bare "ready" with exit status 1.
func saveFailed(e *env, rep *watch.Report, err error) {
	fmt.Fprintf(e.stderr, "mlagen watch: %v\n", err)
	rep.ExitCode = exitFail
	if rep.Error != "" {
		rep.Error += "; "
	}
	rep.Error += err.Error()
}

// saveFile writes data to path all or nothing, through the writer every
// command uses (changeset: a temporary file beside it, renamed over it), so
// that a killed watch never leaves a half-written baseline or answer for a
// later start to be judged by.
func saveFile(e *env, path string, data []byte) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	set := changeset.New(filepath.Dir(abs))
	if err := set.Write(filepath.Base(abs), data); err != nil {
		return err
	}
	_, err = set.Apply(e.write)
	return err
}

// usageError is a mistake in the flags found past their parse, or an
// input the watch cannot use (a file named by a flag, the server to
// start): exit 2, and with --json one error object on stdout too, as for
// every failure.
func (o *watchOpts) usageError(e *env, format string, args ...any) int {
	return failed(e, "watch", o.jsonOut, exitUsage, fmt.Sprintf(format, args...))
}

// config checks the flags against each other and builds the watch; every
// mistake is found here, before anything is started or written.
func (o *watchOpts) config(e *env, fs *pflag.FlagSet) (watch.Config, int) {
	var cfg watch.Config
	if code := o.check(e, fs); code != exitOK {
		return cfg, code
	}
	human := e.stdout
	if o.jsonOut {
		human = e.stderr
	}
	req, code := o.smokeRequest(e, fs, human)
	if code != exitOK {
		return cfg, code
	}
	if o.baselinePath != "" {
		b, err := baseline.Load(o.baselinePath)
		if err != nil {
			return cfg, o.usageError(e, "--baseline: %v", err)
		}
		cfg.Baseline, cfg.BaselinePath = &b, o.baselinePath
	}
	if cfg.Source, code = o.source(e); code != exitOK {
		return cfg, code
	}
	cfg.ExpectKernel, cfg.ExpectKernelWhy = o.kernelExpectation(e, fs, human)
	cfg.Out = human
	cfg.TTY = isTerminal(human) && e.getenv("TERM") != "dumb"
	if cfg.TTY {
		cfg.Width = terminalWidth(human)
	}
	cfg.Timeout, cfg.Interval, cfg.KeepGoing, cfg.Smoke = o.timeout, o.interval, o.keepGoing, req
	return cfg, exitOK
}

// check finds the flags that contradict each other or are out of range.
func (o *watchOpts) check(e *env, fs *pflag.FlagSet) int {
	sources := 0
	if o.cmdLine != "" {
		sources++
	}
	if len(o.server) > 0 {
		sources++
	} else if o.logPath != "" {
		sources++
	}
	switch {
	case sources == 0:
		return o.usageError(e, "no log to watch: give --log FILE, --cmd \"COMMAND\" or -- SERVER COMMAND...")
	case sources > 1:
		return o.usageError(e, "give only one of --log FILE, --cmd \"COMMAND\" and -- SERVER COMMAND (with a server command, --log names its log file)")
	case len(o.env) > 0 && len(o.server) == 0:
		return o.usageError(e, "--env only applies to a server started by the watch (-- SERVER COMMAND...)")
	case fs.Changed("stop-grace") && len(o.server) == 0:
		return o.usageError(e, "--stop-grace only applies to a server started by the watch (-- SERVER COMMAND...)")
	case o.stopGrace <= 0:
		return o.usageError(e, "--stop-grace must be positive, got %s", o.stopGrace)
	case o.fromEnd && (o.logPath == "" || len(o.server) > 0):
		return o.usageError(e, "--from-end only applies to --log FILE without a server command")
	case o.timeout <= 0:
		return o.usageError(e, "--timeout must be positive, got %s", o.timeout)
	case o.interval <= 0:
		return o.usageError(e, "--interval must be positive, got %s", o.interval)
	case o.maxTokens <= 0:
		return o.usageError(e, "--max-tokens must be positive, got %d", o.maxTokens)
	case o.maxResponse <= 0:
		return o.usageError(e, "--max-response-bytes must be positive, got %d", o.maxResponse)
	case o.expectFile != "" && fs.Changed("expect"):
		return o.usageError(e, "give --expect or --expect-file, not both")
	case o.model != "" && !o.openai:
		return o.usageError(e, "--model only applies with --openai")
	case o.apiKeyEnv != "" && e.getenv(o.apiKeyEnv) == "":
		return o.usageError(e, "--api-key-env %s: that environment variable is unset or empty; export the server's key in it first (a name, not the key itself)", o.apiKeyEnv)
	}
	for _, save := range []struct{ flag, path string }{{"--save-baseline", o.saveBaseline}, {"--save-answer", o.saveAnswer}} {
		// Found now, not after a ten-minute start that then cannot be
		// recorded: a folder, or a file in a folder that does not exist.
		if save.path == "" {
			continue
		}
		if err := filePathProblem(save.path, "file", "a typo? The watch writes the file, not its folder"); err != nil {
			return o.usageError(e, "%s: %v", save.flag, err)
		}
	}
	for _, kv := range o.env {
		if !envNameRE.MatchString(kv) {
			return o.usageError(e, "--env %q is not NAME=VALUE", kv)
		}
	}
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o.usageError(e, "--url %q is not an http(s) URL such as http://127.0.0.1:30000", o.url)
	}
	return exitOK
}

// smokeRequest is the request that proves the server computes, and what
// its answer must be.
func (o *watchOpts) smokeRequest(e *env, fs *pflag.FlagSet, human io.Writer) (smoke.Request, int) {
	req := smoke.Request{URL: o.url, Prompt: o.prompt, MaxTokens: o.maxTokens, OpenAI: o.openai, Model: o.model, Contains: o.expect, MaxResponseBytes: o.maxResponse}
	if o.apiKeyEnv != "" {
		req.APIKey = e.getenv(o.apiKeyEnv)
	}
	if o.expectFile != "" {
		data, err := os.ReadFile(o.expectFile)
		if err != nil {
			return req, o.usageError(e, "--expect-file: %v", err)
		}
		exact := string(data)
		req.Exact, req.Contains = &exact, ""
	} else if fs.Changed("prompt") && !fs.Changed("expect") {
		// "Paris" belongs to the default prompt; another prompt needs its
		// own expectation, and without one only emptiness can be judged.
		req.Contains = ""
		fmt.Fprintln(human, "note: --prompt without --expect: the answer is only checked to be non-empty")
	}
	return req, exitOK
}

// source is where the log comes from.
func (o *watchOpts) source(e *env) (source.Source, int) {
	switch {
	case o.cmdLine != "":
		return &source.Command{Line: o.cmdLine}, exitOK
	case len(o.server) > 0:
		logPath := o.logPath
		if logPath == "" {
			logPath = "mlagen-server-" + time.Now().UTC().Format("20060102-150405") + ".log"
		}
		// Found out now, before anything starts: a misspelt command or an
		// unwritable log is a usage mistake, not a failed deployment.
		if _, err := exec.LookPath(o.server[0]); err != nil {
			return nil, o.usageError(e, "cannot start the server: %v", err)
		}
		if err := filePathProblem(logPath, "log file", "the watch creates the log file, not its folder"); err != nil {
			if errors.Is(err, source.ErrNotRegular) {
				return nil, o.usageError(e, "cannot write the server log: %v; the watch reads the server's output back from this file, so it must be one (leave --log out for mlagen-server-TIME.log)", err)
			}
			return nil, o.usageError(e, "cannot write the server log: %v", err)
		}
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, o.usageError(e, "cannot write the server log: %v", err)
		}
		f.Close()
		return &source.Server{Argv: o.server, Env: o.env, LogPath: logPath, Grace: o.stopGrace}, exitOK
	default:
		// A missing file is waited for (the server may not have created
		// it yet), but a missing folder is a typo that would only show as
		// a time-out, and a folder can never be read as a log.
		if err := filePathProblem(o.logPath, "log file", "a typo? The watch waits for a missing log file, not for a missing folder"); err != nil {
			if errors.Is(err, source.ErrNotRegular) {
				how := fmt.Sprintf("the command that writes it, or --cmd \"cat %s\"", o.logPath)
				if strings.HasPrefix(o.logPath, "/dev/fd/") || strings.HasPrefix(o.logPath, "/proc/self/fd/") {
					// --log <(command): the shell's pipe is not passed on.
					how = "the command itself, not <(command)"
				}
				return nil, o.usageError(e, "--log: %v; --log follows a file, and a stream goes to --cmd (%s)", err, how)
			}
			return nil, o.usageError(e, "--log: %v", err)
		}
		if err := logReadProblem(o.logPath); err != nil {
			return nil, o.usageError(e, "--log: cannot read %s: %v; run the watch as a user who can read it, or give --cmd a command that can (--cmd \"sudo tail -n +1 -F %s\")", o.logPath, err, o.logPath)
		}
		f := &source.File{Path: o.logPath, StartsRun: sglanglog.StartsRun}
		if o.fromEnd {
			f.Offset = -1
		}
		return f, exitOK
	}
}

// filePathProblem says why path cannot be the file it is meant to be (what:
// "log file"), before anything is started: it is (or names) a folder, or
// the folder it would be in does not exist or is not one (hint then says
// what the watch would have done). A file that does not exist yet in an
// existing folder is no problem.
func filePathProblem(path, what, hint string) error {
	if strings.HasSuffix(path, string(filepath.Separator)) {
		return fmt.Errorf("%s names a folder (it ends in %c), not a %s", path, filepath.Separator, what)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%s is a directory, not a %s", path, what)
	case err == nil && !st.Mode().IsRegular():
		return fmt.Errorf("%s is %s: %w", path, source.FileKind(st.Mode()), source.ErrNotRegular)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return err
	}
	dir := filepath.Dir(path)
	if msg := notAFolder(dir); msg != "" {
		return fmt.Errorf("%s cannot be a file: %s", path, msg)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the folder of %s, %s, does not exist (%s)", path, dir, hint)
	}
	return nil
}

// logReadProblem says why an existing log file cannot be opened for
// reading (its permissions, mostly: a server run by another user often
// writes its log for that user alone). Found only by the file source's first
// open, it ended the watch as a lost source, exit 4, as if a watch had been
// under way; it is an input the watch cannot use, found before anything
// starts. A file that does not exist yet is waited for, as before.
// O_NONBLOCK: a named pipe that took the file's place since the check must
// not block the open.
func logReadProblem(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err // the path is in the caller's message already
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// terminalWidth is the column count of the terminal w, 0 if unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}

// isTerminal reports whether w is a character device (a terminal), where a
// status line can be redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// kernelExpectation says whether READY needs the kernel module's "on the
// MMA kernel" line, and why: --expect-kernel says so either way; otherwise
// a server started here with the gate true must run the kernel. The gate's
// value is read the way SGLang reads a boolean switch.
func (o *watchOpts) kernelExpectation(e *env, fs *pflag.FlagSet, human io.Writer) (bool, string) {
	if fs.Changed("expect-kernel") {
		return o.expectKernel, "--expect-kernel"
	}
	if len(o.server) == 0 {
		return false, ""
	}
	v, set := e.getenv(gateVar), e.getenv(gateVar) != ""
	from := "inherited"
	for _, kv := range o.env { // the last one wins, as in the server's environment
		if name, val, _ := strings.Cut(kv, "="); name == gateVar {
			v, set, from = val, true, "--env"
		}
	}
	if !set {
		return false, ""
	}
	switch strings.ToLower(v) {
	case "1", "true", "yes", "y":
		return true, fmt.Sprintf("the server is started with %s=%s (%s)", gateVar, v, from)
	case "0", "false", "no", "n":
		return false, ""
	}
	fmt.Fprintf(human, "note: %s=%q is not a value SGLang reads as true (1, true, yes, y): the MMA kernel is not required\n", gateVar, v)
	return false, ""
}

// watchSignals returns a context that ends on the first SIGINT, SIGTERM or
// SIGHUP, with the signal as its cause, so that the watch stops a server it
// started before mlagen exits. A closed terminal or ssh session sends
// SIGHUP (often twice: the kernel and the shell), and an init system may
// repeat SIGTERM: later ones are ignored while the server is being stopped.
// A second Ctrl-C ends mlagen at once, as Ctrl-C usually does. SIGPIPE is
// caught too, so that writing to a closed pipe ("| tee" gone with the
// terminal) fails instead of killing mlagen halfway. A signal ignored when
// mlagen starts stays ignored: nohup ignores SIGHUP so that the start
// outlives the ssh session, and a shell ignores SIGINT for its background
// jobs; Notify would catch them again, and stop the server on them.
func watchSignals() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 8)
	signal.Notify(ch, syscall.SIGPIPE)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				if sig == syscall.SIGPIPE || ctx.Err() != nil {
					continue
				}
				signal.Reset(os.Interrupt)
				cancel(errors.New(signalCause(sig)))
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		signal.Reset(os.Interrupt)
		close(done)
		cancel(nil)
	}
}

func signalCause(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "Ctrl-C"
	case syscall.SIGHUP:
		return "SIGHUP: the terminal or ssh session closed"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
