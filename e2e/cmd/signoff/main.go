// Command signoff writes signoff.md, signoff.html and signoff.json from the
// report.json of each column a run covered (a column is one release under
// one DRA feature set, e2e/matrix). The columns expected are the matrix's
// for --releases and --features; a column no report is found for is a failed
// column. Reports are read from --artifacts DIR (DIR/<release>/report.json,
// as make e2e writes them) and from --cells DIR (DIR/<cell>/<release>/
// report.json: the cells of a CI matrix or of make signoff, each of which
// ran some of a column's groups); a column's reports merge into one
// (report.Merge).
//
// Its last line on stdout is the verdict, the first line of the pages
// ("signoff: Signed off ..." or "signoff: NOT signed off: ..."), and its
// exit code says the same:
//
//	0  signed off: every column, a cluster given with --kubeconfig for the
//	   requirements the run can reach there ("Signed off for the N
//	   requirements ... on this cluster; M out of reach (...)")
//	1  not signed off: a spec failed, a suite problem, a column without a
//	   report, a requirement of a whole run that no spec ran for, an
//	   interrupted run, or the reports could not be read or the pages written
//	2  the command was called wrongly (flags, releases, feature sets)
//	3  not a sign-off, though what ran passed: LABELS, FOCUS or SKIP left
//	   specs out, or on a cluster the suite made the run left a requirement
//	   out of its own reach (UPGRADE=0: no node image of the next release)
//
// Where columns differ, 1 wins over 3, and 3 over 0.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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

// exitUsage is the exit code of a command called wrongly.
const exitUsage = 2

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: it writes the pages and prints the verdict last, and
// returns the exit code (see the package comment).
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("signoff", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var artifacts, cells folders
	flags.Var(&artifacts, "artifacts", "a folder holding one folder per release, as make e2e writes it (repeatable)")
	flags.Var(&cells, "cells", "a folder holding one folder per cell, each holding one folder per release (repeatable)")
	releases := flags.String("releases", "", `the releases of the run, e.g. "1.33 1.34 1.35", or all`)
	features := flags.String("features", "all", "the DRA feature set of the run's columns, or all that each release lists")
	out := flags.String("out", "", "where signoff.md, signoff.html and signoff.json go (default: the first folder given)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, `usage: signoff [--artifacts DIR ...] [--cells DIR ...] --releases "1.35 1.36" [--features all|SET] [--out DIR]`)
		flags.PrintDefaults()
		fmt.Fprintln(stderr, "exit: 0 signed off, 1 not signed off (a failure, a suite problem, a column without a report), 2 called wrongly, 3 what ran passed but the run left requirements out (LABELS, FOCUS, SKIP; UPGRADE=0)")
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if strings.TrimSpace(*releases) == "" || flags.NArg() > 0 {
		flags.Usage()
		return exitUsage
	}
	columns, err := matrix.Columns(*releases, *features)
	if err != nil {
		fmt.Fprintln(stderr, "signoff:", err)
		return exitUsage
	}
	// Past here every way out prints a verdict last.
	fail := func(err error) int {
		fmt.Fprintln(stderr, "signoff:", err)
		fmt.Fprintln(stdout, "signoff: NOT signed off:", err)
		return signoff.ExitFailed
	}
	if len(artifacts) == 0 && len(cells) == 0 {
		artifacts = folders{"_artifacts"}
	}
	if *out == "" {
		*out = slices.Concat(artifacts, cells)[0]
	}
	found, err := find(artifacts, cells, columns, stderr)
	if err != nil {
		return fail(err)
	}
	runs, err := merge(columns, found)
	if err != nil {
		return fail(err)
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
				return fail(err)
			}
		}
	}
	m := signoff.Build(runs, dirOf)
	if err := m.Write(*out); err != nil {
		return fail(err)
	}
	// A column without a report has a suite problem: the exit code counts it.
	fmt.Fprintf(stdout, "signoff: signoff.md, signoff.html and signoff.json in %s\n", *out)
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
	for _, p := range uniq(paths) {
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

func uniq(in []string) []string {
	slices.Sort(in)
	return slices.Compact(in)
}

// merge gives one report per column, in the matrix's order: the merge of
// its reports. A column with none is a failed column: its report has
// nothing but that suite problem.
func merge(columns []matrix.Column, found map[string][]report.Report) ([]report.Report, error) {
	var runs []report.Report
	for _, c := range columns {
		parts := found[c.Key()]
		if len(parts) == 0 {
			runs = append(runs, report.Report{Meta: report.Meta{Release: c.Release, Features: c.Features, Allocator: c.Allocator},
				Problems: []string{"no report.json of this column was found"}})
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
			runs = append(runs, merged)
		}
	}
	return runs, nil
}
