package patches

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mlagen/mlagen/patches/resolve"
)

// Revert plans the removal of everything mlagen added: references renamed
// back, blocks removed with the line endings they brought, the kernel module
// deleted and its RECORD line taken out. On a tree mlagen patched, the
// result is the original bytes.
func Revert(co *Checkout, opt Options) (*Result, error) {
	rec := opt.Recipe
	s, err := load(co, rec, resolve.Options{Whole: opt.whole})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := s.syntaxCheck(rec.Dispatcher); err != nil {
		return nil, err
	}
	mod, err := s.revertModule(opt.Module)
	if err != nil {
		return nil, err
	}
	if err := s.checkEdited("reverting"); err != nil {
		return nil, err
	}
	rep := &Report{Command: "revert", Gate: rec.Gate, Old: rec.Old, New: rec.Dispatcher, Module: mod,
		Scanned: len(co.Tree.Paths()), Parsed: s.Parsed(), NonUTF8: co.Tree.NonUTF8, Outside: co.Tree.Outside}
	es := newEditSet()
	var restored []resolve.Site
	if mod != "" {
		files := map[string]bool{}
		sites := s.References(resolve.Def(mod, rec.Dispatcher), false).Sites
		if fi := s.Info(mod); fi != nil && !hasBlock(fi, rec, partDispatcher) {
			// The dispatcher is gone (deleted by hand): the module's own
			// calls of it, renamed by patch, are unbound now.
			sites = append(sites, s.UnboundUses(mod, rec.Dispatcher)...)
		}
		sites = append(sites, s.throughReverted(mod).Sites...)
		restored = sites
		for _, site := range sites {
			files[site.Path] = true
			if site.Rename {
				es.add(site.Path, resolve.Edit{Start: site.Start, End: site.End, Text: rec.Old}, "")
				es.renamed[site.Path]++
			}
		}
		rep.Files = len(files)
	}
	for _, fi := range s.Infos() {
		for _, b := range blocksOf(fi, rec) {
			start, end, err := b.removal(fi.Syntax().Src(), fi.Path())
			if err != nil {
				return nil, &Problem{Msg: "cannot revert exactly:", Lines: []string{err.Error()}}
			}
			es.add(fi.Path(), resolve.Edit{Start: start, End: end}, partNames[b.part]+" removed")
		}
	}
	changes := es.changes(co.Tree)
	rep.Wired = restoredAt(restored, es, co.Tree, changes)
	if mod != "" {
		kernel, err := s.revertKernel(mod, rep, &es)
		if err != nil {
			return nil, err
		}
		changes = append(changes, kernel...)
	} else {
		// Reverted before (by an mlagen that left the bytecode): only the
		// compiled module can be left, beside a defining module.
		for _, m := range s.definers(rec.Old) {
			if kp := kernelPath(rec, m); co.Tree.Files[kp] == nil {
				changes = append(changes, s.kernelBytecode(kp, &es)...)
			}
		}
	}
	changes = inWriteOrder(changes, s.roles(mod, blockFileSet(s, partRoute), blockFileSet(s, partHeads)), true)
	if len(changes) == 0 && mod == "" && len(s.definers(rec.Old)) == 0 {
		// Neither SGLang's function nor any mlagen code: most likely the
		// wrong folder, which "nothing to revert" would pass off as done.
		return nil, &Problem{Msg: fmt.Sprintf("no module in this tree defines %s and it holds no mlagen code: is this SGLang's checkout or its installed sglang package? (nothing was written)", rec.Old)}
	}
	rep.Changes = es.describe(changes, "restored")
	rep.NothingToDo = len(changes) == 0
	if mod != "" && len(changes) > 0 {
		if err := proveReverted(co.with(changes), rec, mod, opt, rep); err != nil {
			return nil, err
		}
	}
	return &Result{Changes: changes, Report: rep}, nil
}

// restoredAt reports the restored references where they stand once the
// revert is written (each site moved by the edits before it in its file),
// not at the patched file's lines, which the removed blocks push down.
func restoredAt(sites []resolve.Site, es editSet, t *resolve.Tree, changes []Change) []Ref {
	after := map[string][]byte{}
	for _, c := range changes {
		after[c.Path] = c.After
	}
	var out []Ref
	for _, site := range sites {
		src, ok := after[site.Path]
		if !ok {
			out = append(out, site.Ref)
			continue
		}
		off := site.Start
		for _, e := range es.edits[site.Path] {
			if e.End <= site.Start {
				off += len(e.Text) - (e.End - e.Start)
			}
		}
		out = append(out, resolve.RefAt(site.Path, src, off, site.Kind))
	}
	return out
}

// throughReverted lists the references to the dispatcher's name in
// modules that no longer bind it but re-export mod's old function: the
// importers of a re-exporting module that an interrupted revert already
// turned back (they would raise ImportError). Renamed back, they reach the
// old function as before patching.
func (s *session) throughReverted(mod string) resolve.RefSet {
	old := resolve.Def(mod, s.rec.Old)
	return s.Find(resolve.Query{Names: []string{s.rec.Dispatcher}, Match: func(v resolve.Val) bool {
		return v.Name() == s.rec.Dispatcher && v.Path() != mod && s.Bound(v) == resolve.No && hasVal(s.Symbol(v.Path(), s.rec.Old), old)
	}}, false)
}

