// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// existingRun is a whole run on an existing cluster of 1.35: the first
// requirements pass, then each requirement's one spec takes the declared
// skip given for it (by index), the rest pass. ownDriver makes the run one
// with a driver of the user's own.
func existingRun(ownDriver bool, skips map[int]report.Spec) report.Report {
	r := report.Report{Meta: report.Meta{Release: "1.35", Existing: true}}
	if ownDriver {
		r.Components = map[string]string{"device class": "gpu.example.com"}
	}
	for i, q := range requirements.All {
		s, ok := skips[i]
		if !ok {
			s = report.Spec{State: "passed"}
		}
		s.Name, s.KEP = fmt.Sprintf("spec %02d", i), q.Text
		r.Specs = append(r.Specs, s)
		switch s.State {
		case "passed":
			r.Totals.Passed++
		case "skipped":
			r.Totals.Skipped++
		default:
			r.Totals.Failed++
		}
	}
	return r
}

func skipped(n release.Need, outOfReach bool) report.Spec {
	return report.Spec{State: "skipped", Declared: string(n), OutOfReach: outOfReach, Reason: "declared for " + string(n)}
}

// vendorSkips: eight requirements read the bundled driver's contract, two
// the nodes, one the metric endpoints (all out of reach), and one is a
// feature 1.35 leaves off (not applicable).
func vendorSkips() map[int]report.Spec {
	m := map[int]report.Spec{}
	for i := 20; i < 28; i++ {
		m[i] = skipped(release.NeedBundledDriver, true)
	}
	m[30], m[31] = skipped(release.NeedNodeAccess, true), skipped(release.NeedNodeAccess, true)
	m[33] = skipped(release.NeedMetricsEndpoints, true)
	m[35] = skipped(release.NeedPartitionableDevices, false)
	return m
}

// The complaint: a vendor's green run read "NOT signed off: no spec ran for
// 25 requirements". Now it is signed off for what a driver of one's own can
// check, says how many requirements were out of reach and why, exits 0, and
// the three pages carry the same line and the counts.
func TestAVendorRunIsSignedOffForWhatItCanReach(t *testing.T) {
	m := Build([]report.Report{existingRun(true, vendorSkips())}, byRelease)
	checked := len(requirements.All) - 12
	want := fmt.Sprintf("Signed off for the %d requirements a driver of one's own can check on this cluster (1.35 defaults); "+
		"11 out of reach (the bundled driver's contract, node access, control-plane metrics); 1 not applicable to this release", checked)
	if v := m.Verdict(); v != want {
		t.Fatalf("verdict\n %q, want\n %q", v, want)
	}
	if m.ExitCode() != ExitSignedOff {
		t.Errorf("exit code %d", m.ExitCode())
	}
	if first, _, _ := strings.Cut(m.Markdown(), "\n"); first != "**"+want+".**" {
		t.Errorf("signoff.md's first line %q", first)
	}
	if page, err := m.HTML(); err != nil || !strings.Contains(page, `<p class="verdict signed" id="verdict">`+strings.ReplaceAll(want, "'", "&#39;")+".</p>") {
		t.Errorf("signoff.html's verdict (err %v)", err)
	}
	data, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Columns[0]
	if doc.Verdict != want || !doc.SignedOff || doc.ExitCode != ExitSignedOff || !c.Existing || !c.OwnDriver ||
		c.Requirements != (Counts{Checked: checked, OutOfReach: 11, NotApplicable: 1}) || len(c.OutOfReach) != 3 {
		t.Errorf("signoff.json: %+v, column %+v", doc.Verdict, c)
	}
	id := requirements.All[30].ID
	for _, rd := range doc.Requirements {
		if rd.ID == id {
			if v := rd.Verdicts["1.35 defaults"]; v.State != "skipped" || v.Standing != OutOfReach || v.OutOfReach != 1 || v.Needs[0] != "node-access" {
				t.Errorf("%s: %+v", id, v)
			}
		}
	}
	if md := m.Markdown(); !strings.Contains(md, "| out of reach: declared (node-access, out of reach): declared for node-access |") {
		t.Errorf("an out-of-reach cell:\n%s", md)
	}
}

// With the bundled driver on an existing cluster the line says what can be
// checked through the API; a requirement whose specs skipped both out of
// reach and as not applicable is out of reach (a run that reached the one
// spec would have checked it), never hidden as not applicable.
func TestAnExistingClusterWithTheBundledDriver(t *testing.T) {
	// A run whose every requirement was out of reach checked nothing, and
	// is no sign-off.
	none := map[int]report.Spec{}
	for i := range requirements.All {
		none[i] = skipped(release.NeedNodeAccess, true)
	}
	if m := Build([]report.Report{existingRun(false, none)}, byRelease); m.ExitCode() != ExitLeftOut || !strings.Contains(m.Verdict(), "no requirement was checked") {
		t.Errorf("nothing checked: %q (exit %d)", m.Verdict(), m.ExitCode())
	}

	skips := map[int]report.Spec{30: skipped(release.NeedNodeAccess, true), 33: skipped(release.NeedGateSwitching, true)}
	r := existingRun(false, skips)
	r.Specs = append(r.Specs, report.Spec{Name: "spec 30 again", KEP: requirements.All[30].Text, State: "skipped", Declared: string(release.NeedOtherAllocators)})
	r.Totals.Skipped++
	m := Build([]report.Report{r}, byRelease)
	want := fmt.Sprintf("Signed off for the %d requirements that can be checked through the API on this cluster (1.35 defaults); 2 out of reach (node access, gate switching)",
		len(requirements.All)-2)
	if v := m.Verdict(); v != want || m.ExitCode() != ExitSignedOff {
		t.Errorf("verdict %q (exit %d), want %q", v, m.ExitCode(), want)
	}
}

