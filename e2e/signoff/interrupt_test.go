// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// interruptedRun is what the suite reports for a run Ctrl-C stopped, as
// Ginkgo hands it over: one spec per requirement, the first passed, the
// next four stopped mid-run (SpecStateInterrupted), the rest never started
// (skipped, no message); extra specs are added after them.
func interruptedRun(extra ...types.SpecReport) report.Report {
	var specs types.SpecReports
	for i, q := range requirements.All {
		s := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "checks " + q.ID, State: types.SpecStateSkipped,
			ReportEntries: []types.ReportEntry{{Name: report.KEPEntry, Value: types.WrapEntryValue(q.Text)}}}
		switch {
		case i == 0:
			s.State = types.SpecStatePassed
		case i <= 4:
			s.State, s.Failure = types.SpecStateInterrupted, types.Failure{Message: "Interrupted by User"}
		}
		specs = append(specs, s)
	}
	return report.FromGinkgo(types.Report{SpecReports: append(specs, extra...)}, report.Meta{Release: "1.35", Profile: "default"})
}

// The run: Ctrl-C after the first spec passed. The sign-off says
// the run was interrupted, in the headline and the column, counts the
// four specs it cut short as not run (never as failed requirements),
// exits as a column that is not signed off, and signoff.json carries the
// flag.
func TestAnInterruptedRunCountsWhatItCutShortAsNotRun(t *testing.T) {
	m := Build([]report.Report{interruptedRun()}, byRelease)
	n := len(requirements.All)
	want := fmt.Sprintf("NOT signed off: interrupted (Ctrl-C); 0 of 1 columns signed off; 1.35 defaults: interrupted after 1 of %d specs, "+
		"4 more cut short and counted not run (requirements: 1 checked, %d not run)", n, n-1)
	if v := m.Verdict(); v != want {
		t.Errorf("verdict\n %q, want\n %q", v, want)
	}
	if m.ExitCode() != ExitFailed {
		t.Errorf("exit code %d, want %d", m.ExitCode(), ExitFailed)
	}
	if first, _, _ := strings.Cut(m.Markdown(), "\n"); first != "**"+want+".**" {
		t.Errorf("signoff.md's first line %q", first)
	}
	cut := requirements.All[1]
	if c := m.Cells[cut.Text]["1.35 defaults"]; c.State != "not run" || c.Standing != NotRun || c.Failed != 0 || c.summary() != "not run (1 cut short by the interrupt)" {
		t.Errorf("%s, cut short: %+v (%q)", cut.ID, c, c.summary())
	}
	if md := m.Markdown(); !strings.Contains(md, "| "+cut.ID+": "+cut.Text+" | not run (1 cut short by the interrupt) |") {
		t.Errorf("signoff.md's row of %s:\n%s", cut.ID, md)
	}
	doc := documentOf(t, m)
	column := doc["columns"].([]any)[0].(map[string]any)
	if doc["interrupted"] != true || doc["exitCode"] != float64(ExitFailed) || column["interrupted"] != true {
		t.Errorf("signoff.json: interrupted %v, exit code %v, column interrupted %v", doc["interrupted"], doc["exitCode"], column["interrupted"])
	}
	if got := column["requirements"]; fmt.Sprint(got) != fmt.Sprintf("map[checked:1 failed:0 notApplicable:0 notRun:%d outOfReach:0]", n-1) {
		t.Errorf("signoff.json's counts %v", got)
	}
	// A run that was not interrupted carries no flag.
	if doc := documentOf(t, Build(runs(), byRelease)); doc["interrupted"] != nil {
		t.Errorf("a run not interrupted: interrupted %v", doc["interrupted"])
	}
}

