// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// Recorded shapes of two releases' reports: 1.35 with a failure, 1.36 with a
// declared skip where 1.35 passed.
func runs() []report.Report {
	r135 := report.Report{Meta: report.Meta{Release: "1.35", Profile: "default", SuiteCommit: "abc123", KindVersion: "v0.33.0",
		NodeImage: "kind-e2e/node:v1.35.4-x", Gates: map[string]string{"kube-apiserver": "DRAAdminAccess=true", "kubelet": ""},
		Components: map[string]string{"kube-apiserver": "v1.35.4"}},
		Totals: report.Totals{Passed: 2, Failed: 1},
		Specs: []report.Spec{
			{Name: "denies unlabelled", State: "passed", KEP: "only labelled namespaces get admin access"},
			{Name: "denies every request", State: "failed", Reason: "expected 422\nmore", KEP: "only labelled namespaces get admin access"},
			{Name: "toggles", State: "passed", KEP: "disable and re-enable"},
		}}
	r136 := report.Report{Meta: report.Meta{Release: "1.36", Profile: "default"},
		Totals: report.Totals{Passed: 2, Skipped: 1},
		Specs: []report.Spec{
			{Name: "denies unlabelled", State: "passed", KEP: "only labelled namespaces get admin access"},
			{Name: "denies every request", State: "passed", KEP: "only labelled namespaces get admin access"},
			{Name: "toggles", State: "skipped", Declared: "gate-switching", Reason: "DRAAdminAccess is locked on in 1.36", KEP: "disable and re-enable"},
			{Name: "no kep", State: "not selected"},
		}}
	return []report.Report{r135, r136}
}

// byRelease puts each column's report in a folder named for its release, as
// make e2e does.
func byRelease(r report.Report) string { return r.Release }

func TestMatrixCells(t *testing.T) {
	m := Build(runs(), byRelease)
	if got := m.Cells["only labelled namespaces get admin access"]["1.35 defaults"]; got.State != "failed" || got.Failed != 1 || got.Passed != 1 || got.Link != "1.35/report.md" {
		t.Fatalf("failed cell %+v", got)
	}
	if got := m.Cells["disable and re-enable"]["1.36 defaults"]; got.State != "skipped" || got.Reasons[0] != "declared (gate-switching): DRAAdminAccess is locked on in 1.36" {
		t.Fatalf("skipped cell %+v", got)
	}
	if got := m.Cells[NoRequirement]["1.36 defaults"]; got.State != "not run" {
		t.Fatalf("a spec left out: %+v", got)
	}
	if got := m.Cells[NoRequirement]["1.35 defaults"]; got.State != "not run" {
		t.Fatalf("1.35 had no such spec: %+v", got)
	}
	// Every requirement of the list has a row, in ID order, with "not run"
	// where no spec of it ran.
	first := requirements.All[0]
	if m.Requirements[0] != first.Text || Label(first.Text) != first.ID+": "+first.Text {
		t.Fatalf("first row %q, label %q", m.Requirements[0], Label(m.Requirements[0]))
	}
	for _, rel := range []string{"1.35", "1.36"} {
		if got := m.Cells[first.Text][rel+" defaults"]; got.State != "not run" {
			t.Fatalf("%s on %s: %+v", first.ID, rel, got)
		}
	}
	if len(m.Requirements) != len(requirements.All)+3 {
		t.Fatalf("%d rows for %d requirements and 3 other texts", len(m.Requirements), len(requirements.All))
	}
	if !strings.HasPrefix(m.Verdict(), fmt.Sprintf("NOT signed off: 0 of 2 columns signed off; 1.35 defaults: 1 failed (requirements: 0 checked, %d not run); 1.36 defaults: no spec ran for KEP5018-CLUSTER-01, ", len(requirements.All))) {
		t.Fatalf("verdict %q", m.Verdict())
	}
	if m.ExitCode() != ExitFailed {
		t.Fatalf("exit code %d", m.ExitCode())
	}
}

