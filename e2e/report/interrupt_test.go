// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// totalsJSON is Totals as report.json has them.
func totalsJSON(t *testing.T, r Report) string {
	t.Helper()
	data, err := json.Marshal(r.Totals)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Ctrl-C stops the specs that run (Ginkgo: SpecStateInterrupted, "Interrupted
// by User") and skips the rest: those it stopped are cut short, counted
// apart from passed and failed, never among the failures; a spec that had
// failed before the interrupt keeps its failure; a teardown a second
// Ctrl-C stopped is the interrupt, not a suite problem.
func TestASpecTheInterruptStoppedIsCutShort(t *testing.T) {
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("passes", types.SpecStatePassed, ""),
		spec("failed before", types.SpecStateFailed, "expected 422, got 201"),
		spec("stopped", types.SpecStateInterrupted, "Interrupted by User"),
		spec("never reached", types.SpecStateSkipped, ""),
		{LeafNodeType: types.NodeTypeSynchronizedAfterSuite, State: types.SpecStateInterrupted, Failure: types.Failure{Message: "Interrupted by User"}},
	}}, Meta{Release: "1.35"})
	if got, want := totalsJSON(t, r), `{"passed":1,"failed":1,"skipped":0,"knownDefects":0,"cutShort":1,"notSelected":1}`; got != want {
		t.Errorf("totals %s, want %s", got, want)
	}
	if !r.Interrupted || len(r.Problems) != 0 {
		t.Errorf("interrupted %v, suite problems %q", r.Interrupted, r.Problems)
	}
	states := map[string]string{}
	for _, s := range r.Specs {
		states[s.Name] = s.State + ": " + s.Reason
	}
	if got := states["Admin access stopped"]; got != "cut short: Interrupted by User" {
		t.Errorf("the stopped spec: %q", got)
	}
	if got := states["Admin access failed before"]; got != "failed: expected 422, got 201" {
		t.Errorf("the spec that failed before the interrupt: %q", got)
	}
	if got, want := r.Failures(8, 300), "FAILED Admin access failed before\n    expected 422, got 201\n"; got != want {
		t.Errorf("failures %q, want %q", got, want)
	}
	selection := "interrupted: 3 of 4 specs ran before the run was stopped, 1 of them cut short: neither passed nor failed"
	if got := r.Selection(); got != selection {
		t.Errorf("selection %q, want %q", got, selection)
	}
	md := r.Markdown()
	for _, want := range []string{"**1 passed, 1 failed, 0 skipped** (" + selection + ")", "| cut short | Admin access stopped |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

// An interrupt between specs stops none mid-run: Ginkgo says it only in
// the suite's failure reasons, and the run is interrupted, not filtered.
func TestAnInterruptBetweenSpecsIsAnInterrupt(t *testing.T) {
	r := FromGinkgo(types.Report{SpecialSuiteFailureReasons: []string{"Interrupted by User"}, SpecReports: types.SpecReports{
		spec("passes", types.SpecStatePassed, ""),
		spec("never reached", types.SpecStateSkipped, ""),
	}}, Meta{Release: "1.35"})
	if got, want := r.Selection(), "interrupted: 1 of 2 specs ran before the run was stopped"; !r.Interrupted || got != want {
		t.Errorf("interrupted %v, selection %q, want %q", r.Interrupted, got, want)
	}
}

// A report.json written before schema 3 counted the specs an interrupt
// stopped as failed; Read reads them as cut short, and keeps a failure of
// its own, and a run that was not interrupted, as they were.
func TestReadTakesAnOlderInterruptedReportAsCutShort(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old := write("interrupted.json", `{"schemaVersion": 2, "release": "1.35", "interrupted": true,
		"totals": {"passed": 1, "failed": 3, "skipped": 0, "knownDefects": 0, "notSelected": 1},
		"suiteProblems": ["SynchronizedAfterSuite: Interrupted by User", "AfterSuite: the cluster could not be deleted"],
		"specs": [{"name": "a", "state": "passed"}, {"name": "b", "state": "failed", "reason": "Interrupted by User"},
			{"name": "c", "state": "failed", "reason": "Interrupted by Other Ginkgo Process"},
			{"name": "d", "state": "failed", "reason": "expected 422, got 201"}, {"name": "e", "state": "not selected"}]}`)
	r, err := Read(old)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.Specs {
		got = append(got, s.Name+" "+s.State)
	}
	if strings.Join(got, ", ") != "a passed, b cut short, c cut short, d failed, e not selected" {
		t.Errorf("specs %q", got)
	}
	if got, want := totalsJSON(t, r), `{"passed":1,"failed":1,"skipped":0,"knownDefects":0,"cutShort":2,"notSelected":1}`; got != want {
		t.Errorf("totals %s, want %s", got, want)
	}
	if len(r.Problems) != 1 || r.Problems[0] != "AfterSuite: the cluster could not be deleted" || r.SchemaVersion != SchemaVersion {
		t.Errorf("suite problems %q, schema %d", r.Problems, r.SchemaVersion)
	}
	// Not interrupted: a failure with that message is left as it is.
	whole := write("whole.json", `{"schemaVersion": 2, "totals": {"failed": 1}, "specs": [{"name": "b", "state": "failed", "reason": "Interrupted by User"}]}`)
	if r, err := Read(whole); err != nil || r.Specs[0].State != "failed" || r.Totals.Failed != 1 {
		t.Errorf("a run not interrupted: %+v (%v)", r, err)
	}
}
