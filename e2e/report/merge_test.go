// SPDX-License-Identifier: Apache-2.0

package report

import (
	"strings"
	"testing"
)

func TestMergeTakesEachSpecFromTheCellThatRanIt(t *testing.T) {
	meta := Meta{Release: "1.35", SuiteCommit: "abc", NodeImageID: "sha256:1", Allocator: "incubating"}
	core, metrics := meta, meta
	core.LabelFilter, metrics.LabelFilter = "authz", "metrics"
	a := Report{Meta: core, Seconds: 60, Specs: []Spec{
		{Name: "authz denies", State: "passed"}, {Name: "metrics count", State: "not selected"}, {Name: "lock", State: "not selected"}}}
	b := Report{Meta: metrics, Seconds: 30, Specs: []Spec{
		{Name: "authz denies", State: "not selected"}, {Name: "metrics count", State: "failed", Reason: "x"}, {Name: "lock", State: "not selected"}}}
	m, err := Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals != (Totals{Passed: 1, Failed: 1, NotSelected: 1}) || m.Seconds != 90 {
		t.Fatalf("totals %+v, seconds %v", m.Totals, m.Seconds)
	}
	if m.LabelFilter != "(authz) || (metrics)" || !strings.Contains(m.Selection(), "partial: 2 of 3 specs") {
		t.Errorf("filter %q, selection %q", m.LabelFilter, m.Selection())
	}
	c := Report{Meta: meta, Specs: []Spec{{Name: "lock", State: "skipped", Declared: "gate-lock"}}}
	full, _ := Merge(a, b, c)
	if full.Selection() != "" || full.Totals.NotSelected != 0 {
		t.Errorf("every spec ran in some cell: %q %+v", full.Selection(), full.Totals)
	}
	other := Report{Meta: Meta{Release: "1.35", SuiteCommit: "def", NodeImageID: "sha256:1", Allocator: "incubating"}}
	if m, _ := Merge(a, other); len(m.Problems) != 1 || !strings.Contains(m.Problems[0], "suite commit") {
		t.Errorf("cells of different commits: %v", m.Problems)
	}
	if _, err := Merge(a, Report{Meta: Meta{Release: "1.36"}}); err == nil {
		t.Error("two releases cannot merge")
	}
	// Another DRA feature set is another column (another allocator), never
	// a conflict within one; a report that names no set ran the defaults.
	stable := Report{Meta: meta}
	stable.Features = "stable"
	if _, err := Merge(a, stable); err == nil || !strings.Contains(err.Error(), "1.35 stable") {
		t.Errorf("two feature sets cannot merge: %v", err)
	}
	defaults := Report{Meta: meta}
	defaults.Features = "defaults"
	if _, err := Merge(a, defaults); err != nil {
		t.Errorf("an unnamed set is the defaults: %v", err)
	}
}

// Cells of one column that booted different Kubernetes versions are one
// column with a suite problem, as another node image is: the sign-off must
// not name one patch for specs another ran.
func TestMergeFlagsCellsOfAnotherVersion(t *testing.T) {
	meta := Meta{Release: "1.38", Version: "1.38.0-beta.0", SuiteCommit: "abc"}
	other := meta
	other.Version = "1.38.0-rc.0"
	m, err := Merge(Report{Meta: meta}, Report{Meta: meta})
	if err != nil || len(m.Problems) != 0 || m.Version != "1.38.0-beta.0" {
		t.Fatalf("one version: %q %v %v", m.Version, m.Problems, err)
	}
	m, err = Merge(Report{Meta: meta}, Report{Meta: other})
	if err != nil || len(m.Problems) != 1 || m.Problems[0] != `merged reports differ in Kubernetes version: "1.38.0-beta.0" and "1.38.0-rc.0"` {
		t.Errorf("two versions: %v %v", m.Problems, err)
	}
}
