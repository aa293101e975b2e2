// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// column is a whole run of one column in which every requirement's one
// spec passed, less the changes given by requirement index.
func column(release, allocator string, change map[int]report.Spec) report.Report {
	r := report.Report{Meta: report.Meta{Release: release, Allocator: allocator}}
	for i, q := range requirements.All {
		s := report.Spec{Name: q.ID, KEP: q.Text, State: "passed"}
		if c, ok := change[i]; ok {
			s = c
			s.Name, s.KEP = q.ID, q.Text
		}
		r.Specs = append(r.Specs, s)
		switch s.State {
		case "passed":
			r.Totals.Passed++
		case "failed":
			r.Totals.Failed++
		case "skipped":
			r.Totals.Skipped++
		case report.KnownDefect:
			r.Totals.KnownDefects++
		}
	}
	return r
}

func document(runs ...report.Report) Document {
	return Build(runs, byRelease).Document()
}

var defect = report.Spec{State: report.KnownDefect, Defect: "kubernetes/kubernetes#140729", Reason: "known upstream defect: Insufficient counters"}

// Each kind of change is said once, in the column it happened in: a
// column added and one gone (not a move of each of their requirements), a
// column that lost its sign-off and one whose allocator changed, verdicts
// that moved (with the newer cell's reason), and defects that appeared in
// one column and expired in another.
func TestCompareSaysWhatChanged(t *testing.T) {
	older := document(
		column("1.33", "stable", nil),
		column("1.35", "incubating", nil),
		column("1.36", "incubating", map[int]report.Spec{20: defect}),
	)
	failed := report.Spec{State: "failed", Reason: "expected 422, got 201\nmore lines"}
	notApplicable := report.Spec{State: "skipped", Declared: "gate-switching", Reason: "the gate is locked"}
	newer := document(
		column("1.35", "incubating", map[int]report.Spec{2: failed, 3: notApplicable, 21: defect}),
		column("1.36", "experimental", nil),
		column("1.37", "incubating", nil),
	)
	d := Compare(older, newer)

	if !d.OldSignedOff || d.NewSignedOff {
		t.Errorf("signed off: old %v, new %v; want true, false", d.OldSignedOff, d.NewSignedOff)
	}
	keys := func(cs []ColumnDoc) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Key)
		}
		return out
	}
	if got := keys(d.ColumnsAdded); !reflect.DeepEqual(got, []string{"1.37 defaults"}) {
		t.Errorf("columns added %v", got)
	}
	if got := keys(d.ColumnsGone); !reflect.DeepEqual(got, []string{"1.33 defaults"}) {
		t.Errorf("columns gone %v", got)
	}
	if len(d.ColumnsChanged) != 2 {
		t.Fatalf("columns changed %+v", d.ColumnsChanged)
	}
	if c := d.ColumnsChanged[0]; c.Key != "1.35 defaults" || !c.OldSignedOff || c.NewSignedOff || c.Why[0] != "1 failed" || c.OldAllocator != c.NewAllocator {
		t.Errorf("1.35 %+v", c)
	}
	if c := d.ColumnsChanged[1]; c.Key != "1.36 defaults" || c.OldAllocator != "incubating" || c.NewAllocator != "experimental" || c.OldSignedOff != c.NewSignedOff {
		t.Errorf("1.36 %+v", c)
	}
	// In the list's order, then the columns'.
	want := []VerdictMove{
		{Requirement: requirements.All[2].ID, Column: "1.35 defaults", Was: "passed", Now: "failed", Reasons: []string{requirements.All[2].ID + ": expected 422, got 201"}},
		{Requirement: requirements.All[3].ID, Column: "1.35 defaults", Was: "passed", Now: NotApplicable, Reasons: []string{"declared (gate-switching): the gate is locked"}},
		{Requirement: requirements.All[20].ID, Column: "1.36 defaults", Was: report.KnownDefect, Now: "passed"},
		{Requirement: requirements.All[21].ID, Column: "1.35 defaults", Was: "passed", Now: report.KnownDefect, Reasons: []string{"known upstream defect: Insufficient counters"}},
	}
	if !reflect.DeepEqual(d.Moves, want) {
		t.Errorf("moves\n%+v\nwant\n%+v", d.Moves, want)
	}
	url := "https://github.com/kubernetes/kubernetes/issues/140729"
	if want := []DefectInColumn{{"kubernetes/kubernetes#140729", url, "1.35 defaults"}}; !reflect.DeepEqual(d.DefectsAppeared, want) {
		t.Errorf("defects appeared %+v", d.DefectsAppeared)
	}
	if want := []DefectInColumn{{"kubernetes/kubernetes#140729", url, "1.36 defaults"}}; !reflect.DeepEqual(d.DefectsExpired, want) {
		t.Errorf("defects expired %+v", d.DefectsExpired)
	}

	md := d.Markdown()
	for _, line := range []string{
		"- added: 1.37 defaults (allocator incubating), signed off",
		"- gone: 1.33 defaults (allocator stable) (was signed off)",
		"- 1.35 defaults: signed off → not signed off (1 failed); requirements ",
		"- 1.36 defaults: allocator incubating → experimental",
		"| " + requirements.All[2].ID + " | 1.35 defaults | passed | failed | " + requirements.All[2].ID + ": expected 422, got 201 |",
		"| " + requirements.All[3].ID + " | 1.35 defaults | passed | not applicable | declared (gate-switching): the gate is locked |",
		"- appeared: [kubernetes/kubernetes#140729](" + url + ") in 1.35 defaults",
		"- expired: [kubernetes/kubernetes#140729](" + url + ") in 1.36 defaults (no longer met there)",
	} {
		if !strings.Contains(md, line) {
			t.Errorf("the diff lacks %q:\n%s", line, md)
		}
	}
	if strings.Contains(md, "1.37 defaults | ") || strings.Contains(md, "1.33 defaults | ") {
		t.Errorf("a column added or gone is listed requirement by requirement:\n%s", md)
	}
}

