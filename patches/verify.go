package patches

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
)

// Verify is the proof: it parses the tree as it is and resolves every
// reference to the old function and to the dispatcher. The tree is wired
// when every reference denotes the dispatcher (the dispatcher's own fallback
// call, inside its block, is the one that stays), the kernel module is
// beside it and, with SGLang's environ.py, the gate is registered there.
func Verify(t *Tree, opt Options) (*Report, error) {
	rec := opt.Recipe
	s, err := load(t, rec, false, opt.whole, opt.reuse)
	if err != nil {
		return nil, err
	}
	defer s.close()
	rep := &Report{Command: "verify", Gate: rec.Gate, Old: rec.Old, New: rec.Dispatcher,
		Scanned: len(t.paths), Parsed: s.parsed, NonUTF8: t.NonUTF8, Outside: t.Outside}
	mod := opt.Module
	if mod == "" {
		withBlock := s.blockFiles(partDispatcher)
		switch len(withBlock) {
		case 0:
		case 1:
			mod = withBlock[0]
		default:
			return nil, &Problem{Msg: fmt.Sprintf("%d modules hold an mlagen dispatcher; pick one with --module PATH:", len(withBlock)), Lines: withBlock}
		}
	}
	if mod == "" {
		mod, err = pickModule(s.definers(rec.Old), opt, rec)
		if err != nil {
			return nil, s.explain(err)
		}
	}
	mod = path.Clean(mod)
	if err := s.also(strings.TrimSuffix(path.Base(mod), ".py")); err != nil {
		return nil, err
	}
	ignored, err := s.syntaxCheck(rec.Old, rec.Dispatcher)
	if err != nil {
		return nil, err
	}
	rep.SyntaxIgnored = ignored
	rep.Parsed = s.parsed
	rep.Module = mod
	rep.KernelModule = kernelPath(rec, mod)
	fi := s.infos[mod]
	if fi == nil {
		return nil, &Problem{Msg: fmt.Sprintf("%s: no such Python file in the tree", mod)}
	}
	if !hasBlock(fi, partDispatcher) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s has no %s dispatcher (not patched)", mod, rec.Dispatcher))
	} else if defNode(fi, rec.Old) < 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s no longer defines %s, which the dispatcher falls back to", mod, rec.Old))
	}
	if k, ok := t.Files[rep.KernelModule]; !ok || !bytes.HasPrefix(k.Data, []byte(kernelHeader(rec))) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("kernel module %s is missing", rep.KernelModule))
	}
	if env := s.environ(); env != nil {
		rep.Environ = env.path
		if !env.envsHas {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: gate %s is not registered in class %s", env.path, rec.Gate, rec.EnvironClass))
		}
	}
	wired := s.r.references(val{path: mod, name: rec.Dispatcher}, false)
	missed := s.r.references(val{path: mod, name: rec.Old}, true)
	rep.Problems = append(rep.Problems, wired.conflicts...)
	rep.Problems = append(rep.Problems, missed.conflicts...)
	files := map[string]bool{}
	for _, st := range wired.sites {
		rep.Wired = append(rep.Wired, st.Ref)
		files[st.Path] = true
	}
	for _, st := range missed.sites {
		rep.Missed = append(rep.Missed, st.Ref)
	}
	rep.Review = missed.review
	rep.Files = len(files)
	return rep, nil
}

// Revert plans the removal of everything mlagen added: references renamed
// back, blocks removed with the line endings they brought, the kernel module
// deleted. On a tree mlagen patched, the result is the original bytes.
func Revert(t *Tree, opt Options) (*Result, error) {
	rec := opt.Recipe
	s, err := load(t, rec, false, opt.whole, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	mod := opt.Module
	if mod == "" {
		withBlock := s.blockFiles(partDispatcher)
		switch len(withBlock) {
		case 0:
		case 1:
			mod = withBlock[0]
		default:
			return nil, &Problem{Msg: fmt.Sprintf("%d modules hold an mlagen dispatcher; pick one with --module PATH:", len(withBlock)), Lines: withBlock}
		}
	}
	if _, err := s.syntaxCheck(rec.Dispatcher); err != nil {
		return nil, err
	}
	edits := map[string][]edit{}
	what := map[string][]string{}
	renamed := map[string]int{}
	rep := &Report{Command: "revert", Gate: rec.Gate, Old: rec.Old, New: rec.Dispatcher, Module: mod,
		Scanned: len(t.paths), Parsed: s.parsed, NonUTF8: t.NonUTF8, Outside: t.Outside}
	files := map[string]bool{}
	if mod != "" {
		refs := s.r.references(val{path: mod, name: rec.Dispatcher}, false)
		for _, st := range refs.sites {
			rep.Wired = append(rep.Wired, st.Ref)
			files[st.Path] = true
			if st.rename {
				edits[st.Path] = append(edits[st.Path], edit{start: int(st.start), end: int(st.end), text: rec.Old})
				renamed[st.Path]++
			}
		}
	}
	rep.Files = len(files)
	var paths []string
	for p, fi := range s.infos {
		if fi != nil && len(fi.blocks) > 0 {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		fi := s.infos[p]
		for _, b := range fi.blocks {
			start, end, err := b.removal(fi.st.src, p)
			if err != nil {
				return nil, &Problem{Msg: "cannot revert exactly:", Lines: []string{err.Error()}}
			}
			edits[p] = append(edits[p], edit{start: start, end: end})
			what[p] = append(what[p], b.part+" removed")
		}
	}
	var changes []Change
	for p, es := range edits {
		f := t.Files[p]
		changes = append(changes, Change{Path: p, Before: f.Data, After: applyEdits(f.Data, es), Mode: f.Mode})
	}
	if mod != "" {
		kp := kernelPath(rec, mod)
		if k, ok := t.Files[kp]; ok {
			if bytes.HasPrefix(k.Data, []byte(kernelHeader(rec))) {
				changes = append(changes, Change{Path: kp, Before: k.Data, Mode: k.Mode})
				what[kp] = append(what[kp], "kernel module")
			} else {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s was not written by mlagen; left in place", kp))
			}
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	for _, c := range changes {
		fc := FileChange{Path: c.Path, Action: "edit", What: strings.Join(what[c.Path], "; ")}
		if c.After == nil {
			fc.Action = "delete"
		}
		if n := renamed[c.Path]; n > 0 {
			if fc.What != "" {
				fc.What += "; "
			}
			fc.What += plural(n, "reference") + " restored"
		}
		rep.Changes = append(rep.Changes, fc)
	}
	rep.NothingToDo = len(changes) == 0
	// Proof: nothing of mlagen's is left in the result.
	if mod != "" && len(changes) > 0 {
		after, err := load(t.with(changes), rec, false, opt.whole, nil)
		if err != nil {
			return nil, fmt.Errorf("proof after reverting: %w", err)
		}
		defer after.close()
		left := after.r.references(val{path: mod, name: rec.Dispatcher}, false)
		for _, st := range left.sites {
			rep.Missed = append(rep.Missed, st.Ref)
		}
		for p, fi := range after.infos {
			if fi != nil && len(fi.blocks) > 0 {
				rep.Problems = append(rep.Problems, p+": an mlagen block is left")
			}
		}
	}
	return &Result{Changes: changes, Report: rep}, nil
}
