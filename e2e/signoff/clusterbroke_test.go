// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

var brokeAt = time.Date(2026, 11, 28, 6, 41, 37, 0, time.UTC)

// brokenRun is the run: a worker stopped after the first specs
// passed; every spec of a requirement ran, the first passed before the
// break, the next four failed while the node was NotReady, the rest
// failed at once as they started (failIfBroken). failedBefore makes the
// fifth spec a failure before the break instead; breaks, where given, are
// the run's instead of the worker's.
func brokenRun(failedBefore bool, breaks ...report.ClusterBreak) report.Report {
	var specs types.SpecReports
	for i, q := range requirements.All {
		s := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "checks " + q.ID, State: types.SpecStateFailed,
			Failure:       types.Failure{Message: "pod pod-2 should run"},
			ReportEntries: []types.ReportEntry{{Name: report.KEPEntry, Value: types.WrapEntryValue(q.Text)}},
			StartTime:     brokeAt.Add(time.Duration(i) * time.Second), EndTime: brokeAt.Add(time.Duration(i+60) * time.Second)}
		switch {
		case i == 0:
			s.State, s.StartTime, s.EndTime = types.SpecStatePassed, brokeAt.Add(-90*time.Second), brokeAt.Add(-60*time.Second)
		case i == 5 && failedBefore:
			s.Failure.Message, s.StartTime, s.EndTime = "expected 422, got 201", brokeAt.Add(-50*time.Second), brokeAt.Add(-40*time.Second)
		}
		specs = append(specs, s)
	}
	if len(breaks) == 0 {
		breaks = []report.ClusterBreak{{What: "node s135-worker", State: "NotReady", From: brokeAt}}
	}
	return report.FromGinkgo(types.Report{SpecReports: specs}, report.Meta{Release: "1.35", Profile: "default"}, breaks...)
}

// The sign-off reads the column as a cluster problem: the break first, in
// the headline and the column, the specs it cut short counted not run
// (never failed requirements), its own exit code, and signoff.json
// carries the break.
func TestAClusterThatBrokeIsNamedNotSignedAsFailedRequirements(t *testing.T) {
	m := Build([]report.Report{brokenRun(false)}, byRelease)
	n := len(requirements.All)
	want := fmt.Sprintf("NOT signed off: the cluster broke under the run: node s135-worker NotReady from 06:41:37; 0 of 1 columns signed off; "+
		"1.35 defaults: the cluster broke under the run: node s135-worker NotReady from 06:41:37; %d spec(s) cut short by it, counted not run "+
		"(requirements: 1 checked, %d not run)", n-1, n-1)
	if v := m.Verdict(); v != want {
		t.Errorf("verdict\n %q, want\n %q", v, want)
	}
	if m.ExitCode() != ExitClusterBroke {
		t.Errorf("exit code %d, want %d", m.ExitCode(), ExitClusterBroke)
	}
	cut := requirements.All[1]
	if c := m.Cells[cut.Text]["1.35 defaults"]; c.Standing != NotRun || c.Failed != 0 || c.summary() != "not run (1 cut short by the broken cluster)" {
		t.Errorf("%s, cut short: %+v (%q)", cut.ID, c, c.summary())
	}
	doc := documentOf(t, m)
	column := doc["columns"].([]any)[0].(map[string]any)
	breaks, _ := column["clusterBreaks"].([]any)
	if doc["exitCode"] != float64(ExitClusterBroke) || len(breaks) != 1 || breaks[0].(map[string]any)["what"] != "node s135-worker" {
		t.Errorf("signoff.json: exit code %v, column's breaks %v", doc["exitCode"], column["clusterBreaks"])
	}
	if doc := documentOf(t, Build(runs(), byRelease)); doc["columns"].([]any)[0].(map[string]any)["clusterBreaks"] != nil {
		t.Error("a run whose cluster held carries no breaks")
	}
}

// A spec that failed before the break is a failure still: the column
// fails (exit 1), and the break is said first.
func TestAFailureBeforeTheBreakStillFails(t *testing.T) {
	m := Build([]report.Report{brokenRun(true)}, byRelease)
	why := m.Unsigned(m.Runs[0])
	if m.ExitCode() != ExitFailed || len(why) != 2 || !strings.HasPrefix(why[0], "the cluster broke under the run: ") || why[1] != "1 failed" {
		t.Errorf("exit code %d, reasons %q", m.ExitCode(), why)
	}
}

