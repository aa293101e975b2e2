// SPDX-License-Identifier: Apache-2.0

package matrix

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
)

// TestCellsCoverTheSuite runs the suite's own dry run for every column the
// matrix has and checks that the column's cells select each spec exactly
// once: none left out of the sign-off, none run twice. The specs come from
// Ginkgo (the tree differs by release and feature set), not from a list.
func TestCellsCoverTheSuite(t *testing.T) {
	columns, err := Columns("all", "all")
	if err != nil {
		t.Fatal(err)
	}
	suite := buildSuite(t)
	for _, col := range columns {
		t.Run(col.Key(), func(t *testing.T) {
			specs := dryRun(t, suite, col)
			if len(specs) == 0 {
				t.Fatalf("the dry run of %s listed no spec", col.Key())
			}
			cells, err := Cells([]Column{col}, "")
			if err != nil {
				t.Fatal(err)
			}
			if msg := coverage(specs, cells); msg != "" {
				t.Error(msg)
			}
			// The runner decides whether the upgrade spec runs from its
			// labels as e2e/labels lists them: they must be the spec's.
			rel, err := release.Resolve(col.Release, col.Features)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Sorted(slices.Values(labels.UpgradeSpec(rel)))
			for name, got := range specs {
				if strings.HasPrefix(name, "Upgrading the control plane") && !slices.Equal(slices.Sorted(slices.Values(got)), want) {
					t.Errorf("the upgrade spec's labels are %q, labels.UpgradeSpec says %q", got, want)
				}
			}
		})
	}
}

// coverage says which specs no cell or several cells select ("" when each
// is selected once).
func coverage(specs map[string][]string, cells []Cell) string {
	filters := make([]types.LabelFilter, len(cells))
	for i, c := range cells {
		f, err := types.ParseLabelFilter(c.Labels)
		if err != nil {
			return "cell " + c.Name + ": " + err.Error()
		}
		filters[i] = f
	}
	var missing, twice []string
	for name, labels := range specs {
		var by []string
		for i, f := range filters {
			if f(labels) {
				by = append(by, cells[i].Group)
			}
		}
		switch {
		case len(by) == 0:
			missing = append(missing, name+" "+labelList(labels))
		case len(by) > 1:
			twice = append(twice, name+" (cells "+strings.Join(by, ", ")+")")
		}
	}
	sort.Strings(missing)
	sort.Strings(twice)
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "no cell selects "+strings.Join(missing, "; "))
	}
	if len(twice) > 0 {
		msg = append(msg, "more than one cell selects "+strings.Join(twice, "; "))
	}
	return strings.Join(msg, "\n")
}