// Out of reach never blocks an existing cluster, but a failure, a filter
// and a hole still do, each with its exit code; on a cluster the suite made
// a requirement out of the run's reach (UPGRADE=0) is left out, not signed.
func TestWhatStillBlocksASignOff(t *testing.T) {
	failed := vendorSkips()
	failed[5] = report.Spec{State: "failed", Reason: "expected 422"}
	m := Build([]report.Report{existingRun(true, failed)}, byRelease)
	if v := m.Verdict(); !strings.HasPrefix(v, "NOT signed off: 0 of 1 columns signed off; 1.35 defaults: 1 failed (requirements: ") ||
		!strings.Contains(v, ", 1 failed, 11 out of reach, 1 not applicable)") || m.ExitCode() != ExitFailed {
		t.Errorf("a failure: %q (exit %d)", v, m.ExitCode())
	}

	filtered := existingRun(true, vendorSkips())
	filtered.LabelFilter = "authz"
	filtered.Specs = append(filtered.Specs, report.Spec{Name: "left out", State: "not selected"})
	filtered.Totals.NotSelected = 1
	if m := Build([]report.Report{filtered}, byRelease); m.ExitCode() != ExitLeftOut || !strings.HasPrefix(m.Verdict(), "NOT signed off") {
		t.Errorf("LABELS on an existing cluster: %q (exit %d)", m.Verdict(), m.ExitCode())
	}

	hole := existingRun(true, vendorSkips())
	hole.Specs = hole.Specs[1:]
	if m := Build([]report.Report{hole}, byRelease); m.ExitCode() != ExitFailed || !strings.Contains(m.Verdict(), "no spec ran for "+requirements.All[0].ID) {
		t.Errorf("a hole: %q (exit %d)", m.Verdict(), m.ExitCode())
	}

	made := existingRun(false, map[int]report.Spec{36: skipped(release.NeedReleaseSwitching, true), 35: skipped(release.NeedPartitionableDevices, false)})
	made.Existing = false
	m = Build([]report.Report{made}, byRelease)
	want := fmt.Sprintf("NOT signed off: 0 of 1 columns signed off; 1.35 defaults: out of reach of this run on a cluster the suite made: %s (release switching), and what ran passed (requirements: %d checked, 1 out of reach, 1 not applicable)",
		requirements.All[36].ID, len(requirements.All)-2)
	if v := m.Verdict(); v != want || m.ExitCode() != ExitLeftOut {
		t.Errorf("UPGRADE=0 on a cluster the suite made: %q (exit %d), want %q", v, m.ExitCode(), want)
	}

	// Reports written before skips said their reach count every declared
	// skip not applicable, and sign off as they did.
	old := existingRun(true, vendorSkips())
	for i := range old.Specs {
		old.Specs[i].OutOfReach = false
	}
	if m := Build([]report.Report{old}, byRelease); m.ExitCode() != ExitSignedOff || !strings.Contains(m.Verdict(), "; 0 out of reach; 12 not applicable to this release") {
		t.Errorf("an old report: %q (exit %d)", m.Verdict(), m.ExitCode())
	}
	if m := Build(nil, byRelease); m.ExitCode() != ExitFailed {
		t.Errorf("no column: exit %d", m.ExitCode())
	}
}

// Several columns: a column's failure is exit 1 whatever the others are;
// signed off, each column has its counts on the line.
func TestSeveralColumnsCountEach(t *testing.T) {
	a, b := existingRun(false, nil), existingRun(false, map[int]report.Spec{35: skipped(release.NeedPartitionableDevices, false)})
	a.Existing, b.Existing = false, false
	b.Features = "stable"
	m := Build([]report.Report{a, b}, byRelease)
	n := len(requirements.All)
	want := fmt.Sprintf("Signed off: all 2 columns (1.35 defaults, 1.35 stable) passed every applicable check (skips are only those the release table declares); "+
		"1.35 defaults: %d requirements checked, 0 not applicable to this release; 1.35 stable: %d requirements checked, 1 not applicable to this release", n, n-1)
	if v := m.Verdict(); v != want || m.ExitCode() != ExitSignedOff {
		t.Errorf("verdict %q (exit %d), want %q", v, m.ExitCode(), want)
	}
	b.LabelFilter, b.Totals.NotSelected = "authz", 1
	b.Specs = append(b.Specs, report.Spec{Name: "left out", State: "not selected"})
	a.Totals.Failed, a.Specs[0].State = 1, "failed"
	if m := Build([]report.Report{a, b}, byRelease); m.ExitCode() != ExitFailed {
		t.Errorf("one column failed, one left specs out: exit %d", m.ExitCode())
	}
}
