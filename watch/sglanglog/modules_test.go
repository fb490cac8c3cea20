package sglanglog

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The kernel lines come from the shipped modules' own f-strings: rendered
// with a call's values, each module's lines must read as what they say,
// the heads included. A change of wording on either side fails here, not
// in a deployment whose watch no longer sees the kernel run.
func TestShippedModulesKernelLines(t *testing.T) {
	files, _ := filepath.Glob("../../kernels/*/sparse_mla_mma.py")
	if len(files) < 6 {
		t.Fatalf("found %d shipped modules, want the six targets'", len(files))
	}
	fstring := func(src, fn string) string {
		m := regexp.MustCompile(`(?m)^def ` + fn + `\(.*\n(?:    #.*\n)*    return f"(.*)"$`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("no `return f\"...\"` in def %s", fn)
		}
		return m[1]
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		target := regexp.MustCompile(`(?m)^TARGET = "(.*)"$`).FindStringSubmatch(src)
		if target == nil {
			t.Fatalf("%s: no TARGET", file)
		}
		values := strings.NewReplacer("{entry}", "whole call", "{TARGET}", target[1], "{name}", "pp_h16_t32_k4_w4_s1",
			"{heads}", "16", "{reason}", "supports_full() refused: page size 128")
		ran, ok := MatchKernel(values.Replace(fstring(src, "_served")))
		if want := (KernelLine{Ran: true, Entry: "whole call", Target: target[1], Config: "pp_h16_t32_k4_w4_s1", Heads: 16}); !ok || ran != want {
			t.Errorf("%s: _served reads as %+v, %v; want %+v", file, ran, ok, want)
		}
		fell, ok := MatchKernel(values.Replace(fstring(src, "_not_served")))
		if want := (KernelLine{Entry: "whole call", Reason: "supports_full() refused: page size 128"}); !ok || fell != want {
			t.Errorf("%s: _not_served reads as %+v, %v; want %+v", file, fell, ok, want)
		}
	}
}
