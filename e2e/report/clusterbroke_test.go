// SPDX-License-Identifier: Apache-2.0

package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
)

var broke = time.Date(2026, 11, 28, 6, 41, 37, 0, time.UTC)

// timed is spec() run from start to end, in seconds after the break began.
func timed(text string, state types.SpecState, msg string, start, end int) types.SpecReport {
	s := spec(text, state, msg)
	s.StartTime, s.EndTime = broke.Add(time.Duration(start)*time.Second), broke.Add(time.Duration(end)*time.Second)
	return s
}

// The run: a worker stopped after specs had passed; the specs that
// failed while it was NotReady are "cluster broke", counted apart; one that
// failed before it stays failed, and one that passed while it was broken
// is counted apart too: its pass proves nothing then.
func TestASpecThatRanWhileTheClusterWasBrokenIsCountedApart(t *testing.T) {
	node := ClusterBreak{What: "node s135-worker", State: "NotReady (Kubelet stopped posting node status.)", From: broke}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		timed("passed before", types.SpecStatePassed, "", -200, -100),
		timed("failed before", types.SpecStateFailed, "expected 422, got 201", -90, -1),
		timed("waited on the dead node", types.SpecStateFailed, "pod pod-2 should run", -30, 90),
		timed("started while broken", types.SpecStateFailed, "the cluster broke under the run", 100, 100),
		timed("passed while broken", types.SpecStatePassed, "", 10, 20),
		timed("skipped without a reason while broken", types.SpecStateSkipped, "no", 10, 20),
	}}, Meta{Release: "1.35"}, node)
	if got, want := totalsJSON(t, r), `{"passed":1,"failed":2,"skipped":0,"knownDefects":0,"clusterBroke":3,"notSelected":0}`; got != want {
		t.Errorf("totals %s, want %s", got, want)
	}
	states := map[string]string{}
	for _, s := range r.Specs {
		states[strings.TrimPrefix(s.Name, "Admin access ")] = s.State
	}
	for name, want := range map[string]string{"failed before": "failed", "waited on the dead node": ClusterBroke, "started while broken": ClusterBroke,
		"passed while broken": ClusterBroke, "skipped without a reason while broken": "failed"} {
		if states[name] != want {
			t.Errorf("%s: %q, want %q", name, states[name], want)
		}
	}
	line := "e2e: the cluster broke under the run, not by the suite's doing: node s135-worker NotReady (Kubelet stopped posting node status.) from 06:41:37; 3 spec(s) that ran while it was broken are counted apart (cluster broke), not as failed requirements"
	if got := r.ClusterBroke(); got != line {
		t.Errorf("closing line\n got %q\nwant %q", got, line)
	}
	if strings.Contains(r.Failures(8, 300), "dead node") {
		t.Errorf("a spec the break cut short is not among the failures: %q", r.Failures(8, 300))
	}
	md := r.Markdown()
	for _, want := range []string{"**1 passed, 2 failed, 0 skipped**, **3 cut short by a broken cluster**",
		"**The cluster broke under the run**, not by the suite's doing", "node s135-worker NotReady (Kubelet stopped posting node status.) from 06:41:37",
		"| cluster broke | Admin access waited on the dead node |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// A break that ended: a spec after it fails as itself.
	node.To = broke.Add(60 * time.Second)
	r = FromGinkgo(types.Report{SpecReports: types.SpecReports{timed("after", types.SpecStateFailed, "expected 422", 61, 70)}}, Meta{Release: "1.35"}, node)
	if r.Totals.Failed != 1 || !strings.HasSuffix(node.String(), "until 06:42:37") {
		t.Errorf("a spec after the break ended: totals %+v; break %q", r.Totals, node)
	}
	if r.ClusterBroke() == "" {
		t.Error("a break that ended is still said")
	}
}