func TestCompareOfASignOffWithItselfIsUnchanged(t *testing.T) {
	d := document(column("1.35", "incubating", nil), column("1.36", "incubating", map[int]report.Spec{20: defect}))
	diff := Compare(d, d)
	if !diff.Unchanged() {
		t.Fatalf("changes %+v", diff)
	}
	if md := diff.Markdown(); md != "**Sign-off: signed off, as before.**\n\nNo column, requirement verdict or known upstream defect changed.\n" {
		t.Fatalf("markdown %q", md)
	}
}

// The overall verdict leads, and a new row of the list is named, not
// counted as a move.
func TestCompareVerdictAndNewRequirement(t *testing.T) {
	older := document(column("1.35", "incubating", map[int]report.Spec{0: {State: "failed", Reason: "no nodes"}}))
	// An older sign-off without the last requirement of the list.
	older.Requirements = older.Requirements[:len(older.Requirements)-1]
	newer := document(column("1.35", "incubating", nil))
	d := Compare(older, newer)
	last := requirements.All[len(requirements.All)-1].ID
	if !reflect.DeepEqual(d.RequirementsAdded, []string{last}) || len(d.RequirementsGone) != 0 {
		t.Fatalf("requirements added %v, gone %v", d.RequirementsAdded, d.RequirementsGone)
	}
	md := d.Markdown()
	if !strings.HasPrefix(md, "**Sign-off: not signed off → signed off.** Now: Signed off") || !strings.Contains(md, "- new requirement: "+last+"\n") {
		t.Fatalf("markdown:\n%s", md)
	}
}

// A signoff.json of another schema version is refused rather than
// compared field by field.
func TestReadDocumentRefusesAnotherSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	doc := document(column("1.35", "incubating", nil))
	for _, c := range []struct {
		version int
		ok      bool
	}{{JSONSchemaVersion, true}, {JSONSchemaVersion + 1, false}} {
		doc.SchemaVersion = c.version
		data, _ := json.Marshal(doc)
		path := filepath.Join(dir, "signoff.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadDocument(path)
		if (err == nil) != c.ok {
			t.Errorf("schema version %d: error %v", c.version, err)
		}
	}
}
