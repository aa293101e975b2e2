// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// at is a whole run of the column at a Kubernetes version: a pre-release
// of 1.37 ("1.37.3-rc.0") stands for 1.38's row, which the table does not
// have yet.
func at(version string, r report.Report) report.Report {
	r.Version = version
	return r
}

// A sign-off of pre-release columns alone is the sign-off: each column's
// heading and the verdict's first words say it is a pre-release, and
// which release it is not; what passed signs off (exit 0).
func TestAPreReleaseColumnSaysSoInItsHeaderAndVerdict(t *testing.T) {
	m := Build([]report.Report{at("1.37.3-rc.0", column("1.37", "incubating", nil))}, byRelease)
	const first = "Pre-release Kubernetes v1.37.3-rc.0 (not 1.37.3): Signed off: the one column (1.37 defaults) passed every applicable check"
	if !strings.HasPrefix(m.Verdict(), first) || m.ExitCode() != ExitSignedOff || m.Apart != nil {
		t.Fatalf("verdict %q, exit %d, apart %v", m.Verdict(), m.ExitCode(), m.Apart)
	}
	if h := Heading(m.Runs[0]); h != "1.37 defaults (pre-release v1.37.3-rc.0, allocator incubating)" {
		t.Errorf("heading %q", h)
	}
	md := m.Markdown()
	for _, want := range []string{"**" + first, "| KEP requirement | 1.37 defaults (pre-release v1.37.3-rc.0, allocator incubating) |",
		"| Kubernetes | v1.37.3-rc.0, a pre-release: no sign-off of 1.37.3 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("signoff.md lacks %q:\n%s", want, md)
		}
	}
	if !strings.HasPrefix(md, "**"+first) {
		t.Errorf("signoff.md's first line: %q", strings.SplitN(md, "\n", 2)[0])
	}
	page, err := m.HTML()
	if err != nil || !strings.Contains(page, `<p class="verdict signed" id="verdict">`+first) || !strings.Contains(page, "<th>1.37 defaults (pre-release v1.37.3-rc.0, allocator incubating)</th>") {
		t.Errorf("signoff.html (%v):\n%s", err, page)
	}
	d := m.Document()
	if c := d.Columns[0]; !c.PreRelease || c.Version != "1.37.3-rc.0" || !d.SignedOff || d.PreRelease != nil || !strings.HasPrefix(d.Verdict, first) {
		t.Errorf("signoff.json: %+v, signed off %v, apart %v", c, d.SignedOff, d.PreRelease)
	}
	// Two pre-releases in one sign-off are each named.
	two := Build([]report.Report{at("1.37.3-rc.0", column("1.37", "incubating", nil)), at("1.36.9-beta.1", column("1.36", "incubating", nil))}, byRelease)
	if !strings.HasPrefix(two.Verdict(), "Pre-release Kubernetes v1.37.3-rc.0 (not 1.37.3), v1.36.9-beta.1 (not 1.36.9): Signed off: all 2 columns") {
		t.Errorf("two pre-releases: %q", two.Verdict())
	}
}

// A released column names the patch it ran, which kind's published image
// and the offline build need not share.
func TestAReleasedColumnNamesItsPatch(t *testing.T) {
	m := Build([]report.Report{at("1.35.8", column("1.35", "incubating", nil))}, byRelease)
	if h := Heading(m.Runs[0]); h != "1.35 defaults (v1.35.8, allocator incubating)" || strings.Contains(m.Verdict(), "re-release") {
		t.Errorf("heading %q, verdict %q", h, m.Verdict())
	}
	if md := m.Markdown(); !strings.Contains(md, "| Kubernetes | v1.35.8 |") {
		t.Errorf("signoff.md names no version:\n%s", md)
	}
	if d := m.Document(); d.Columns[0].Version != "1.35.8" || d.Columns[0].PreRelease {
		t.Errorf("signoff.json's column %+v", d.Columns[0])
	}
}

