// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The suite gets make e2e's variables as its resolved run and Ginkgo's
// flags; a filter that is not given is not passed (an empty filter would
// select nothing).
func TestSuiteArgs(t *testing.T) {
	t.Setenv("LABELS", "authz || allocation")
	t.Setenv("FOCUS", "")
	t.Setenv("DRIVER", "gpu.example.com")
	t.Setenv("ADMIN_CHECK", `nvidia-smi -L`)
	t.Setenv("FEATURES", "alpha")
	args := suiteArgs("/results/1.35/run.json", "/results/1.35")
	for _, want := range []string{"--run=/results/1.35/run.json", "-ginkgo.label-filter=authz || allocation",
		"-ginkgo.junit-report=/results/1.35/junit.xml", "-ginkgo.fail-on-empty",
		// Its own default: one process takes longer.
		"-ginkgo.timeout=90m"} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %q: %v", want, args)
		}
	}
	for _, a := range args {
		if a == "-ginkgo.focus=" || strings.HasPrefix(a, "--release") || strings.HasPrefix(a, "--node-image") || strings.HasPrefix(a, "--keep-cluster") {
			t.Errorf("%s was passed: an empty focus, or a flag the run holds", a)
		}
	}
	r, err := resolveRun("1.35", "/tmp/kc", "/results/1.35", "gpu-class")
	if err != nil {
		t.Fatal(err)
	}
	// The kubeconfig names the cluster; an existing cluster has no upgrade.
	if r.Given != "1.35" || r.Features != "alpha" || r.Profile != "default" || r.Cluster.Kubeconfig != "/tmp/kc" || r.Cluster.Name != "in-cluster" ||
		r.Layout.Artifacts != "/results/1.35" || r.Driver.Vendor == nil || r.Driver.Vendor.Name != "gpu.example.com" ||
		r.Driver.Vendor.DeviceClass != "gpu-class" || r.Driver.Vendor.AdminCheck != "nvidia-smi -L" || r.Upgrade.Runs || !r.Upgrade.Declared {
		t.Errorf("resolved %+v", r)
	}
}

// DEVICE_CLASS=a,b is one run per class, each in a folder of its own.
func TestClassRuns(t *testing.T) {
	if got := classRuns("/r", "1.35", "gpu"); !slices.Equal(got, []classRun{{"gpu", "/r/1.35"}}) {
		t.Errorf("one class: %v", got)
	}
	if got := classRuns("/r", "1.35", "a, b"); !slices.Equal(got, []classRun{{"a", "/r/classes/a/1.35"}, {"b", "/r/classes/b/1.35"}}) {
		t.Errorf("two classes: %v", got)
	}
}

// The archive Sonobuoy collects holds every result file, by its path.
func TestPackDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "1.35"), 0o755)
	os.WriteFile(filepath.Join(dir, "1.35", "junit.xml"), []byte("<testsuites/>"), 0o644)
	os.WriteFile(filepath.Join(dir, "signoff.md"), []byte("# x"), 0o644)
	if err := tellSonobuoy(dir); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "results.tar.gz"))
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if done, _ := os.ReadFile(filepath.Join(dir, "done")); string(done) != filepath.Join(dir, "results.tar.gz") {
		t.Errorf("done names %q", done)
	}
	if !slices.Equal(names, []string{"1.35/junit.xml", "signoff.md"}) {
		t.Errorf("archive holds %v", names)
	}
}