// A spec that had failed before the interrupt is a failure still, and its
// requirement failed even where another spec of it was cut short; a
// requirement one spec of which passed is checked beside one cut short.
func TestAFailureBeforeTheInterruptStaysAFailure(t *testing.T) {
	// The first requirement's spec passed; the third's was cut short.
	failedReq, passedReq := requirements.All[2], requirements.All[0]
	kep := func(text string) []types.ReportEntry {
		return []types.ReportEntry{{Name: report.KEPEntry, Value: types.WrapEntryValue(text)}}
	}
	m := Build([]report.Report{interruptedRun(
		types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "denied before", State: types.SpecStateFailed,
			Failure: types.Failure{Message: "expected 422, got 201"}, ReportEntries: kep(failedReq.Text)},
		types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "stopped beside a pass", State: types.SpecStateInterrupted,
			Failure: types.Failure{Message: "Interrupted by User"}, ReportEntries: kep(passedReq.Text)},
	)}, byRelease)
	n := len(requirements.All)
	want := fmt.Sprintf("NOT signed off: interrupted (Ctrl-C); 0 of 1 columns signed off; 1.35 defaults: interrupted after 2 of %d specs, "+
		"5 more cut short and counted not run; 1 failed (requirements: 1 checked, 1 failed, %d not run)", n+2, n-2)
	if v := m.Verdict(); v != want {
		t.Errorf("verdict\n %q, want\n %q", v, want)
	}
	if c := m.Cells[failedReq.Text]["1.35 defaults"]; c.Standing != Failed || c.Failed != 1 || !slices.Contains(c.Reasons, "denied before: expected 422, got 201") {
		t.Errorf("%s: %+v", failedReq.ID, c)
	}
	if c := m.Cells[passedReq.Text]["1.35 defaults"]; c.Standing != Checked || c.Passed != 1 || c.Failed != 0 {
		t.Errorf("%s: %+v", passedReq.ID, c)
	}
	if m.ExitCode() != ExitFailed {
		t.Errorf("exit code %d", m.ExitCode())
	}
}

// A report.json as the suite wrote it for an interrupted run before it
// knew "cut short" (schema 2: the four specs Ctrl-C stopped "failed" with
// Ginkgo's "Interrupted by User"; one spec had failed before; one passed;
// 54 never started), read back as make e2e's sign-off reads it: the
// interrupted specs are not run, the true failure stays one.
func TestARecordedInterruptedRunIsSignedOffAsInterrupted(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Collect(Sources{Artifacts: []string{filepath.Join("testdata", "interrupted")}, Releases: "1.35", Features: "defaults", Out: out}, &stdout, &stderr)
	if code != ExitFailed {
		t.Errorf("exit %d, want %d; stderr %s", code, ExitFailed, stderr.String())
	}
	n := len(requirements.All)
	want := fmt.Sprintf("NOT signed off: interrupted (Ctrl-C); 0 of 1 columns signed off; 1.35 defaults: interrupted after 2 of 60 specs, "+
		"4 more cut short and counted not run; 1 failed (requirements: 1 checked, 1 failed, %d not run)", n-2)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if last := lines[len(lines)-1]; last != "signoff: "+want+"." {
		t.Errorf("last line\n %q, want\n %q", last, "signoff: "+want+".")
	}
	md, err := os.ReadFile(filepath.Join(out, "signoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(md), "\n"); first != "**"+want+".**" {
		t.Errorf("signoff.md's first line %q", first)
	}
	for _, row := range []string{
		"| KEP5018-AUTHZ-08: " + mustText(t, "KEP5018-AUTHZ-08") + " | not run (1 cut short by the interrupt) |",
		"| KEP5018-AUTHZ-06: " + mustText(t, "KEP5018-AUTHZ-06") + " | **failed 1 of 1** ([report](1.35-defaults/report.md)) |",
		"| KEP5018-CLUSTER-02: " + mustText(t, "KEP5018-CLUSTER-02") + " | passed 1 |",
		"| result | 1 passed, 1 failed, 0 skipped, 0 known upstream defects, 4 cut short by the interrupt |",
	} {
		if !strings.Contains(string(md), row) {
			t.Errorf("signoff.md lacks %q", row)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "signoff.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["interrupted"] != true || doc["exitCode"] != float64(ExitFailed) || doc["schemaVersion"] != float64(JSONSchemaVersion) {
		t.Errorf("signoff.json: interrupted %v, exit code %v, schema %v", doc["interrupted"], doc["exitCode"], doc["schemaVersion"])
	}
}

func mustText(t *testing.T, id string) string {
	t.Helper()
	q, ok := requirements.ByID(id)
	if !ok {
		t.Fatalf("no requirement %s", id)
	}
	return q.Text
}

// documentOf is signoff.json as a program that reads it sees it.
func documentOf(t *testing.T, m Matrix) map[string]any {
	t.Helper()
	data, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
