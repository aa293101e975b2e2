// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// The cells of a CI run as the signoff job downloads them: each cell's
// artifact holds its release's folder. Cells of one column merge; another
// feature set is another column; a column with no cell is missing; a
// report of a column the sign-off does not cover is left out.
func TestFindAndMergeByColumn(t *testing.T) {
	cells := t.TempDir()
	write := func(cell, release, features, state string) {
		t.Helper()
		r := report.Report{Meta: report.Meta{Release: release, Features: features}, Specs: []report.Spec{{Name: cell, State: state}}}
		dir := filepath.Join(cells, cell, release)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(filepath.Join(dir, "report.json")); err != nil {
			t.Fatal(err)
		}
	}
	write("e2e-1.36-defaults-parallel", "1.36", "defaults", "passed")
	write("e2e-1.36-defaults-serial", "1.36", "", "passed") // written before reports named their set
	write("e2e-1.36-stable-parallel", "1.36", "stable", "failed")
	write("e2e-1.37-defaults-parallel", "1.37", "defaults", "passed")

	columns, err := matrix.Columns("1.36", "all")
	if err != nil {
		t.Fatal(err)
	}
	found, err := find(nil, []string{cells}, columns, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := merge(columns, found, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 {
		t.Fatalf("runs %d: want the three columns of 1.36", len(runs))
	}
	if got := runs[0]; got.Column() != "1.36 defaults" || len(got.Specs) != 2 || got.Totals.Passed != 2 {
		t.Errorf("the defaults column merges its two cells: %s %+v", got.Column(), got.Totals)
	}
	if got := runs[1]; got.Column() != "1.36 stable" || got.Totals.Failed != 1 {
		t.Errorf("the stable column: %s %+v", got.Column(), got.Totals)
	}
	if got := runs[2]; got.Column() != "1.36 alpha" || len(got.Problems) != 1 {
		t.Errorf("the alpha column has no report: %s %v", got.Column(), got.Problems)
	}
}