// revertModule is the defining module whose wiring revert takes out: the
// one given, the one holding the dispatcher, or, when no dispatcher is left
// (an interrupted run, a block deleted by hand), the defining module that
// still has mlagen's kernel module beside it or references to its
// dispatcher; "" when nothing of mlagen's wiring points at a module.
func (s *session) revertModule(given string) (string, error) {
	if given != "" {
		return s.givenModule(given)
	}
	switch withBlock := s.blockFiles(partDispatcher); len(withBlock) {
	case 0:
	case 1:
		return withBlock[0], nil
	default:
		return "", &Problem{Msg: fmt.Sprintf("%d modules hold an mlagen dispatcher; pick one with --module PATH:", len(withBlock)), Lines: withBlock}
	}
	var left []string
	for _, m := range s.definers(s.rec.Old) {
		k, ok := s.co.Tree.Files[kernelPath(s.rec, m)]
		if ok && bytes.HasPrefix(k.Data, []byte(kernelHeader(s.rec))) || len(s.References(resolve.Def(m, s.rec.Dispatcher), false).Sites) > 0 {
			left = append(left, m)
		}
	}
	switch len(left) {
	case 0:
		return "", nil
	case 1:
		return left[0], nil
	}
	return "", &Problem{Msg: fmt.Sprintf("%d modules have mlagen's kernel module or dispatcher references left; pick one with --module PATH:", len(left)), Lines: left}
}

// blockFileSet is the set of files that hold a block of part.
func blockFileSet(s *session, part string) map[string]bool {
	out := map[string]bool{}
	for _, f := range s.blockFiles(part) {
		out[f] = true
	}
	return out
}

// revertKernel deletes the kernel module mlagen wrote beside mod and takes
// it out of an installed SGLang's RECORD. One edited by hand since patch
// wrote it is refused, as patch refuses to replace it: deleting it would
// lose the edit.
func (s *session) revertKernel(mod string, rep *Report, es *editSet) ([]Change, error) {
	var out []Change
	kp := kernelPath(s.rec, mod)
	if k, ok := s.co.Tree.Files[kp]; ok {
		if bytes.HasPrefix(k.Data, []byte(kernelHeader(s.rec))) {
			body, digest, _ := installedBody(s.rec, k.Data)
			if why := s.editedKernel(mod, kp, k.Data, body, digest); why != "" {
				return nil, &Problem{Msg: fmt.Sprintf("%s was edited by hand after mlagen patch installed it (%s); reverting would delete the edit, so nothing was written", kp, why),
					Lines: []string{
						"to keep the edit: copy the file elsewhere, then delete it here and run mlagen patch --revert again (the copy without its " + installHead(digest) + " is a module mlagen patch --kernels DIR takes as DIR/sparse_mla_mma.py)",
						"to drop it: delete the file and run mlagen patch --revert again",
					}}
			}
			out = append(out, Change{Path: kp, Before: k.Data, Mode: k.Mode})
			es.note(kp, "kernel module")
			out = append(out, s.kernelBytecode(kp, es)...)
		} else {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s was not written by mlagen; left in place", kp))
		}
	} else {
		out = append(out, s.kernelBytecode(kp, es)...)
	}
	for _, r := range s.co.Records {
		if c := recordRemove(r, kp); c != nil {
			out = append(out, *c)
			es.note(c.Path, s.rec.KernelModule+" taken out")
			rep.Record = r.Path
		}
	}
	return out, nil
}

// kernelBytecode deletes what Python compiled of the kernel module at kp
// (its __pycache__ files), where revert deletes the module or it is gone
// already. Python never imports such a file without its source, but left
// behind it keeps the package's folder after pip uninstall, an empty
// package that still imports.
func (s *session) kernelBytecode(kp string, es *editSet) []Change {
	if contains(s.co.Tree.NonUTF8, kp) {
		return nil // a file of that name mlagen did not write
	}
	var out []Change
	prefix := resolve.JoinPath(resolve.DirOf(kp), "__pycache__") + "/"
	for p, f := range s.co.Bytecode {
		name, ok := strings.CutPrefix(p, prefix)
		if m, _ := path.Match(bytecodeGlob(path.Base(kp)), name); ok && m {
			out = append(out, Change{Path: p, Before: f.Data, Mode: f.Mode})
			es.note(p, "bytecode of the kernel module")
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// proveReverted checks that nothing of mlagen's is left in the result.
func proveReverted(after *Checkout, rec *Recipe, mod string, opt Options, rep *Report) error {
	s, err := load(after, rec, resolve.Options{Whole: opt.whole})
	if err != nil {
		return fmt.Errorf("proof after reverting: %w", err)
	}
	defer s.Close()
	for _, site := range s.References(resolve.Def(mod, rec.Dispatcher), false).Sites {
		rep.Missed = append(rep.Missed, site.Ref)
	}
	for _, fi := range s.Infos() {
		if len(blocksOf(fi, rec)) > 0 {
			rep.Problems = append(rep.Problems, fi.Path()+": an mlagen block is left")
		}
	}
	return nil
}
