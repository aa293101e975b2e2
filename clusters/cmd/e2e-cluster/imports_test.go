// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/kep5018/adminaccess-conformance/"

// ARCHITECTURE.md's rule, kept: no package under clusters/ or testdriver/,
// nor its tests, imports Ginkgo, directly or through another package. The
// cluster tool, the node images and the driver are the suite's tools, not
// its specs; a copy of a spec's labels once made clusters/ import it.
func TestNoGinkgoUnderClustersOrTestdriver(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}",
		"./clusters/...", "./testdriver/...")
	cmd.Dir = filepath.Join("..", "..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct{ imports, deps []string }
	pkgs := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("go list wrote %q", line)
		}
		pkgs[f[0]] = pkg{strings.Fields(f[1]), strings.Fields(f[2])}
	}
	ginkgo := func(path string) bool { return strings.HasPrefix(path, "github.com/onsi/ginkgo") }
	// through is the first of p's own imports that is Ginkgo or leads to it.
	through := func(p pkg) string {
		for _, imp := range p.imports {
			if ginkgo(imp) {
				return imp
			}
			for _, d := range pkgs[imp].deps {
				if ginkgo(d) {
					return imp
				}
			}
		}
		return "?"
	}
	checked := 0
	for path, p := range pkgs {
		if !strings.HasPrefix(path, module+"clusters/") && !strings.HasPrefix(path, module+"testdriver/") {
			continue
		}
		checked++
		for _, d := range p.deps {
			if ginkgo(d) {
				t.Errorf("%s imports %s (through %s): clusters/ and testdriver/ import no Ginkgo", path, d, through(p))
				break
			}
		}
	}
	if checked < 20 {
		t.Errorf("go list named %d packages under clusters/ and testdriver/: the check sees too few", checked)
	}
}
