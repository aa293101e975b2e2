// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// ExitUsage: the sign-off was asked for wrongly (releases, feature sets,
// flags); nothing was judged.
const ExitUsage = 2

// Sources are where a sign-off reads its reports, and what it covers.
type Sources struct {
	// Artifacts are folders of one folder per release, as make e2e writes
	// them (DIR/<release>/report.json).
	Artifacts []string
	// Cells are folders of one folder per cell (a CI job, a make signoff
	// column, a device class), each of one folder per release.
	Cells []string
	// Columns are the columns expected, as the runner resolved and ran
	// them. Where it gives none (the signoff command, on reports another
	// machine made), Releases ("1.35 1.36" or all) and Features (a set, or
	// all) name them: the matrix's.
	Columns            []matrix.Column
	Releases, Features string
	// Out is where the pages go (default: the first folder given).
	Out string
	// Jobs, where given, is what the CI workflow says of the jobs before
	// the sign-off: each cell of a column is then expected in a folder of
	// Cells, and a column that lacks a cell's report says how that cell's
	// job ended.
	Jobs *Jobs
}

// Jobs is what the CI workflow's signoff job knows of the jobs before it
// (e2e/cmd/signoff's --unit-result, --e2e-result and --labels).
type Jobs struct {
	// Unit is the unit job's result (needs.unit.result): where it is not
	// success no cell ran, and the verdict says so first.
	Unit string
	// E2E is the e2e job's result (needs.e2e.result), one value for all
	// its cells: said of a cell that uploaded nothing.
	E2E string
	// Labels is the run's own label filter ("": the groups), which names
	// each column's cells (matrix.Cells): each in the folder its artifact
	// is named for (matrix.Cell.Artifact), with its report and the file
	// ResultFile.
	Labels string
}

// ResultFile is the file of a cell's folder that says how its CI job
// ended (job.status where it uploaded: success, failure, cancelled),
// written also where make e2e wrote no report.
const ResultFile = "result"

// Collect writes signoff.md, signoff.html and signoff.json from the
// reports of src and prints the verdict last on stdout; it returns the
// exit code the verdict has (ExitSignedOff, ExitFailed, ExitLeftOut,
// ExitClusterBroke), or
// ExitUsage where the columns cannot be named. Where released and
// pre-release columns ran, the pre-release ones are judged apart (Build):
// the verdict and the exit code are the released columns'. A column no report is found
// for is a failed column; a column's reports merge into one (report.Merge).
func Collect(src Sources, stdout, stderr io.Writer) int {
	// The columns asked for that do not exist (a release that does not
	// list the set) are left out, as the CI workflow's matrix left them
	// out, and said; they fail nothing.
	columns, err := src.Columns, error(nil)
	var left []matrix.LeftOut
	if columns == nil {
		columns, left, err = matrix.Available(src.Releases, src.Features)
	}
	var missing map[string][]string
	if err == nil && src.Jobs != nil {
		missing, err = missingCells(src.Cells, columns, *src.Jobs)
	}
	if err != nil {
		fmt.Fprintln(stderr, "signoff:", err)
		return ExitUsage
	}
	// Past here every way out prints a verdict last.
	fail := func(err error) int {
		fmt.Fprintln(stderr, "signoff:", err)
		fmt.Fprintln(stdout, "signoff: NOT signed off:", err)
		return ExitFailed
	}
	artifacts, cells, out := src.Artifacts, src.Cells, src.Out
	if len(artifacts) == 0 && len(cells) == 0 {
		artifacts = []string{"_artifacts"}
	}
	if out == "" {
		out = slices.Concat(artifacts, cells)[0]
	}
	found, err := find(artifacts, cells, columns, stderr)
	if err != nil {
		return fail(err)
	}
	runs, err := merge(columns, found, missing)
	if err != nil {
		return fail(err)
	}
	// Links go from the page to each column's report beside it: a column
	// made of several reports gets its merged report.md and report.json,
	// in a folder of its own.
	dirOf := func(r report.Report) string { return r.Release }
	if len(cells) > 0 || len(artifacts) > 1 || out != artifacts[0] {
		dirOf = func(r report.Report) string { return strings.ReplaceAll(r.Column(), " ", "-") }
		for _, r := range runs {
			dir := filepath.Join(out, dirOf(r))
			if err := errors.Join(os.MkdirAll(dir, 0o755), r.WriteJSON(filepath.Join(dir, "report.json")), r.WriteMarkdown(filepath.Join(dir, "report.md"))); err != nil {
				return fail(err)
			}
		}
	}
	m := Build(runs, dirOf)
	m.LeftOut = left
	if j := src.Jobs; j != nil && j.Unit != "" && j.Unit != "success" {
		m.Unit = j.Unit
		if m.Apart != nil {
			m.Apart.Unit = j.Unit
		}
	}
	if err := m.Write(out); err != nil {
		return fail(err)
	}
	// A column without a report has a suite problem: the exit code counts it.
	fmt.Fprintf(stdout, "signoff: signoff.md, signoff.html and signoff.json in %s\n", out)
	// The pre-release columns judged apart: said, but neither the last
	// line nor the exit code, which are the released columns'.
	if a := m.Apart; a != nil {
		fmt.Fprintf(stdout, "signoff: the pre-release columns (%s), judged apart in %s (their exit code, %d, is not this one's): %s.\n",
			columnList(a.Runs), filepath.Join(out, PreReleaseDir), a.ExitCode(), a.Verdict())
	}
	fmt.Fprintf(stdout, "signoff: %s.\n", m.Verdict())
	return m.ExitCode()
}

