// SPDX-License-Identifier: Apache-2.0

package variables

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
)

// variablesPage is the page whose table of variables is Markdown's output,
// from the repository's root.
const variablesPage = "docs/variables.md"

// pageRow is one row of docs/variables.md's table of variables.
type pageRow struct {
	names                []string
	shown, meaning, line string
}

// pageVariables parses the table under "| variable | default | meaning |"
// in docs/variables.md: cells split at each | that markdown does not escape.
func pageVariables(t *testing.T) []pageRow {
	t.Helper()
	data, err := os.ReadFile("../../" + variablesPage)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := slices.Index(lines, "| variable | default | meaning |")
	if start < 0 || start+1 >= len(lines) || lines[start+1] != "|---|---|---|" {
		t.Fatal(variablesPage + " has no table headed | variable | default | meaning |")
	}
	unescaped := regexp.MustCompile(`[^\\]\|`)
	name := regexp.MustCompile("^`([A-Z0-9_]+)`$")
	var rows []pageRow
	for _, line := range lines[start+2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |")
		var cells []string
		for {
			loc := unescaped.FindStringIndex(inner)
			if loc == nil {
				cells = append(cells, inner)
				break
			}
			cells = append(cells, strings.TrimSpace(inner[:loc[0]+1]))
			inner = strings.TrimSpace(inner[loc[1]:])
		}
		if len(cells) != 3 {
			t.Fatalf("%s: a row of the variables' table without three cells: %s", variablesPage, line)
		}
		row := pageRow{shown: cells[1], meaning: cells[2], line: line}
		for _, n := range strings.Split(cells[0], ", ") {
			m := name.FindStringSubmatch(n)
			if m == nil {
				t.Fatalf("%s: %q in the variables' table is no `NAME`: %s", variablesPage, n, line)
			}
			row.names = append(row.names, m[1])
		}
		rows = append(rows, row)
	}
	return rows
}

// docs/variables.md's table lists exactly the table's variables, in its
// order, each with its default and meaning: the page's table is what `go run
// ./e2e/cmd/run variables` (make variables) prints, so a variable is added,
// renamed or explained in variables.go alone.
func TestTheVariablesPageListsEveryVariableWithItsDefault(t *testing.T) {
	rows := pageVariables(t)
	var listed []string
	for _, r := range rows {
		listed = append(listed, r.names...)
	}
	var table []string
	for _, v := range Variables {
		table = append(table, v.Name)
	}
	if !slices.Equal(listed, table) {
		t.Fatalf("%s lists the variables\n  %v\nthe table (e2e/variables/variables.go) has\n  %v\n(make variables prints the page's table)", variablesPage, listed, table)
	}
	for _, r := range rows {
		for _, n := range r.names {
			v, _ := Lookup(n)
			if r.shown != v.shown() {
				t.Errorf("%s: %s's default is %s, the table's %s", variablesPage, n, r.shown, v.shown())
			}
			if r.meaning != v.Meaning {
				t.Errorf("%s: %s's meaning differs from the table's:\n  page:  %s\n  table: %s", variablesPage, n, r.meaning, v.Meaning)
			}
		}
	}
	if got := strings.Join(pageTable(t), "\n") + "\n"; got != Markdown() {
		t.Errorf("%s's table is not the one the table renders (make variables prints it)", variablesPage)
	}
}

func pageTable(t *testing.T) []string {
	out := []string{"| variable | default | meaning |", "|---|---|---|"}
	for _, r := range pageVariables(t) {
		out = append(out, r.line)
	}
	return out
}

// Each variable is one row of the table, with what a row must have; a
// Ginkgo flag belongs to one variable only.
func TestTheTableIsWhole(t *testing.T) {
	names, flags := map[string]bool{}, map[string]string{}
	for _, v := range Variables {
		if names[v.Name] {
			t.Errorf("%s is in the table twice", v.Name)
		}
		names[v.Name] = true
		if v.Meaning == "" {
			t.Errorf("%s has no meaning", v.Name)
		}
		if v.Default == "" && v.Shown == "" {
			t.Errorf("%s shows no default: give Shown (\"—\" for none)", v.Name)
		}
		if v.Ginkgo == "" {
			continue
		}
		if other, ok := flags[v.Ginkgo]; ok {
			t.Errorf("%s and %s both set Ginkgo's --%s", other, v.Name, v.Ginkgo)
		}
		flags[v.Ginkgo] = v.Name
	}
}

// The Job carries the variables that change what the suite checks or how
// it judges it: every one it carried when they were listed in
// e2e/suitejob, and none the runner alone reads (a new variable is the
// Job's by its row's Job: true, which this test needs no word of).
func TestJobVariables(t *testing.T) {
	carried := []string{"K8S_VERSION", "FEATURES", "PROFILE", "LABELS", "FOCUS", "SKIP", "TIMEOUT",
		"TESTDRIVER_IMAGE", "DRIVER", "DEVICE_CLASS", "DRIVER_NAMESPACE", "WORKLOAD_IMAGE", "ADMIN_CHECK", "CLUSTER_NAME"}
	runnerOnly := []string{"K8S_VERSIONS", "REGISTRY", "REGISTRY_PORT", "SUITE_IMAGE", "KEEP", "DEBIAN_MIRROR", "KEEP_CLUSTER",
		"NODE_IMAGE", "UPGRADE", "UPGRADE_NODE_IMAGE", "KUBECONFIG", "KUBECONTEXT", "PROCS", "ARTIFACTS", "GINKGO_ARGS", "BENCH_REPEAT"}
	got := JobVariables()
	for _, name := range carried {
		if !slices.Contains(got, name) {
			t.Errorf("the Job no longer carries %s", name)
		}
	}
	for _, name := range runnerOnly {
		if slices.Contains(got, name) {
			t.Errorf("the Job carries %s, which only the runner reads", name)
		}
	}
}

// The in-cluster entry's Ginkgo flags: the Job's variables only, as a
// compiled suite spells them, no filter that is not given.
func TestJobFlags(t *testing.T) {
	values := map[string]string{"LABELS": "authz", "PROCS": "4"}
	get := func(name string) string { return values[name] }
	job := func(v Variable) bool { return v.Job }
	flags := GinkgoFlags(get, "-ginkgo.", job)
	for _, f := range flags {
		if strings.Contains(f, "procs") || f == "-ginkgo.focus=" {
			t.Errorf("%s is no flag of the Job's variables", f)
		}
	}
	if !slices.Contains(flags, "-ginkgo.label-filter=authz") {
		t.Errorf("%q", flags)
	}
}

// CLUSTER_NAME's default is the one e2e-cluster and kind's helpers use.
func TestDefaultClusterNameIsKinds(t *testing.T) {
	if DefaultClusterName != kindcluster.DefaultName {
		t.Errorf("CLUSTER_NAME's default %q, kindcluster.DefaultName %q", DefaultClusterName, kindcluster.DefaultName)
	}
}
