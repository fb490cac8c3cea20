// Package templates holds the Go text/templates of every Python file mlagen
// emits. They live in their own package so that the binary embeds them and a
// reviewer finds the Python source in one place.
package templates

import "embed"

// FS holds every *.tmpl file of this directory.
//
//go:embed *.tmpl
var FS embed.FS