// find reads every report of the columns' releases in the folders, by the
// matrix's column (release and feature set). A report of a column the run
// does not expect (another feature set) is said and left out.
func find(artifacts, cells []string, columns []matrix.Column, stderr io.Writer) (map[string][]report.Report, error) {
	var paths []string
	for _, c := range columns {
		for _, dir := range artifacts {
			paths = append(paths, filepath.Join(dir, c.Release, "report.json"))
		}
		for _, dir := range cells {
			m, err := filepath.Glob(filepath.Join(dir, "*", c.Release, "report.json"))
			if err != nil {
				return nil, err
			}
			paths = append(paths, m...)
		}
	}
	expected := map[string]bool{}
	for _, c := range columns {
		expected[c.Key()] = true
	}
	byColumn := map[string][]report.Report{}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		r, err := report.Read(p)
		key := r.Release + " " + r.Set()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p, err)
		case !expected[key]:
			fmt.Fprintf(stderr, "signoff: %s is of column %s, which this sign-off does not cover: left out\n", p, r.Column())
			continue
		}
		byColumn[key] = append(byColumn[key], r)
	}
	return byColumn, nil
}

// merge gives one report per column, in the matrix's order: the merge of
// its reports. A column with none is a failed column: its report has
// nothing but that suite problem, or, where the cells are known
// (missing, by column key), how each cell's job ended. A column that
// lacks some of its cells' reports has them Missing: it failed, and
// never reads as a run a filter left specs out of.
func merge(columns []matrix.Column, found map[string][]report.Report, missing map[string][]string) ([]report.Report, error) {
	var runs []report.Report
	for _, c := range columns {
		parts := found[c.Key()]
		if len(parts) == 0 {
			r := report.Report{Meta: report.Meta{Release: c.Release, Features: c.Features, Allocator: c.Allocator}, Missing: missing[c.Key()]}
			if len(r.Missing) == 0 {
				r.Problems = []string{"no report.json of this column was found"}
			}
			runs = append(runs, r)
			continue
		}
		// The matrix's column holds a sign-off column per device class that
		// a driver of the user's own lent its runs (report.Meta.Column):
		// each is merged and judged on its own.
		var order []string
		byColumn := map[string][]report.Report{}
		for _, p := range parts {
			if byColumn[p.Column()] == nil {
				order = append(order, p.Column())
			}
			byColumn[p.Column()] = append(byColumn[p.Column()], p)
		}
		for _, k := range order {
			merged, err := report.Merge(byColumn[k]...)
			if err != nil {
				return nil, err
			}
			merged.Missing = append(merged.Missing, missing[c.Key()]...)
			runs = append(runs, merged)
		}
	}
	return runs, nil
}

// missingCells says, by column key, which of each column's cells (those
// of jobs.Labels) has no report in the cells folders dirs, and how its CI
// job ended: as its folder's ResultFile says, or, where it uploaded
// nothing (a runner lost, a job killed before its last steps), that and
// the e2e job's one result for all its cells. Where the unit job did not
// succeed no cell ran: each column says that once, and blames no cell.
// Cells of one column that ended alike are said together, each by its
// job's name on the run's page ("e2e 1.35 defaults serial").
func missingCells(dirs []string, columns []matrix.Column, jobs Jobs) (map[string][]string, error) {
	cells, err := matrix.Cells(columns, jobs.Labels)
	if err != nil {
		return nil, err
	}
	// said is one way cells of a column ended, and their jobs.
	type said struct {
		why, note string
		jobs      []string
	}
	byColumn := map[string][]*said{}
	for _, c := range cells {
		if cellReport(dirs, c) {
			continue
		}
		key := c.Release + " " + c.Features
		s := said{jobs: []string{"e2e " + c.Name}}
		switch result := cellResult(dirs, c); {
		case jobs.Unit != "" && jobs.Unit != "success":
			s = said{why: "no report: the unit job ended " + jobs.Unit}
		case result != "":
			s.why = "no report: its job ended " + result
		default:
			s.why = "no report: its job ended without uploading"
			if jobs.E2E != "" {
				s.note = "the e2e job, of all its cells, ended " + jobs.E2E
			}
		}
		if i := slices.IndexFunc(byColumn[key], func(o *said) bool { return o.why == s.why }); i >= 0 {
			byColumn[key][i].jobs = append(byColumn[key][i].jobs, s.jobs...)
		} else {
			byColumn[key] = append(byColumn[key], &s)
		}
	}
	out := map[string][]string{}
	for key, all := range byColumn {
		for _, s := range all {
			line := s.why
			if len(s.jobs) > 0 {
				line += " (" + strings.Join(s.jobs, ", ")
				if s.note != "" {
					line += "; " + s.note
				}
				line += ")"
			}
			out[key] = append(out[key], line)
		}
	}
	return out, nil
}

// cellReport says whether a folder of dirs holds the cell's report.
func cellReport(dirs []string, c matrix.Cell) bool {
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, c.Artifact, c.Release, "report.json")); err == nil {
			return true
		}
	}
	return false
}

// cellResult is how the cell's job ended, as its ResultFile says ("" where
// no folder of dirs holds one).
func cellResult(dirs []string, c matrix.Cell) string {
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, c.Artifact, ResultFile)); err == nil {
			if line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n"); line != "" {
				return line
			}
		}
	}
	return ""
}
