// Command signoff writes signoff.md, signoff.html and signoff.json from the
// report.json of each column a run covered (a column is one release under
// one DRA feature set, e2e/matrix). The columns expected are the matrix's
// for --releases and --features; a column no report is found for is a failed
// column. Reports are read from --artifacts DIR (DIR/<release>/report.json,
// as make e2e writes them) and from --cells DIR (DIR/<cell>/<release>/
// report.json: the cells of a CI matrix or of make signoff, each of which
// ran some of a column's groups); a column's reports merge into one
// (report.Merge). It exits 1 unless every column is signed off.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

type folders []string

func (f *folders) String() string     { return strings.Join(*f, ",") }
func (f *folders) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var artifacts, cells folders
	flag.Var(&artifacts, "artifacts", "a folder holding one folder per release, as make e2e writes it (repeatable)")
	flag.Var(&cells, "cells", "a folder holding one folder per cell, each holding one folder per release (repeatable)")
	releases := flag.String("releases", "", `the releases of the run, e.g. "1.33 1.34 1.35", or all`)
	features := flag.String("features", "all", "the DRA feature set of the run's columns, or all that each release lists")
	out := flag.String("out", "", "where signoff.md, signoff.html and signoff.json go (default: the first folder given)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, `usage: signoff [--artifacts DIR ...] [--cells DIR ...] --releases "1.35 1.36" [--features all|SET] [--out DIR]`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if strings.TrimSpace(*releases) == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	columns, err := matrix.Columns(*releases, *features)
	if err != nil {
		fmt.Fprintln(os.Stderr, "signoff:", err)
		os.Exit(2)
	}
	if len(artifacts) == 0 && len(cells) == 0 {
		artifacts = folders{"_artifacts"}
	}
	if *out == "" {
		*out = slices.Concat(artifacts, cells)[0]
	}
	found, err := find(artifacts, cells, columns)
	if err != nil {
		fail(err)
	}
	runs, missing, err := merge(columns, found)
	if err != nil {
		fail(err)
	}
	// Links go from the page to each column's report beside it: a column
	// made of several reports gets its merged report.md and report.json,
	// in a folder of its own.
	dirOf := func(r report.Report) string { return r.Release }
	if len(cells) > 0 || len(artifacts) > 1 || *out != artifacts[0] {
		dirOf = func(r report.Report) string { return strings.ReplaceAll(r.Column(), " ", "-") }
		for _, r := range runs {
			dir := filepath.Join(*out, dirOf(r))
			if err := errors.Join(os.MkdirAll(dir, 0o755), r.WriteJSON(filepath.Join(dir, "report.json")), r.WriteMarkdown(filepath.Join(dir, "report.md"))); err != nil {
				fail(err)
			}
		}
	}
	m := signoff.Build(runs, dirOf)
	if err := m.Write(*out); err != nil {
		fail(err)
	}
	fmt.Printf("signoff: %s (%s)\n", m.Verdict(), filepath.Join(*out, "signoff.html"))
	if len(missing) > 0 || m.SignedColumns() < len(runs) {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "signoff:", err)
	os.Exit(1)
}

// find reads every report of the columns' releases in the folders, by
// column. A report of a column the run does not expect (another feature
// set) is said and left out.
func find(artifacts, cells []string, columns []matrix.Column) (map[string][]report.Report, error) {
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
	for _, p := range uniq(paths) {
		r, err := report.Read(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p, err)
		case !expected[r.Column()]:
			fmt.Fprintf(os.Stderr, "signoff: %s is of column %s, which this sign-off does not cover: left out\n", p, r.Column())
			continue
		}
		byColumn[r.Column()] = append(byColumn[r.Column()], r)
	}
	return byColumn, nil
}

func uniq(in []string) []string {
	slices.Sort(in)
	return slices.Compact(in)
}

// merge gives one report per column, in the matrix's order: the merge of
// its reports. A column with none is a failed column.
func merge(columns []matrix.Column, found map[string][]report.Report) ([]report.Report, []string, error) {
	var runs []report.Report
	var missing []string
	for _, c := range columns {
		parts := found[c.Key()]
		if len(parts) == 0 {
			missing = append(missing, c.Key())
			runs = append(runs, report.Report{Meta: report.Meta{Release: c.Release, Features: c.Features, Allocator: c.Allocator},
				Problems: []string{"no report.json of this column was found"}})
			continue
		}
		merged, err := report.Merge(parts...)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, merged)
	}
	return runs, missing, nil
}
