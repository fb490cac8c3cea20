package patches

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
)

// The installed kernel module is generated code that patch replaces whole,
// never merges. A module edited by hand, or one the user rendered with
// tables of their own (--selection, --kernels), must not be replaced by a
// run that would silently drop that: patch records, under its install
// header, the SHA-256 of the module it wrote, so that a later run can tell
// an edit from a module an earlier mlagen wrote (which it upgrades), and it
// reads the module's generated header for the command that emitted it. The
// digest line also says whether the module came from the user's own files
// (--kernels, --selection): a run that gives neither must not replace it
// with the built-in module, even where both were emitted by the same
// command.

// digestLineRE is the line under the install header: the SHA-256 of the
// rest of the file as patch wrote it.
var digestLineRE = regexp.MustCompile(`\A# SHA-256 of the lines below( \(given with --kernels or --selection\))?, as mlagen patch wrote them: ([0-9a-f]{64})\r?\n`)

// installedKernel is the file patch writes for the kernel module src,
// given by the flag from ("--kernels", "--selection"; "" for the built-in
// module).
func installedKernel(rec *Recipe, src []byte, from string) []byte {
	sum := sha256.Sum256(src)
	given := ""
	if from != "" {
		given = " (given with --kernels or --selection)"
	}
	head := kernelHeader(rec) + "# SHA-256 of the lines below" + given + ", as mlagen patch wrote them: " + hex.EncodeToString(sum[:]) + "\n"
	return append([]byte(head), src...)
}

// installedBody splits an installed kernel module (which starts with the
// install header) into the module as emitted, the digest recorded above it
// ("" for a module an earlier mlagen installed without one) and whether it
// was given with --kernels or --selection (the user's own).
func installedBody(rec *Recipe, data []byte) (body []byte, digest string, users bool) {
	body = data[len(kernelHeader(rec)):]
	if m := digestLineRE.FindSubmatch(body); m != nil {
		return body[len(m[0]):], string(m[2]), len(m[1]) > 0
	}
	return body, "", false
}

// editedKernel says how the installed module (the file's bytes data; body
// and digest, installedBody's parts of it) shows an edit made after patch
// wrote it, "" when it shows none: its lines no longer have the digest
// recorded above them, or, for a module installed without one, an
// installed SGLang's RECORD lists another hash for it.
// mod is the defining module the kernel module sits beside.
func (s *session) editedKernel(mod, kp string, data, body []byte, digest string) string {
	if digest != "" {
		if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != digest {
			return "its lines no longer have the SHA-256 recorded in its header"
		}
		return ""
	}
	if r := s.co.recordFor(mod); r != nil {
		if s, e, ok := recordLine(r.Data, r.Prefix+kp); ok && string(r.Data[s:e]) != recordEntry(r.Prefix+kp, data) {
			return fmt.Sprintf("its hash is not the one %s lists for it", r.Path)
		}
	}
	return ""
}

// installHead names the lines above the emitted module in an installed
// one: the install header, and the digest line where this mlagen or a
// later one wrote it.
func installHead(digest string) string {
	if digest != "" {
		return "first two lines"
	}
	return "first line"
}

// ownKernel reports whether the emitted module body is one of this
// mlagen's built-in modules (an earlier mlagen's included): its generated
// header names the command this mlagen emits its built-in module for the
// same TARGET with. One emitted with a selection or sweep flags of the
// user's names another. A module whose header names no command (an early
// mlagen's) cannot be told, nor can any without Options.Emitted: they
// count as mlagen's own, as before.
func ownKernel(body []byte, emitted func(string) ([]byte, error)) bool {
	cmd := kernelCommand(body)
	if cmd == "" || emitted == nil {
		return true
	}
	want, err := emitted(kernelTarget(body))
	return err == nil && cmd == kernelCommand(want)
}

// keepKernel refuses, with what to do instead, to replace the installed
// module at kp (data: the file's bytes) with src: one edited by hand (src
// may be that edit itself, given with --kernels), or one installed from the
// user's own files or emitted with tables of their own, when this run
// gives neither --selection nor --kernels (the built-in tables would
// silently take its place).
func (p *planner) keepKernel(kp string, data, src []byte, opt Options) error {
	body, digest, given := installedBody(p.rec, data)
	if bytes.Equal(body, src) {
		return nil
	}
	if why := p.s.editedKernel(p.mod, kp, data, body, digest); why != "" {
		head := installHead(digest)
		return &Problem{Msg: fmt.Sprintf("%s was edited by hand after mlagen patch installed it (%s); replacing it would lose the edit, so nothing was written", kp, why),
			Lines: []string{
				"to keep the edit: save the module without its " + head + " (mlagen patch's, above \"# Code generated by mlagen\") as DIR/sparse_mla_mma.py and run mlagen patch --kernels DIR",
				"to drop it: move the file aside (or delete it) and run mlagen patch again",
			}}
	}
	if whose := usersKernel(body, given, opt); whose != "" {
		return &Problem{Msg: fmt.Sprintf("%s %s; this run gives neither --selection nor --kernels and would replace it with the built-in module, so nothing was written", kp, whose),
			Lines: []string{
				"to keep it up to date: pass the same --selection FILE or --kernels DIR again",
				"to install the built-in module instead: run mlagen patch --revert first (or move the file aside), then mlagen patch",
			}}
	}
	return nil
}

// usersKernel says whose the installed module is when a run that gives
// no module of the user's (opt.KernelFrom "") must leave it alone: one
// installed from --kernels or --selection (given), or one whose header
// names another command than this mlagen's built-in module; "" otherwise.
func usersKernel(body []byte, given bool, opt Options) string {
	switch {
	case opt.KernelFrom != "":
		return ""
	case given:
		return "was installed from --kernels or --selection"
	case !ownKernel(body, opt.Emitted):
		return fmt.Sprintf("was emitted by `%s`, not from this mlagen's built-in tables", kernelCommand(body))
	}
	return ""
}