func TestMarkdownLinksFailuresAndNamesProvenance(t *testing.T) {
	md := Build(runs(), byRelease).Markdown()
	for _, want := range []string{
		"| only labelled namespaces get admin access | **failed 1 of 2** ([report](1.35/report.md)) | passed 2 |",
		"| disable and re-enable | passed 1 | not applicable: declared (gate-switching): DRAAdminAccess is locked on in 1.36 |",
		"| suite commit | abc123 |", "| gates of kubelet | release defaults |", "| node image | kind-e2e/node:v1.35.4-x  |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("signoff.md lacks %q:\n%s", want, md)
		}
	}
}

// The page must be well-formed and self-contained: parsed as XML (which
// also proves every tag is closed), no script, nothing fetched.
func TestHTMLIsSelfContained(t *testing.T) {
	page, err := Build(runs(), byRelease).HTML()
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(page, "<!DOCTYPE html>\n")
	body = strings.Replace(body, `<meta charset="utf-8">`, `<meta charset="utf-8"/>`, 1)
	d := xml.NewDecoder(strings.NewReader(body))
	d.Strict, d.Entity = true, xml.HTMLEntity
	cells := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("not well-formed: %v\n%s", err, page)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "script", "link", "img", "iframe":
				t.Fatalf("the page must not load anything: <%s>", se.Name.Local)
			case "td":
				for _, a := range se.Attr {
					if a.Name.Local == "class" && a.Value == "failed" {
						cells++
					}
				}
			}
		}
	}
	if cells != 1 || !strings.Contains(page, `<a href="1.35/report.md">failed 1 of 2</a>`) {
		t.Fatalf("want one failed cell linking its report, got %d:\n%s", cells, page)
	}
	// The only addresses are links a reader may follow (the KEP's pages).
	followed := regexp.MustCompile(`<a href="https://[^"]*">`)
	if rest := followed.ReplaceAllString(page, ""); strings.Contains(rest, "http://") || strings.Contains(rest, "https://") {
		t.Fatal("no network references but the links")
	}
}

