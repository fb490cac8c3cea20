package patches

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// kernelLaunches finds the places outside the old function that name a
// Triton kernel it launches (NAME[grid](...) in its body, NAME a module-level
// def of the defining module): a fork that launches the SIMT kernel itself
// bypasses the dispatcher, so with the gate set that call keeps the old
// kernel. The search is by bytes, whole words on lines that are not
// comments, in every file of the server's code (not tests, nor a
// checkout's benchmarks, which launch kernels directly): a mention it
// cannot tell from a launch fails the proof too, since passing over a
// launch is the failure the proof exists to rule out.
func (s *session) kernelLaunches(fi *resolve.Info) []string {
	st := fi.Syntax()
	def := fi.TopDef(s.rec.Old)
	if def < 0 {
		return nil
	}
	var out []string
	for _, name := range launched(fi, def) {
		kdef := topDefAt(st.Src(), name)
		keep := func(path string, at int) bool {
			if path != fi.Path() {
				return true
			}
			inOld := at >= st.Start(def) && at < st.End(def)
			return !inOld && at != kdef
		}
		for _, p := range s.co.Tree.Paths() {
			f, ok := s.co.Tree.Files[p]
			if !ok {
				continue
			}
			ats := wordsAt(f.Data, name)
			if len(ats) == 0 || !s.serverFile(p, fi.Path()) {
				continue // the module name only for files that name the kernel
			}
			for _, at := range ats {
				if !keep(p, at) {
					continue
				}
				line, _ := resolve.LineCol(f.Data, at)
				out = append(out, fmt.Sprintf("%s:%d: names %s, the Triton kernel %s launches: a launch outside %s does not pass through the dispatcher, so with the gate set it keeps the old kernel (call %s instead, or wire it by hand)",
					p, line, name, s.rec.Old, s.rec.Old, s.rec.Old))
			}
		}
	}
	return out
}

// launched lists the names of the module-level defs that the function at
// node def launches as Triton kernels (NAME[grid](...), NAME defined at
// the top of the same module).
func launched(fi *resolve.Info, def int32) []string {
	st := fi.Syntax()
	seen := map[string]bool{}
	var out []string
	st.Descendants(st.Child(def, "body"), func(i int32) bool {
		if st.Kind(i) != "call" {
			return true
		}
		fn := st.Child(i, "function")
		if fn < 0 || st.Kind(fn) != "subscript" {
			return true
		}
		v := st.Child(fn, "value")
		if v >= 0 && st.Kind(v) == "identifier" {
			if name := st.Text(v); !seen[name] && topDefAt(st.Src(), name) >= 0 {
				seen[name] = true
				out = append(out, name)
			}
		}
		return true
	})
	return out
}

// topDefAt is the offset of name in a module-level `def name(` of src, or
// -1. (The file may have been parsed in part, without that statement.)
// Lines end in LF, CRLF or CR alike.
func topDefAt(src []byte, name string) int {
	for _, at := range resolve.WordAt(src, name) {
		ls := lineStartAny(src, at)
		head := strings.TrimPrefix(string(src[ls:at]), "async ")
		rest := strings.TrimLeft(string(src[at+len(name):min(len(src), at+len(name)+8)]), " \t")
		if strings.TrimRight(head, " \t") == "def" && head != "def" && strings.HasPrefix(rest, "(") {
			return at
		}
	}
	return -1
}

// lineStartAny is the offset where the line holding at begins.
func lineStartAny(src []byte, at int) int {
	return bytes.LastIndexAny(src[:at], "\r\n") + 1
}

// wordsAt lists the offsets in src where word occurs as a whole word
// (resolve.WordAt) on a line that is not a comment, and not as a string
// literal of the word alone.
func wordsAt(src []byte, word string) []int {
	var out []int
	for _, at := range resolve.WordAt(src, word) {
		end := at + len(word)
		if at > 0 && end < len(src) && (src[at-1] == '"' || src[at-1] == '\'') && src[end] == src[at-1] {
			continue // a string that is just the name: a profiler's kernel list, say
		}
		ls := lineStartAny(src, at)
		if bytes.HasPrefix(bytes.TrimLeft(src[ls:at], " \t"), []byte("#")) {
			continue
		}
		out = append(out, at)
	}
	return out
}