// Exit codes over columns: a failure beats a broken cluster, which beats
// a run that left requirements out.
func TestTheBrokenClusterExitCodeRanks(t *testing.T) {
	leftOut := runs()[1] // 1.36: passed, a declared skip, one spec left out by LABELS
	leftOut.Release, leftOut.LabelFilter, leftOut.Totals.NotSelected = "1.37", "authz", 1
	if _, code := Build([]report.Report{leftOut}, byRelease).judge(leftOut); code != ExitLeftOut {
		t.Fatalf("the run that left requirements out: exit %d", code)
	}
	broken := brokenRun(false)
	broken.Release = "1.36"
	if code := Build([]report.Report{leftOut, broken}, byRelease).ExitCode(); code != ExitClusterBroke {
		t.Errorf("left out and broken: exit %d, want %d", code, ExitClusterBroke)
	}
	if code := Build([]report.Report{broken, leftOut}, byRelease).ExitCode(); code != ExitClusterBroke {
		t.Errorf("broken and left out: exit %d, want %d", code, ExitClusterBroke)
	}
	failed := brokenRun(true)
	failed.Release = "1.34"
	if code := Build([]report.Report{broken, failed}, byRelease).ExitCode(); code != ExitFailed {
		t.Errorf("broken and failed: exit %d, want %d", code, ExitFailed)
	}
}

// passedRun is every requirement checked and passed, from brokeAt on, with
// those breaks.
func passedRun(breaks ...report.ClusterBreak) report.Report {
	var specs types.SpecReports
	for i, q := range requirements.All {
		specs = append(specs, types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "checks " + q.ID, State: types.SpecStatePassed,
			ReportEntries: []types.ReportEntry{{Name: report.KEPEntry, Value: types.WrapEntryValue(q.Text)}},
			StartTime:     brokeAt.Add(time.Duration(i) * time.Second), EndTime: brokeAt.Add(time.Duration(i+1) * time.Second)})
	}
	return report.FromGinkgo(types.Report{SpecReports: specs}, report.Meta{Release: "1.35", Profile: "default"}, breaks...)
}

// A break that cut no spec short vetoes nothing: the column is what its
// specs say, signed off here, and the break is said as information.
func TestABreakThatTouchedNoSpecDoesNotVetoTheSignOff(t *testing.T) {
	// Over before the first spec began.
	node := report.ClusterBreak{What: "node s135-worker", State: "NotReady", From: brokeAt.Add(-60 * time.Second), To: brokeAt.Add(-30 * time.Second)}
	m := Build([]report.Report{passedRun(node)}, byRelease)
	if why := m.Unsigned(m.Runs[0]); why != nil || m.ExitCode() != ExitSignedOff {
		t.Fatalf("a break under no spec: want signed off (exit 0), got %q, exit %d", why, m.ExitCode())
	}
	if v := m.Verdict(); !strings.HasPrefix(v, "Signed off") ||
		!strings.HasSuffix(v, "; 1.35 defaults: the cluster broke under the run but cut no spec short (information): node s135-worker NotReady from 06:40:37 until 06:41:07") {
		t.Errorf("verdict %q: want signed off, the break said as information", v)
	}
}

// A break after one of the suite's own moves excuses nothing: the specs
// that failed during it are failures (exit 1), and the move is named.
func TestABreakAfterTheSuitesMoveFailsTheColumn(t *testing.T) {
	r := brokenRun(false, report.ClusterBreak{What: "kube-scheduler on s135-control-plane", State: "not ready",
		From: brokeAt, AfterSuiteMove: true, Move: "s135: gate move of kube-scheduler", GraceSeconds: 60})
	m := Build([]report.Report{r}, byRelease)
	why := m.Unsigned(m.Runs[0])
	n := len(requirements.All) - 1
	if m.ExitCode() != ExitFailed || len(why) != 2 || why[0] != fmt.Sprintf("%d failed", n) ||
		why[1] != `not back after the suite's own moves (the move or the release failing, not the cluster): kube-scheduler on s135-control-plane not ready from 06:41:37, not back 60 s after the suite's move "s135: gate move of kube-scheduler"` {
		t.Errorf("exit %d, reasons %q", m.ExitCode(), why)
	}
	if strings.Contains(m.Verdict(), "NOT signed off: the cluster broke") {
		t.Errorf("verdict blames the cluster: %q", m.Verdict())
	}
}
