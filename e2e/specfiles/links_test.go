// SPDX-License-Identifier: Apache-2.0

package specfiles

import (
	"go/build"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kep5018/adminaccess-conformance/"

// links are the module's own packages that pkg links, with the e2e build
// tag and for this platform, pkg's tests included (go list -deps -test,
// restricted to the module):
// read from the sources' import lines with go/build, so the test compiles
// nothing. No package outside the module imports one of it.
func links(t *testing.T, root, pkg string) []string {
	t.Helper()
	ctx := build.Default
	ctx.BuildTags = append(slices.Clone(ctx.BuildTags), "e2e")
	seen := map[string]bool{}
	queue := []string{pkg}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		p, err := ctx.ImportDir(filepath.Join(root, strings.TrimPrefix(path, module)), 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		imports := p.Imports
		if path == pkg {
			// The suite binary is e2e's test binary (e2e_test.go).
			imports = slices.Concat(imports, p.TestImports, p.XTestImports)
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, module) {
				queue = append(queue, imp)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// The suite binary (the e2e entry and its specs) and the in-cluster entry
// read the resolved run (e2e/resolved; the in-cluster entry resolves it
// from the variables' table, e2e/variables) and never link the runner
// (e2e/run): it carries the pipeline (images, push, kind's node images),
// which neither runs, and its checks reach into all of it. A package that
// imports e2e/run, or anything that does, fails here.
func TestTheSuiteDoesNotLinkTheRunner(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"e2e", "e2e/adminaccess", "e2e/cmd/incluster"} {
		got := links(t, root, module+pkg)
		// The walk is not empty: each reads the resolved run.
		if !slices.Contains(got, module+"e2e/resolved") {
			t.Errorf("%s does not link e2e/resolved: the walk of its imports went wrong (%v)", pkg, got)
		}
		if slices.Contains(got, module+"e2e/run") {
			t.Errorf("%s links the runner, e2e/run: read the variables from e2e/variables (go list -deps -tags e2e ./%s shows the path)", pkg, pkg)
		}
	}
}
