// Package kernels holds the emitted, checked-in kernel directories. Its Go
// side only embeds each directory's measured selection.json, so that a
// binary built from this tree renders the same sparse_mla_mma.py that
// kernels/<target>/ holds, wherever it runs (mlagen patch uses it).
package kernels

import (
	"embed"
	"errors"
	"io/fs"
)

//go:embed */selection.json
var selections embed.FS

// Selection returns the measured selection.json of kernels/<dir>, or
// ok=false when that target has none.
func Selection(dir string) (data []byte, ok bool, err error) {
	data, err = selections.ReadFile(dir + "/selection.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}
