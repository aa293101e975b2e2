// SPDX-License-Identifier: Apache-2.0

package run

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The steps of one release: what each takes from the step before it, and
// where an interrupt stops them.

// The node image is what e2e-cluster writes into the file --ref-file
// names: a last line of its output is no answer, and a tool that ended
// well without writing one fails the step and starts no suite.
func TestNodeImageIsTheRefFileNotTheLastLine(t *testing.T) {
	root := t.TempDir()
	f := &fakeRun{noRef: true}
	var out bytes.Buffer
	c := Resolve(env("K8S_VERSION", "1.35", "UPGRADE", "0"), nil, root)
	err := pipeline(f, &out).Release(context.Background(), c)
	if want := "node image: e2e-cluster node-image ended well but left no reference in " + filepath.Join(root, "_output", "node-image.ref"); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	if want := []string{"e2e-cluster node-image 1.35"}; !slices.Equal(f.commands, want) {
		t.Errorf("commands %q, want %q", f.commands, want)
	}
}

// Ctrl-C while the run waits for the suite's compile beside it (after the
// driver image step) ends that compile, and no Ginkgo starts after it.
func TestNoGinkgoAfterAnInterruptedCompile(t *testing.T) {
	root := t.TempDir()
	ctx, interrupt := context.WithCancel(context.Background())
	f := &fakeRun{}
	var out bytes.Buffer
	driverStep := make(chan struct{})
	p := pipeline(f, &out)
	p.Stdout = &lineSignal{w: &out, line: "e2e: test driver image", seen: driverStep}
	p.compileSuite = func(context.Context, Config) string {
		<-driverStep
		interrupt()
		return ""
	}
	c := Resolve(env("K8S_VERSION", "1.35"), nil, root)
	err := p.Release(ctx, c)
	// The interrupt lands while the pipeline waits for the compile, or
	// just before it checks the context for that wait: either way the
	// step that does not start is the compile's or Ginkgo's.
	if err == nil || !(strings.Contains(err.Error(), "ginkgo: not started: interrupted") ||
		strings.Contains(err.Error(), "suite's compile: not started: interrupted")) {
		t.Errorf("error %v, want the suite's compile or ginkgo not started", err)
	}
	for _, cmd := range f.commands {
		if strings.HasPrefix(cmd, "ginkgo") {
			t.Errorf("Ginkgo ran after the interrupt: %q", f.commands)
		}
	}
}

// A pinned patch is no column of the matrix, but it is a release the run
// takes: it runs, and only the sign-off says it cannot judge it.
func TestE2ERunsAPatchTheMatrixHasNoColumnFor(t *testing.T) {
	root := t.TempDir()
	f := &fakeRun{}
	var out bytes.Buffer
	c := Resolve(env("K8S_VERSION", "1.35.4", "UPGRADE", "0"), nil, root)
	if code := pipeline(f, &out).E2E(context.Background(), c); code == ExitRefused {
		t.Errorf("exit %d (refused): %s", code, out.String())
	}
	if len(f.commands) < 2 || !strings.HasPrefix(f.commands[len(f.commands)-1], "ginkgo 1.35.4") {
		t.Errorf("commands %q, want the suite run for 1.35.4", f.commands)
	}
}