func labelList(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

func TestCoverageNamesWhatIsLeftOut(t *testing.T) {
	specs := map[string][]string{"a": {"authz"}, "b": {"Serial", "metrics"}, "c": {"Serial", "Disruptive", "toggle"}}
	cells := []Cell{{Name: "x parallel", Group: "parallel", Labels: "!Serial"}, {Name: "x serial", Group: "serial", Labels: "Serial && !metrics && !Disruptive"}}
	got := coverage(specs, cells)
	for _, want := range []string{"no cell selects", "b [Serial, metrics]", "c [Serial, Disruptive, toggle]"} {
		if !strings.Contains(got, want) {
			t.Errorf("coverage = %q, want it to name %q", got, want)
		}
	}
	cells = append(cells, Cell{Name: "x authz", Group: "authz", Labels: "authz"})
	if got := coverage(specs, cells); !strings.Contains(got, "more than one cell selects") {
		t.Errorf("coverage = %q, want an overlap named", got)
	}
}

func TestColumns(t *testing.T) {
	cols, err := Columns("1.33 1.36", "all")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cols {
		keys = append(keys, c.Key()+"="+c.Allocator)
	}
	if got, want := strings.Join(keys, ","), "1.33 defaults=structured (one implementation),1.36 defaults=incubating,1.36 stable=stable,1.36 alpha=incubating"; got != want {
		t.Errorf("columns = %s, want %s", got, want)
	}
	stable, err := Columns("all", "stable")
	if err != nil || len(stable) != 2 || stable[0].Key() != "1.36 stable" {
		t.Errorf("every release that lists stable: %v, %v", stable, err)
	}
	for _, bad := range [][2]string{{"1.32", "all"}, {"1.35.4", "all"}, {"1.33", "stable"}, {"1.36", "beta"}, {"all", "beta"}} {
		if _, err := Columns(bad[0], bad[1]); err == nil {
			t.Errorf("Columns(%q, %q) accepted", bad[0], bad[1])
		}
	}
	if _, err := Cells(cols, "authz || nosuchlabel"); err == nil {
		t.Error("a custom filter with an unknown label was accepted")
	}
}

// A dispatch may name a set a release lacks (the form offers every set
// beside every release): the columns that exist run, the others are left
// out and said, and only a request of which nothing is left is refused.
func TestAvailableLeavesOutAReleaseWithoutTheSet(t *testing.T) {
	cols, left, err := Available("1.33 1.36", "stable")
	if err != nil || len(cols) != 1 || cols[0].Key() != "1.36 stable" || len(left) != 1 || left[0].Why() != "1.33 has no stable set" {
		t.Errorf("Available(1.33 1.36, stable) = %v, %v, %v; want 1.36 stable, and 1.33 left out", cols, left, err)
	}
	if _, err := Columns("1.33 1.36", "stable"); err == nil {
		t.Error("Columns(1.33 1.36, stable) accepted: the runner refuses what it cannot run")
	}
	// Of all releases, each that lacks the set is said too.
	cols, left, err = Available("all", "stable")
	strict, serr := Columns("all", "stable")
	if err != nil || serr != nil || len(cols) != len(strict) || len(cols)+len(left) != len(release.Minors()) || !slices.Contains(left, LeftOut{"1.33", "stable"}) {
		t.Errorf("Available(all, stable) = %v, %v, %v; Columns %v, %v", cols, left, err, strict, serr)
	}
	for _, bad := range [][2]string{{"1.33", "stable"}, {"all", "beta"}, {"1.32 1.36", "stable"}} {
		if cols, left, err := Available(bad[0], bad[1]); err == nil {
			t.Errorf("Available(%q, %q) = %v, %v: accepted", bad[0], bad[1], cols, left)
		}
	}
	if _, _, err := Available("1.33", "stable"); err == nil || !strings.Contains(err.Error(), `Kubernetes 1.33 has no DRA feature set "stable": it lists defaults`) {
		t.Errorf("nothing left of 1.33 stable: %v", err)
	}
	var out strings.Builder
	if err := Print(&out, "table", "1.33 1.36", "stable", ""); err != nil || !strings.HasSuffix(out.String(), "1 columns, 3 cells\nleft out: 1.33 has no stable set\n") {
		t.Errorf("the table of 1.33 1.36 stable (%v):\n%s", err, out.String())
	}
	cells, err := Cells(cols[:1], "")
	if err != nil || cells[1].Artifact != "e2e-1.36-stable-serial" {
		t.Errorf("the artifact of a cell: %v, %v", cells, err)
	}
}

// suiteBinary is the suite compiled once for every test of the package
// (TestMain removes it).
var suiteBinary struct {
	once      sync.Once
	dir, path string
	out       []byte
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if suiteBinary.dir != "" {
		os.RemoveAll(suiteBinary.dir)
	}
	os.Exit(code)
}

// buildSuite compiles the suite binary (the e2e build tag, as make e2e
// builds it), once.
func buildSuite(t *testing.T) string {
	t.Helper()
	b := &suiteBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "e2e-suite-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "e2e.test")
		cmd := exec.Command("go", "test", "-c", "-tags", "e2e", "-o", b.path, ".")
		cmd.Dir = ".."
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("building the suite: %v\n%s", b.err, b.out)
	}
	return b.path
}

// dryRun lists the column's specs with their labels, as Ginkgo's dry run
// of the suite binary reports them.
func dryRun(t *testing.T, suite string, col Column) map[string][]string {
	t.Helper()
	specs := map[string][]string{}
	for _, s := range dryRunSpecs(t, suite, col) {
		specs[s.FullText()] = s.Labels()
	}
	return specs
}

// dryRunSpecs are the column's specs (Its) as Ginkgo's dry run of the
// suite binary reports them, with the suite's and Ginkgo's flags args
// added: those a label filter leaves out are skipped, the others passed.
func dryRunSpecs(t *testing.T, suite string, col Column, args ...string) []types.SpecReport {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dry.json")
	// The column's run, resolved as the runner resolves it, on a cluster
	// the suite would make.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"K8S_VERSION": col.Release, "FEATURES": col.Features, "PROFILE": "default", "CLUSTER_NAME": "dra-e2e", "NODE_IMAGE": "auto"}
	r, err := resolved.New(resolved.Inputs{Get: func(name string) string { return vars[name] }, Root: root, Output: t.TempDir(), Artifacts: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	runFile, err := resolved.Write(r.Layout.Artifacts, r)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(suite, append([]string{"--ginkgo.dry-run", "--ginkgo.json-report=" + out, "--run=" + runFile}, args...)...)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dry run of %s %q: %v\n%s", col.Key(), args, err, tail(string(b)))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		t.Fatal(err)
	}
	var specs []types.SpecReport
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType == types.NodeTypeIt {
				specs = append(specs, s)
			}
		}
	}
	return specs
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
