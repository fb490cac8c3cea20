package patches

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// A tree the user cannot read is an input error (exit 2) naming the file;
// a folder the user cannot write is named with the way round, instead of
// the temporary file the writer tried to create.
func TestPermissionErrorsExplained(t *testing.T) {
	denied := func(op, p string) error {
		return fmt.Errorf("scan: %w", &fs.PathError{Op: op, Path: p, Err: fs.ErrPermission})
	}
	var re *RootError
	if err := unreadable(denied("open", "/t/sglang/srt/environ.py")); !errors.As(err, &re) || !strings.Contains(re.Msg, "cannot read /t/sglang/srt/environ.py (permission denied)") || !strings.Contains(re.Msg, "with sudo") {
		t.Errorf("unreadable file: %v", err)
	}
	if err := notWritable(denied("open", "/t/..mlagen-journal.mlagen-1-1")); err == nil || !strings.Contains(err.Error(), "the folder /t is not writable by this user") || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("unwritable folder: %v", err)
	}
	other := errors.New("disk full")
	if unreadable(other) != other || notWritable(other) != other {
		t.Errorf("other errors are changed")
	}
}
