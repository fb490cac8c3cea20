package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mlagen/mlagen/changeset"
)

// cmdFlags is the one flag idiom of every subcommand: pflag, errors
// reported here (never by pflag), -h/--help listed in the help like any
// other flag, and every mistake answered with one line and the same hint
// (and, where the command line asks for --json, one error object on
// stdout: CI reading it gets an object for a misspelt flag too).
type cmdFlags struct {
	*pflag.FlagSet
	cmd   string // the subcommand, e.g. "emit"
	usage string // the help above the flags
	after string // the help below the flags (exit statuses), may be empty
	help  *bool
	// report names the command of the --json error objects when it is
	// not cmd (patch --revert's are "revert"); nil means cmd.
	report func() string
	// args and parsed: what parse was given, and whether pflag read it
	// all (given reads the words itself where it stopped short).
	args   []string
	parsed bool
}

func newCmdFlags(cmd, usage string) *cmdFlags {
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors itself, once
	fs.SortFlags = false
	fs.Usage = func() {}
	return &cmdFlags{FlagSet: fs, cmd: cmd, usage: usage}
}

// alias defines a hidden second spelling of a string flag: the old name
// keeps working, the help shows one name.
func (f *cmdFlags) alias(p *string, old, name string) {
	f.StringVar(p, old, *p, "alias of --"+name)
	f.MarkHidden(old)
}

// parse parses args. done is true when the subcommand must stop and exit
// with code: --help was asked for (help on stdout, 0), or a flag was wrong
// (one line and the hint on stderr, 2).
func (f *cmdFlags) parse(e *env, args []string) (done bool, code int) {
	if f.Lookup("help") == nil {
		f.help = f.BoolP("help", "h", false, "show this help")
	}
	f.args = args
	if err := f.Parse(args); err != nil {
		return true, f.usageError(e, "%s", f.explain(err))
	}
	f.parsed = true
	if *f.help {
		f.printHelp(e.stdout)
		return true, exitOK
	}
	return false, exitOK
}

func (f *cmdFlags) printHelp(w io.Writer) {
	fmt.Fprint(w, strings.TrimRight(f.usage, "\n")+"\n\nFlags:\n")
	fmt.Fprint(w, f.FlagUsages())
	fmt.Fprint(w, f.after)
}

// explain is pflag's error with a did-you-mean for an unknown flag, and
// with the item at fault for a list of integers (pflag's own words there
// are strconv's: `strconv.Atoi: parsing "x": invalid syntax`).
func (f *cmdFlags) explain(err error) string {
	var ve *pflag.InvalidValueError
	if errors.As(err, &ve) && ve.GetFlag().Value.Type() == "intSlice" {
		return listError(ve)
	}
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || ne.GetSpecifiedShortnames() != "" {
		return err.Error()
	}
	var names []string
	f.VisitAll(func(fl *pflag.Flag) {
		if !fl.Hidden {
			names = append(names, fl.Name)
		}
	})
	if s := suggest(ne.GetSpecifiedName(), names); s != "" {
		return fmt.Sprintf("%v; did you mean --%s?", err, s)
	}
	return err.Error()
}

// listError says which item of a comma-separated list of integers is
// not one; pflag's own error where every item reads as one to strconv.
func listError(ve *pflag.InvalidValueError) string {
	const how = "give integers separated by commas, no spaces"
	name, value := ve.GetFlag().Name, ve.GetValue()
	if value == "" {
		return fmt.Sprintf("--%s is empty: %s, or leave the flag out for its default", name, how)
	}
	for i, item := range strings.Split(value, ",") {
		if item == "" {
			return fmt.Sprintf("--%s %q: item %d is empty (%s)", name, value, i+1, how)
		}
		if _, err := strconv.Atoi(item); errors.Is(err, strconv.ErrRange) {
			return fmt.Sprintf("--%s %q: %s is out of range", name, value, item)
		} else if err != nil {
			return fmt.Sprintf("--%s %q: %q is not an integer (%s)", name, value, item, how)
		}
	}
	return ve.Error()
}

// given reports whether boolean flag name is on. After a parse that
// stopped at a mistake, flags after it were never read, so the words are
// read here as pflag reads them: up to "--", the last spelling wins, and
// a word that is the value of the flag before it (--out --json) is not a
// flag.
func (f *cmdFlags) given(name string) bool {
	fl := f.Lookup(name)
	if fl == nil {
		return false
	}
	if f.parsed {
		return fl.Value.String() == "true"
	}
	on := false
	for i := 0; i < len(f.args); i++ {
		a := f.args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue // an argument: pflag reads flags after it too
		}
		key, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var g *pflag.Flag
		if strings.HasPrefix(a, "--") {
			g = f.Lookup(key)
		} else if len(key) == 1 {
			g = f.ShorthandLookup(key)
		}
		switch {
		case g == fl && hasValue:
			on, _ = strconv.ParseBool(value)
		case g == fl:
			on = true
		case g != nil && g.NoOptDefVal == "" && !hasValue:
			i++ // its value, whatever it looks like
		}
	}
	return on
}

