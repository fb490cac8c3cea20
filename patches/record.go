package patches

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// An installed SGLang's dist-info RECORD lists every file of the
// distribution; pip uninstall removes exactly those (and their bytecode).
// The kernel module mlagen creates is added to it, right after the defining
// module's line, so that uninstalling SGLang removes it too; --revert takes
// that one line out again, which gives back RECORD's original bytes. The
// hashes of the files mlagen edits are left as upstream wrote them: pip does
// not check them when it uninstalls.

// recordFor picks the RECORD that lists the defining module mod: the
// installed release's where recordsFor finds more than one.
func (co *Checkout) recordFor(mod string) *Record {
	if rs := co.recordsFor(mod); len(rs) > 0 {
		return rs[0].Record
	}
	return nil
}

// listingRecord is a RECORD that lists the defining module, with how many
// of the tree's files it lists and how many of those it gives another hash
// than the file's.
type listingRecord struct {
	*Record
	listed, mismatched int
}

// recordsFor are the RECORDs that list the defining module mod, the
// installed release's first. There is one where pip installed SGLang once;
// `pip install --ignore-installed` writes a release over another and
// leaves the old one's dist-info beside the new, so two (or more) list the
// same files, and pip uninstall takes whichever its metadata lookup finds
// first. The installed release is the one whose hashes agree with the
// tree's files: the files mlagen edits disagree with every RECORD alike,
// so they do not sway it. Ties keep RECORD's path order.
func (co *Checkout) recordsFor(mod string) []listingRecord {
	var out []listingRecord
	for _, r := range co.Records {
		if _, _, ok := recordLine(r.Data, r.Prefix+mod); ok {
			out = append(out, listingRecord{Record: r})
		}
	}
	if len(out) < 2 {
		return out
	}
	for i := range out {
		out[i].listed, out[i].mismatched = co.recordAgreement(out[i].Record)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].mismatched < out[j].mismatched })
	return out
}

// recordAgreement counts the tree's files r lists and those among them
// whose bytes do not have the hash and size r gives.
func (co *Checkout) recordAgreement(r *Record) (listed, mismatched int) {
	for _, line := range strings.Split(string(r.Data), "\n") {
		line = strings.TrimRight(line, "\r")
		name, hash, _ := strings.Cut(line, ",")
		p, under := strings.CutPrefix(name, r.Prefix)
		f, inTree := co.Tree.Files[p]
		if !under || !inTree || strings.HasPrefix(hash, ",") || hash == "" {
			continue // not one of the tree's files, or listed without a hash
		}
		listed++
		if line != recordEntry(name, f.Data) {
			mismatched++
		}
	}
	return listed, mismatched
}

// recordLine finds the line of RECORD that lists p: its start and end
// (before its line ending).
func recordLine(data []byte, p string) (int, int, bool) {
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
			end = off + end
		} else {
			end = len(data)
		}
		line := bytes.TrimRight(data[off:end], "\r")
		if name, _, ok := strings.Cut(string(line), ","); ok && name == p {
			return off, off + len(line), true
		}
		off = next
	}
	return 0, 0, false
}

// recordEntry is RECORD's line for a file: path, urlsafe base64 sha256
// without padding, size (the wheel format's RECORD).
func recordEntry(p string, data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s,sha256=%s,%d", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(data))
}

// recordAdd returns the change that lists the kernel module (its bytes
// kernel at tree path kp) in r, after the defining module's line; nil when
// RECORD already lists it with these bytes.
func recordAdd(r *Record, mod, kp string, kernel []byte) *Change {
	want := recordEntry(r.Prefix+kp, kernel)
	var after []byte
	if s, e, ok := recordLine(r.Data, r.Prefix+kp); ok {
		if string(r.Data[s:e]) == want {
			return nil
		}
		after = append(append(append([]byte(nil), r.Data[:s]...), want...), r.Data[e:]...)
	} else {
		_, e, _ := recordLine(r.Data, r.Prefix+mod)
		eol := eolAt(r.Data, e)
		at := e + len(eol)
		if e+len(eol) > len(r.Data) { // the module's line is the last, without a line ending
			at = e
			want = eol + want
		} else {
			want += eol
		}
		after = append(append(append([]byte(nil), r.Data[:at]...), want...), r.Data[at:]...)
	}
	return &Change{Path: r.Path, Before: r.Data, After: after, Mode: r.Mode}
}

// recordRemove returns the change that takes the kernel module's line out
// of r with its line ending; nil when r does not list it.
func recordRemove(r *Record, kp string) *Change {
	s, e, ok := recordLine(r.Data, r.Prefix+kp)
	if !ok {
		return nil
	}
	eol := eolAt(r.Data, e)
	switch {
	case e+len(eol) <= len(r.Data) && string(r.Data[e:e+len(eol)]) == eol:
		e += len(eol)
	case s >= len(eol):
		s -= len(eol) // the last line, added after one without a line ending
	}
	after := append(append([]byte(nil), r.Data[:s]...), r.Data[e:]...)
	return &Change{Path: r.Path, Before: r.Data, After: after, Mode: r.Mode}
}

var (
	targetRE  = regexp.MustCompile(`(?m)^TARGET = "([A-Za-z0-9_]+)"`)
	commandRE = regexp.MustCompile(`(?m)\A(?:#.*\n){0,4}?# Command: (.+)$`)
)

// kernelCommand is the command a generated kernel module's header names
// (gen's "# Command: " line among its first lines), or "".
func kernelCommand(kernel []byte) string {
	if m := commandRE.FindSubmatch(kernel); m != nil {
		return string(m[1])
	}
	return ""
}

// KernelTarget is the GPU target a kernel module was rendered for (its
// TARGET line), or "": patch --kernels checks it against --target.
func KernelTarget(kernel []byte) string { return kernelTarget(kernel) }

// kernelTarget is the GPU target a kernel module was rendered for (its
// TARGET), or "".
func kernelTarget(kernel []byte) string {
	if m := targetRE.FindSubmatch(kernel); m != nil {
		return string(m[1])
	}
	return ""
}
