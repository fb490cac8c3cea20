module github.com/mlagen/mlagen

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/sergi/go-diff v1.4.0
	github.com/smacker/go-tree-sitter v0.0.0-20240827094217-dd81d9e9be82
	github.com/spf13/pflag v1.1.0
	golang.org/x/sys v0.50.0
)

require golang.org/x/tools v0.52.0 // indirect