// usageError is the package's usageError for a mistake in this
// command's flags, with the error object on stdout too where the command
// line asks for --json.
func (f *cmdFlags) usageError(e *env, format string, args ...any) int {
	report := f.cmd
	if f.report != nil {
		report = f.report()
	}
	return failedAs(e, f.cmd, report, f.given("json"), exitUsage, fmt.Sprintf(format, args...))
}

// emptyGiven is the usage error (done true, exit 2) for the first of names
// given on the command line with an empty value: a path whose shell
// variable expanded to nothing would otherwise read as the flag left out,
// and its default (a folder of this repository, the built-in module) would
// be used in silence.
func (f *cmdFlags) emptyGiven(e *env, names ...string) (bool, int) {
	for _, name := range names {
		if fl := f.Lookup(name); fl != nil && fl.Changed && fl.Value.String() == "" {
			return true, f.usageError(e, "--%s is empty: give a value, or leave the flag out for its default", name)
		}
	}
	return false, exitOK
}

// noArgs is the usage error of a subcommand that takes flags only.
func (f *cmdFlags) noArgs(e *env) (bool, int) {
	if f.NArg() == 0 {
		return false, exitOK
	}
	return true, f.usageError(e, "unexpected argument %q (%s takes flags only)", f.Arg(0), f.cmd)
}

// usageError prints a usage mistake and the hint every subcommand gives,
// and returns the exit status of bad usage. Past a subcommand's name the
// mistakes are its cmdFlags' usageError's, which adds the --json object.
func usageError(e *env, cmd, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "mlagen %s: %s\n", cmd, fmt.Sprintf(format, args...))
	fmt.Fprintf(e.stderr, "Run 'mlagen %s --help' for usage.\n", cmd)
	return exitUsage
}

// failure prints a problem the job found (or an input it could not use
// that passed the flags) and returns exit status 1.
func failure(e *env, cmd string, err error) int {
	fmt.Fprintf(e.stderr, "mlagen %s: %v\n", cmd, err)
	return exitFail
}

// errorReport is what a subcommand run with --json prints on stdout when
// it fails, in the shape of patch's problem(): CI reading --json gets an
// object either way, and the human text stays on stderr.
type errorReport struct {
	Command string   `json:"command"`
	Error   string   `json:"error"`
	Details []string `json:"details"`
}

// failed reports a failure of cmd after its flags were parsed, with exit
// status code: exitFail (the job found a problem) or exitUsage (an input
// it cannot use; the usage hint follows). msg and its details go to
// stderr and, with asJSON, as one errorReport to stdout. A mistake in the
// flags themselves is cmdFlags.usageError's (the same, --json read from
// the command line).
func failed(e *env, cmd string, asJSON bool, code int, msg string, details ...string) int {
	return failedAs(e, cmd, cmd, asJSON, code, msg, details...)
}

// failedAs is failed with the errorReport's "command" given apart from
// cmd: a mode whose report names itself otherwise (patch --revert's says
// "revert") names its failures the same, so that CI reads one name per
// run, while the text on stderr keeps the command typed and its help.
func failedAs(e *env, cmd, report string, asJSON bool, code int, msg string, details ...string) int {
	text := msg
	if len(details) > 0 {
		text += ":\n  " + strings.Join(details, "\n  ")
	}
	if code == exitUsage {
		usageError(e, cmd, "%s", text)
	} else {
		failure(e, cmd, errors.New(text))
	}
	if asJSON {
		jsonError(e, report, msg, details)
	}
	return code
}

// jsonError prints the errorReport of a failure on stdout.
func jsonError(e *env, cmd, msg string, details []string) {
	// A message's closing colon introduces its details in the text;
	// here they are a list of their own.
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ":")
	emitJSON(e, errorReport{Command: cmd, Error: msg, Details: append([]string{}, details...)}, false)
}

// writeFailed reports a failed changeset Apply on dir (exit 1). The writer
// says itself when it put changes back (or could not); a failure before
// the first change needs saying too. A folder that could not be created is
// named as such, not by its path relative to itself ("mkdir .").
func writeFailed(e *env, cmd, dir string, err error, asJSON bool) int {
	var ce *changeset.Error
	var pe *fs.PathError
	switch mkdir := errors.As(err, &pe) && pe.Op == "mkdir"; {
	case mkdir && errors.As(err, &ce):
		err = &changeset.Error{Step: ce.Step, Err: fmt.Errorf("cannot create the folder %s: %w", pe.Path, pe.Err), Undone: ce.Undone, UndoErr: ce.UndoErr}
	case mkdir:
		err = fmt.Errorf("cannot create the folder %s: %w (nothing was written)", pe.Path, pe.Err)
	case !errors.As(err, &ce):
		err = fmt.Errorf("%w (nothing was written: %s is as it was)", err, dir)
	}
	return failed(e, cmd, asJSON, exitFail, fmt.Sprintf("writing %s: %v", dir, err))
}

// suggest is the candidate closest to what was typed, if it is close
// enough to be a slip (a letter or two, or a prefix), else "".
func suggest(typed string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(typed, c)
		if len(typed) >= 3 && strings.HasPrefix(c, typed) {
			d = min(d, 1)
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(1, min(len(typed), len(best))/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, with a swap of two
// neighbouring letters counted as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