// report.json of schema 3 has no breaks: it reads as a run whose cluster
// did not break, at schema 4; schema 4 keeps its breaks.
func TestReportJSONCarriesTheBreaks(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "3.json")
	if err := os.WriteFile(old, []byte(`{"schemaVersion":3,"release":"1.35","totals":{"passed":1,"failed":1},"specs":[{"name":"a","state":"failed"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Read(old)
	if err != nil || r.SchemaVersion != 4 || r.Totals.Failed != 1 || len(r.ClusterBreaks) != 0 {
		t.Fatalf("schema 3: %+v, %v", r, err)
	}
	r.ClusterBreaks = []ClusterBreak{{What: "kube-scheduler on s135-control-plane", State: "not running (its mirror pod is gone)", From: broke}}
	path := filepath.Join(dir, "4.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var raw map[string]any
	json.Unmarshal(data, &raw)
	if _, ok := raw["clusterBreaks"]; !ok {
		t.Fatalf("report.json lacks clusterBreaks: %s", data)
	}
	back, err := Read(path)
	if err != nil || len(back.ClusterBreaks) != 1 || clusterbreak.Text(back.ClusterBreaks) != "kube-scheduler on s135-control-plane not running (its mirror pod is gone) from 06:41:37" {
		t.Fatalf("read back: %+v, %v", back.ClusterBreaks, err)
	}
}

func TestMergeKeepsTheBreaks(t *testing.T) {
	a := Report{Meta: Meta{Release: "1.35"}, ClusterBreaks: []ClusterBreak{{What: "node w", State: "NotReady", From: broke}}}
	b := Report{Meta: Meta{Release: "1.35"}}
	m, err := Merge(a, b)
	if err != nil || len(m.ClusterBreaks) != 1 {
		t.Fatalf("merged: %+v, %v", m.ClusterBreaks, err)
	}
}

// What went down inside one of the suite's own moves and never came back
// is the move (or the release) failing: named as such, and the specs that
// failed during it stay failed requirements.
func TestABreakAfterTheSuitesMoveExcusesNoSpec(t *testing.T) {
	sched := ClusterBreak{What: "kube-scheduler on s135-control-plane", State: "not ready", From: broke,
		AfterSuiteMove: true, Move: "s135: gate move of kube-scheduler", GraceSeconds: 60}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		timed("waited for the scheduler", types.SpecStateFailed, "pod pod-2 should run", 10, 90),
	}}, Meta{Release: "1.35"}, sched)
	if r.Totals.Failed != 1 || r.Totals.ClusterBroke != 0 {
		t.Errorf("totals %+v: want the spec failed, not cluster broke", r.Totals)
	}
	line := `e2e: not back after the suite's own moves (the move failing, or the release not coming back; the specs that failed meanwhile stay failed): kube-scheduler on s135-control-plane not ready from 06:41:37, not back 60 s after the suite's move "s135: gate move of kube-scheduler"`
	if got := r.ClusterBroke(); got != line {
		t.Errorf("closing line\n got %q\nwant %q", got, line)
	}
	if md := r.Markdown(); !strings.Contains(md, "**Not back after the suite's own moves**") || strings.Contains(md, "**The cluster broke under the run**") {
		t.Errorf("report.md: want the move's failure named, not a broken cluster")
	}
}

// A break no spec ran under (here: one that ended before the spec
// began) is said as information; the specs' outcomes stand.
func TestABreakThatTouchedNoSpecIsInformation(t *testing.T) {
	node := ClusterBreak{What: "node s135-worker", State: "NotReady", From: broke, To: broke.Add(40 * time.Second)}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{timed("passed after it", types.SpecStatePassed, "", 50, 60)}}, Meta{Release: "1.35"}, node)
	want := "e2e: the cluster broke under the run, not by the suite's doing, and no spec ran while it was broken (information): node s135-worker NotReady from 06:41:37 until 06:42:17"
	if got := r.ClusterBroke(); got != want {
		t.Errorf("closing line\n got %q\nwant %q", got, want)
	}
	if md := r.Markdown(); !strings.Contains(md, "no spec ran while it was broken (information") {
		t.Errorf("report.md does not say the break as information")
	}
}