// Both pages link the KEP, its tracking issue and each known upstream
// defect's issue, in the defect's cell and in a list of the defects met:
// signoff.json's KnownDefects has the same URLs.
func TestPagesLinkTheKEPAndEachKnownDefect(t *testing.T) {
	counters, _ := requirements.ByID("KEP5018-FEATURE-01")
	capacity, _ := requirements.ByID("KEP5018-FEATURE-05")
	r := report.Report{Meta: report.Meta{Release: "1.36", Profile: "default"}, Totals: report.Totals{KnownDefects: 2},
		Specs: []report.Spec{
			{Name: "admin whole", State: report.KnownDefect, Defect: "kubernetes/kubernetes#140729",
				Reason: "known upstream defect kubernetes/kubernetes#140729 (counters): refused", KEP: counters.Text},
			{Name: "admin share", State: report.KnownDefect, Defect: "kubernetes/kubernetes#140729",
				Reason: "known upstream defect kubernetes/kubernetes#140729 (capacity): refused", KEP: capacity.Text},
		}}
	m := Build([]report.Report{r}, byRelease)
	issue := "https://github.com/kubernetes/kubernetes/issues/140729"
	md := m.Markdown()
	for _, want := range []string{
		"The rows are the requirements of [KEP-5018, DRA Admin Access](" + requirements.KEPReadme + ") ([tracking issue kubernetes/enhancements#5018](" + requirements.KEPIssue + ")), each by its ID.",
		"| known upstream defect 1 of 1 ([kubernetes/kubernetes#140729](" + issue + ")): known upstream defect kubernetes/kubernetes#140729 (counters): refused |",
		"## Known upstream defects\n\n" + defectsNote + "\n\n- [kubernetes/kubernetes#140729](" + issue + "): 1.36 defaults (2 specs)\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("signoff.md lacks %q:\n%s", want, md)
		}
	}
	page, err := m.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<a href="` + requirements.KEPReadme + `">KEP-5018, DRA Admin Access</a> (<a href="` + requirements.KEPIssue + `">tracking issue kubernetes/enhancements#5018</a>)`,
		`<td class="known-defect">known upstream defect 1 of 1 <a href="` + issue + `">kubernetes/kubernetes#140729</a><small>`,
		`<li><a href="` + issue + `">kubernetes/kubernetes#140729</a>: 1.36 defaults (2 specs)</li>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("signoff.html lacks %q:\n%s", want, page)
		}
	}
	// Without a defect, no list of them.
	if md := Build(runs(), byRelease).Markdown(); strings.Contains(md, "Known upstream defects") || !strings.Contains(md, requirements.KEPIssue) {
		t.Errorf("a run without defects:\n%s", md)
	}
}

func TestKnownDefectHasItsOwnCellAndVerdict(t *testing.T) {
	r136 := report.Report{Meta: report.Meta{Release: "1.36", Profile: "default"},
		Totals: report.Totals{Passed: 1, KnownDefects: 1},
		Specs: []report.Spec{
			{Name: "ordinary half", State: "passed", KEP: "admin access ignores counters"},
			{Name: "admin whole", State: report.KnownDefect, Defect: "kubernetes/kubernetes#140729",
				Reason: "known upstream defect kubernetes/kubernetes#140729: refused", KEP: "admin access ignores counters"},
		}}
	r136.Specs = append(r136.Specs, everyRequirementPassed()...)
	m := Build([]report.Report{r136}, byRelease)
	c := m.Cells["admin access ignores counters"]["1.36 defaults"]
	if c.State != report.KnownDefect || c.KnownDefects != 1 || c.Passed != 1 {
		t.Fatalf("cell %+v: a requirement with a known defect is not shown passed", c)
	}
	if got := c.summary(); got != "known upstream defect 1 of 2" {
		t.Errorf("summary %q", got)
	}
	v := m.Verdict()
	if !strings.HasPrefix(v, "Signed off: the one column (1.36 defaults)") || !strings.Contains(v, "known upstream defects met where declared (1.36 defaults: 1)") {
		t.Errorf("verdict %q", v)
	}
	html, err := m.HTML()
	if err != nil || !strings.Contains(html, `<td class="known-defect">`) || !strings.Contains(html, "td.known-defect{") {
		t.Errorf("the HTML page must colour the cell on its own (err %v)", err)
	}
	if md := m.Markdown(); !strings.Contains(md, "known upstream defect 1 of 2 ([kubernetes/kubernetes#140729](https://github.com/kubernetes/kubernetes/issues/140729)): known upstream defect kubernetes/kubernetes#140729: refused") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestAPartialRunIsNeverSignedOff(t *testing.T) {
	r := report.Report{Meta: report.Meta{Release: "1.35", LabelFilter: "authz"}, Totals: report.Totals{Passed: 1, NotSelected: 2},
		Specs: []report.Spec{{Name: "a", State: "passed"}, {Name: "b", State: "not selected"}, {Name: "c", State: "not selected"}}}
	m := Build([]report.Report{r}, byRelease)
	if v, want := m.Verdict(), fmt.Sprintf("NOT signed off: 0 of 1 columns signed off; 1.35 defaults: partial: 1 of 3 specs selected by LABELS=authz, and what ran passed (requirements: 0 checked, %d not run)", len(requirements.All)); v != want {
		t.Errorf("verdict %q", v)
	}
	if m.ExitCode() != ExitLeftOut {
		t.Errorf("exit code %d, want %d: what ran passed, the filter left the rest out", m.ExitCode(), ExitLeftOut)
	}
	// Stopped, it is a failed run, not a choice of what to run.
	r.Interrupted = true
	if m := Build([]report.Report{r}, byRelease); m.ExitCode() != ExitFailed || !strings.Contains(m.Verdict(), "1.35 defaults: interrupted after 1 of 3 specs (") {
		t.Errorf("interrupted: exit code %d, verdict %q", m.ExitCode(), m.Verdict())
	}
}

// everyRequirementPassed is one passed spec per requirement of the list: a
// whole run with no hole.
func everyRequirementPassed() []report.Spec {
	var out []report.Spec
	for _, r := range requirements.All {
		out = append(out, report.Spec{Name: "checks " + r.ID, State: "passed", KEP: r.Text})
	}
	return out
}

func TestAWholeRunWithARequirementNoSpecRanIsNotSignedOff(t *testing.T) {
	specs := everyRequirementPassed()
	hole := specs[3]
	r := report.Report{Meta: report.Meta{Release: "1.35"}, Totals: report.Totals{Passed: len(specs) - 1}, Specs: append(specs[:3:3], specs[4:]...)}
	m := Build([]report.Report{r}, byRelease)
	want := fmt.Sprintf("NOT signed off: 0 of 1 columns signed off; 1.35 defaults: no spec ran for %s (requirements: %d checked, 1 not run)", requirements.All[3].ID, len(requirements.All)-1)
	if v := m.Verdict(); v != want {
		t.Errorf("verdict %q, want %q (the hole: %s)", v, want, hole.KEP)
	}
	if m.ExitCode() != ExitFailed {
		t.Errorf("a hole in the suite: exit code %d", m.ExitCode())
	}
	r.Specs, r.Totals.Passed = specs, len(specs)
	m = Build([]report.Report{r}, byRelease)
	want = fmt.Sprintf("Signed off: the one column (1.35 defaults) passed every applicable check (skips are only those the release table declares): %d requirements checked, 0 not applicable to this release", len(requirements.All))
	if v := m.Verdict(); v != want || m.ExitCode() != ExitSignedOff {
		t.Errorf("every requirement ran: %q (exit %d), want %q", v, m.ExitCode(), want)
	}
}

// One release, two feature sets: two columns, each with its allocator; the
// release is signed off only when both are, and signoff.json says so per
// column, per requirement and per release.
func TestAColumnPerFeatureSet(t *testing.T) {
	def := report.Report{Meta: report.Meta{Release: "1.36", Allocator: "incubating", Gates: map[string]string{"kube-scheduler": "DRAAdminAccess=true"}, GatesRead: true},
		Specs: everyRequirementPassed()}
	def.Totals.Passed = len(def.Specs)
	stable := def
	stable.Features, stable.Allocator = "stable", "stable"
	stable.Specs = append(everyRequirementPassed(), report.Spec{Name: "admin whole", State: report.KnownDefect, Defect: "kubernetes/kubernetes#140729",
		Reason: "known upstream defect kubernetes/kubernetes#140729: refused for its counters", KEP: requirements.All[0].Text})
	stable.Totals.KnownDefects = 1
	m := Build([]report.Report{def, stable}, byRelease)
	v := m.Verdict()
	if !strings.HasPrefix(v, "Signed off: all 2 columns (1.36 defaults, 1.36 stable)") || !strings.Contains(v, "(1.36 stable: 1)") {
		t.Errorf("verdict %q", v)
	}
	md := m.Markdown()
	if first, _, _ := strings.Cut(md, "\n"); first != "**"+v+".**" {
		t.Errorf("the first line of signoff.md is %q, want the verdict", first)
	}
	if !strings.Contains(md, "| 1.36 defaults (allocator incubating) | 1.36 stable (allocator stable) |") {
		t.Errorf("column headings:\n%s", md)
	}

	stable.Totals.Failed, stable.Specs[1].State = 1, "failed"
	m = Build([]report.Report{def, stable}, byRelease)
	if v := m.Verdict(); !strings.HasPrefix(v, "NOT signed off: 1 of 2 columns signed off; 1.36 stable: 1 failed") {
		t.Errorf("verdict %q", v)
	}
	data, err := m.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != JSONSchemaVersion || doc.SignedOff || doc.SignedColumns != 1 || len(doc.Columns) != 2 {
		t.Fatalf("document %+v", doc)
	}
	if c := doc.Columns[1]; c.Key != "1.36 stable" || c.Features != "stable" || c.Allocator != "stable" || c.SignedOff || !c.GatesRead || c.Gates["kube-scheduler"] == "" {
		t.Errorf("column %+v", c)
	}
	if len(doc.Releases) != 1 || doc.Releases[0].SignedOff || len(doc.Releases[0].Columns) != 2 {
		t.Errorf("releases %+v: one release, not signed off while a column failed", doc.Releases)
	}
	if got := doc.Requirements[1].Verdicts["1.36 stable"]; got.State != "failed" || got.Failed != 1 {
		t.Errorf("%s on 1.36 stable: %+v", doc.Requirements[1].ID, got)
	}
	if len(doc.KnownDefects) != 1 || doc.KnownDefects[0].URL != "https://github.com/kubernetes/kubernetes/issues/140729" ||
		doc.KnownDefects[0].Specs[0].Seen != "known upstream defect kubernetes/kubernetes#140729: refused for its counters" {
		t.Errorf("known defects %+v", doc.KnownDefects)
	}
}