// Released and pre-release columns together: the pre-release ones are
// judged apart, so they turn the releases' verdict and exit code neither
// red nor green; their own sign-off, with its own verdict, lies in
// prerelease/, linked from both pages of the releases', its links one
// folder up.
func TestPreReleaseColumnsAreJudgedApart(t *testing.T) {
	failing := map[int]report.Spec{4: {State: "failed", Reason: "expected 422, got 201"}}
	released, pre := at("1.35.8", column("1.35", "incubating", nil)), at("1.37.3-rc.0", column("1.37", "incubating", failing))
	m := Build([]report.Report{released, pre}, byRelease)
	if len(m.Runs) != 1 || m.Runs[0].Release != "1.35" || m.Apart == nil || len(m.Apart.Runs) != 1 {
		t.Fatalf("released %v, apart %v", m.Runs, m.Apart)
	}
	if v := m.Verdict(); !strings.HasPrefix(v, "Signed off: the one column (1.35 defaults)") || m.ExitCode() != ExitSignedOff {
		t.Errorf("the releases' verdict %q, exit %d", v, m.ExitCode())
	}
	const apartVerdict = "Pre-release Kubernetes v1.37.3-rc.0 (not 1.37.3): NOT signed off: 0 of 1 columns signed off; 1.37 defaults: 1 failed"
	if v := m.Apart.Verdict(); !strings.HasPrefix(v, apartVerdict) || m.Apart.ExitCode() != ExitFailed {
		t.Errorf("the pre-release verdict %q, exit %d", v, m.Apart.ExitCode())
	}
	if link := m.Apart.Cells[requirements.All[4].Text]["1.37 defaults"].Link; link != "../1.37/report.md" {
		t.Errorf("the pre-release page links its failure to %q", link)
	}
	md := m.Markdown()
	if want := "**Pre-release columns, judged apart** (1.37 defaults): " + apartNote + " [prerelease/signoff.md](prerelease/signoff.md): " + apartVerdict; !strings.Contains(md, want) {
		t.Errorf("signoff.md lacks %q:\n%s", want, md)
	}
	if strings.Contains(md, "| 1.37 defaults") {
		t.Errorf("the releases' table has a pre-release column:\n%s", md)
	}
	page, err := m.HTML()
	if err != nil || !strings.Contains(page, `<p id="prerelease"><strong>Pre-release columns, judged apart</strong> (1.37 defaults): `+apartNote+` <a href="prerelease/signoff.html">`) {
		t.Errorf("signoff.html (%v) does not link the pre-release sign-off:\n%s", err, page)
	}

	// The other way round: a pre-release that passed does not sign off
	// releases that failed.
	if m := Build([]report.Report{at("1.35.8", column("1.35", "incubating", failing)), at("1.37.3-rc.0", column("1.37", "incubating", nil))}, byRelease); m.ExitCode() != ExitFailed ||
		!strings.HasPrefix(m.Verdict(), "NOT signed off: 0 of 1 columns signed off; 1.35 defaults") || m.Apart.ExitCode() != ExitSignedOff {
		t.Errorf("a failed release with a pre-release that passed: %q, exit %d", m.Verdict(), m.ExitCode())
	}

	// Written: the releases' pages, and the pre-release's in prerelease/;
	// a later sign-off without pre-release columns leaves none behind.
	dir := t.TempDir()
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	var doc Document
	data, err := os.ReadFile(filepath.Join(dir, "signoff.json"))
	if err != nil || json.Unmarshal(data, &doc) != nil {
		t.Fatalf("signoff.json: %v", err)
	}
	if a := doc.PreRelease; a == nil || a.Path != "prerelease/signoff.json" || a.ExitCode != ExitFailed || a.SignedOff || !strings.HasPrefix(a.Verdict, apartVerdict) ||
		len(a.Columns) != 1 || doc.ExitCode != ExitSignedOff || !doc.SignedOff || len(doc.Columns) != 1 {
		t.Errorf("signoff.json: exit %d, signed off %v, columns %d, pre-release %+v", doc.ExitCode, doc.SignedOff, len(doc.Columns), doc.PreRelease)
	}
	apart, err := ReadDocument(filepath.Join(dir, PreReleaseDir, "signoff.json"))
	if err != nil || apart.ExitCode != ExitFailed || len(apart.Columns) != 1 || !apart.Columns[0].PreRelease {
		t.Errorf("prerelease/signoff.json: %+v, %v", apart, err)
	}
	for _, f := range []string{"signoff.md", "signoff.html"} {
		if page, err := os.ReadFile(filepath.Join(dir, PreReleaseDir, f)); err != nil || !strings.Contains(string(page), apartVerdict) {
			t.Errorf("prerelease/%s: %v", f, err)
		}
	}
	if err := Build([]report.Report{released}, byRelease).Write(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, PreReleaseDir)); !os.IsNotExist(err) {
		t.Errorf("an earlier pre-release sign-off stayed: %v", err)
	}
}

// A column no report was found for is of its release's row: 1.35's is
// released, so it stays among the releases (and fails them).
func TestAColumnWithoutReportIsOfItsRow(t *testing.T) {
	missing := report.Report{Meta: report.Meta{Release: "1.35"}, Problems: []string{"no report.json of this column was found"}}
	m := Build([]report.Report{missing, at("1.37.3-rc.0", column("1.37", "incubating", nil))}, byRelease)
	if len(m.Runs) != 1 || m.Runs[0].Release != "1.35" || m.ExitCode() != ExitFailed || m.Apart == nil {
		t.Errorf("runs %v, exit %d, apart %v", m.Runs, m.ExitCode(), m.Apart)
	}
}

// Between two sign-offs a column's patch that moved is a change of it.
func TestCompareSaysAPatchMoved(t *testing.T) {
	older := document(at("1.35.8", column("1.35", "incubating", nil)))
	newer := document(at("1.35.9", column("1.35", "incubating", nil)))
	if md := Compare(older, newer).Markdown(); !strings.Contains(md, "- 1.35 defaults: Kubernetes v1.35.8 → v1.35.9\n") {
		t.Errorf("diff:\n%s", md)
	}
	unknown := document(column("1.35", "incubating", nil))
	if d := Compare(unknown, newer); !d.Unchanged() {
		t.Errorf("a sign-off that named no version is no move: %+v", d.ColumnsChanged)
	}
}
