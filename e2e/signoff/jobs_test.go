// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// ciCells lays out the artifacts of a CI run's cells of the columns as the
// signoff job downloads them (each cell's folder, as its artifact is
// named): a spec per requirement, in the group its index gives it, passed
// in its cell and not selected in the others. Each cell's folder has its
// attempt and its job's result; the cells named in lost have nothing
// (their job uploaded nothing), those in reportless only the two files,
// with the result given.
func ciCells(t *testing.T, releases, features string, reportless map[string]string, lost ...string) string {
	t.Helper()
	columns, err := matrix.Columns(releases, features)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := matrix.Cells(columns, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range cells {
		if strings.Contains(strings.Join(lost, "\n")+"\n", c.Name+"\n") {
			continue
		}
		folder := filepath.Join(dir, c.Artifact)
		if err := os.MkdirAll(filepath.Join(folder, c.Release), 0o755); err != nil {
			t.Fatal(err)
		}
		result, ok := reportless[c.Name]
		if !ok {
			result = "success"
		}
		for name, text := range map[string]string{"attempt": "1", ResultFile: result} {
			if err := os.WriteFile(filepath.Join(folder, name), []byte(text+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if ok {
			continue
		}
		r := report.Report{Meta: report.Meta{Release: c.Release, Features: c.Features, LabelFilter: c.Labels}}
		for i, q := range requirements.All {
			s := report.Spec{Name: fmt.Sprintf("spec %02d", i), KEP: q.Text, State: "passed"}
			if matrix.Groups[i%len(matrix.Groups)].Name != c.Group {
				s.State = "not selected"
				r.Totals.NotSelected++
			} else {
				r.Totals.Passed++
			}
			r.Specs = append(r.Specs, s)
		}
		if err := r.WriteJSON(filepath.Join(folder, c.Release, "report.json")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// collectCI is the signoff job's sign-off of the cells in dir.
func collectCI(t *testing.T, dir, releases, features string, jobs *Jobs) (code int, last string, doc Document, md string) {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code = Collect(Sources{Cells: []string{dir}, Releases: releases, Features: features, Out: out, Jobs: jobs}, &stdout, &stderr)
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last = lines[len(lines)-1]
	doc, err := ReadDocument(filepath.Join(out, "signoff.json"))
	if err != nil {
		t.Fatalf("%v; stderr %s", err, stderr.String())
	}
	page, err := os.ReadFile(filepath.Join(out, "signoff.md"))
	if err != nil {
		t.Fatal(err)
	}
	return code, last, doc, string(page)
}

// Issue 66 (a): a cell that died before its report. Its two other cells'
// reports together select a part of the column's specs, which used to
// read "partial: 30 of 45 specs selected by LABELS=(!Serial) || (Serial &&
// !Disruptive), and what ran passed" and exit 3, as if a filter had been
// given. The column says which cell has no report and how its job ended
// (the file its folder has, or, where it uploaded nothing, the e2e job's
// one result), and fails (exit 1).
func TestAColumnWithoutACellsReportFailed(t *testing.T) {
	for _, c := range []struct {
		name       string
		reportless map[string]string
		lost       []string
		e2e, want  string
	}{
		{name: "its job failed before the report", reportless: map[string]string{"1.35 defaults serial": "failure"}, e2e: "failure",
			want: "1.35 defaults: no report: its job ended failure (e2e 1.35 defaults serial)"},
		{name: "its job was cancelled", reportless: map[string]string{"1.35 defaults serial": "cancelled"}, e2e: "cancelled",
			want: "1.35 defaults: no report: its job ended cancelled (e2e 1.35 defaults serial)"},
		{name: "its job uploaded nothing", lost: []string{"1.35 defaults serial"}, e2e: "failure",
			want: "1.35 defaults: no report: its job ended without uploading (e2e 1.35 defaults serial; the e2e job, of all its cells, ended failure)"},
		{name: "two cells ended alike", reportless: map[string]string{"1.35 defaults serial": "failure", "1.35 defaults disruptive": "failure"}, e2e: "failure",
			want: "1.35 defaults: no report: its job ended failure (e2e 1.35 defaults serial, e2e 1.35 defaults disruptive)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := ciCells(t, "1.35", "defaults", c.reportless, c.lost...)
			code, last, doc, md := collectCI(t, dir, "1.35", "defaults", &Jobs{Unit: "success", E2E: c.e2e})
			if code != ExitFailed || doc.ExitCode != ExitFailed || doc.SignedOff {
				t.Errorf("exit %d (signoff.json %d, signed off %v); want %d", code, doc.ExitCode, doc.SignedOff, ExitFailed)
			}
			if !strings.HasPrefix(last, "signoff: NOT signed off: 0 of 1 columns signed off; "+c.want+" (requirements: ") || strings.Contains(last, "partial") {
				t.Errorf("last line\n %q\nwant it to start\n %q", last, "signoff: NOT signed off: 0 of 1 columns signed off; "+c.want)
			}
			if !strings.HasPrefix(md, "**NOT signed off: 0 of 1 columns signed off; "+c.want) {
				t.Errorf("signoff.md starts %q", strings.SplitN(md, "\n", 2)[0])
			}
		})
	}
	// Every cell's report there: the column is signed off, as before.
	dir := ciCells(t, "1.35", "defaults", nil)
	if code, last, _, _ := collectCI(t, dir, "1.35", "defaults", &Jobs{Unit: "success", E2E: "success"}); code != ExitSignedOff {
		t.Errorf("every cell's report: exit %d: %s", code, last)
	}
}

// Issue 66 (b): the unit job failed, so no cell ran. The verdict says that
// first, and each column says the unit job ended so, rather than that the
// column's report is missing (a suite problem of each column).
func TestAFailedUnitJobIsWhyNoColumnHasAReport(t *testing.T) {
	code, last, doc, md := collectCI(t, t.TempDir(), "1.35 1.36", "defaults", &Jobs{Unit: "failure", E2E: "skipped"})
	n := len(requirements.All)
	col := fmt.Sprintf("no report: the unit job ended failure (requirements: 0 checked, %d not run)", n)
	want := "NOT signed off: the unit job ended failure (make test: its log says why), so no cell ran; 0 of 2 columns signed off; 1.35 defaults: " + col + "; 1.36 defaults: " + col
	if code != ExitFailed || last != "signoff: "+want+"." {
		t.Errorf("exit %d, last line\n %q\nwant %d,\n %q", code, last, ExitFailed, "signoff: "+want+".")
	}
	if doc.UnitResult != "failure" || doc.SignedOff || doc.ExitCode != ExitFailed || strings.Contains(md, "suite problem") {
		t.Errorf("signoff.json: unit %q, signed off %v, exit %d; signoff.md:\n%s", doc.UnitResult, doc.SignedOff, doc.ExitCode, md)
	}
	for _, c := range doc.Columns {
		if len(c.Unsigned) != 1 || c.Unsigned[0] != "no report: the unit job ended failure" {
			t.Errorf("column %s: %q", c.Key, c.Unsigned)
		}
	}
}

// Issue 66 (c): a dispatch of a feature set one of its releases lacks.
// The matrix ran the columns that exist; the sign-off lists the others as
// left out, on its pages, in its verdict and in signoff.json, and signs
// off what ran: a column left out is no failure.
func TestAColumnLeftOutIsSaidAndCountsForNothing(t *testing.T) {
	dir := ciCells(t, "1.36", "stable", nil)
	code, last, doc, md := collectCI(t, dir, "1.33 1.36", "stable", &Jobs{Unit: "success", E2E: "success"})
	if code != ExitSignedOff || !doc.SignedOff {
		t.Fatalf("exit %d, signed off %v: %s", code, doc.SignedOff, last)
	}
	if !strings.HasPrefix(last, "signoff: Signed off: the one column (1.36 stable) ") || !strings.HasSuffix(last, "; left out: 1.33 has no stable set.") {
		t.Errorf("last line %q", last)
	}
	if len(doc.LeftOut) != 1 || doc.LeftOut[0] != (LeftOutDoc{Release: "1.33", Features: "stable", Why: "1.33 has no stable set"}) || len(doc.Columns) != 1 {
		t.Errorf("signoff.json: left out %+v, %d columns", doc.LeftOut, len(doc.Columns))
	}
	if !strings.Contains(md, "\n**Left out**: 1.33 has no stable set. "+leftOutNote+"\n") {
		t.Errorf("signoff.md says nothing of 1.33:\n%s", md)
	}
	m := Matrix{LeftOut: []matrix.LeftOut{{Release: "1.33", Features: "stable"}}}
	if page, err := m.HTML(); err != nil || !strings.Contains(page, `<p id="left-out"><strong>Left out</strong>: 1.33 has no stable set. `) {
		t.Errorf("signoff.html says nothing of 1.33 (%v):\n%s", err, page)
	}
	// Nothing at all left: called wrongly, as the matrix refuses it.
	if code := Collect(Sources{Cells: []string{dir}, Releases: "1.33", Features: "stable", Out: t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{}); code != ExitUsage {
		t.Errorf("1.33 stable alone: exit %d, want %d", code, ExitUsage)
	}
}
