package patches

import (
	"fmt"
)

// Job is one `mlagen patch` run on a directory.
type Job struct {
	Root string
	Options
	// Revert takes mlagen's changes out instead of putting them in.
	Revert bool
	// DryRun plans and proves but writes nothing; the outcome carries the
	// diff.
	DryRun bool
}

// Outcome is what a Job did: the report (proven from disk after writing,
// from the plan in a dry run) and, for a dry run, the unified diff.
type Outcome struct {
	Report *Report
	Diff   string
}

// Run is the patch workflow: read the checkout, plan (Patch or Revert), and
// unless it is a dry run write the changes all or nothing, then prove the
// result again from what is on disk, not from the plan. A Problem is the
// user's to fix (nothing was written); any other error is an I/O failure,
// after which the writer has restored the files it had written.
func Run(job Job) (*Outcome, error) {
	co, err := ScanCheckout(job.Root, job.Recipe)
	if err != nil {
		return nil, err
	}
	var res *Result
	if job.Revert {
		res, err = Revert(co, job.Options)
	} else {
		res, err = Patch(co, job.Options)
	}
	if err != nil {
		return nil, err
	}
	root, changes := rebase(co.Tree.Root, res.Changes)
	if job.DryRun {
		return &Outcome{Report: res.Report, Diff: UnifiedDiff(changes)}, nil
	}
	if err := (Writer{Root: root}).Apply(changes); err != nil {
		return nil, err
	}
	after, err := ScanCheckout(job.Root, job.Recipe)
	if err != nil {
		return nil, err
	}
	rep := res.Report
	if job.Revert {
		again, err := Revert(after, job.Options)
		if err != nil {
			return nil, err
		}
		if !again.Report.NothingToDo {
			rep.Problems = append(rep.Problems, "mlagen changes are still present after reverting")
		}
		return &Outcome{Report: rep}, nil
	}
	proof, err := Verify(after, Options{Recipe: job.Recipe, Module: rep.Module, Emitted: job.Emitted})
	if err != nil {
		return nil, fmt.Errorf("proof from disk after writing: %w", err)
	}
	proof.Command, proof.Changes, proof.NothingToDo = "patch", rep.Changes, rep.NothingToDo
	return &Outcome{Report: proof}, nil
}

// Check is `mlagen verify` (and `patch --check`): the proof alone, on the
// checkout under root as it is.
func Check(root string, opt Options) (*Report, error) {
	co, err := ScanCheckout(root, opt.Recipe)
	if err != nil {
		return nil, err
	}
	return Verify(co, opt)
}
