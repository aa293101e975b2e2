// SPDX-License-Identifier: Apache-2.0

// Command signoff writes signoff.md, signoff.html and signoff.json from the
// report.json of each column a run covered (a column is one release under
// one DRA feature set, e2e/matrix). The columns expected are the matrix's
// for --releases and --features; a column no report is found for is a failed
// column. Reports are read from --artifacts DIR (DIR/<release>/report.json,
// as make e2e writes them) and from --cells DIR (DIR/<cell>/<release>/
// report.json: the cells of a CI matrix or of make signoff, each of which
// ran some of a column's groups); a column's reports merge into one
// (report.Merge). A release of --releases that does not list the set of
// --features is left out (e2e/matrix's Available, as the CI workflow's
// matrix job left it out) and said: "left out: 1.33 has no stable set",
// which fails nothing.
//
// The CI workflow's signoff job says how the jobs before it ended:
// --unit-result (needs.unit.result; other than success, no cell ran, and
// the verdict says so first) and --e2e-result (needs.e2e.result, one for
// all the cells). Given either, every cell of each column (its groups, or
// the one cell of --labels, the run's own filter) is expected in a --cells
// folder named for its artifact (e2e-1.35-defaults-serial), and a cell
// without a report makes its column fail, saying how its job ended: "no
// report: its job ended failure (e2e 1.35 defaults serial)", from the
// file result the cell uploads, or "its job ended without uploading"
// where it uploaded nothing.
//
// Its last line on stdout is the verdict, the first line of the pages
// ("signoff: Signed off ..." or "signoff: NOT signed off: ..."), and its
// exit code says the same:
//
//	0  signed off: every column, a cluster given with --kubeconfig for the
//	   requirements the run can reach there ("Signed off for the N
//	   requirements ... on this cluster; M out of reach (...)")
//	1  not signed off: a spec failed, a suite problem, a column without a
//	   report or a cell without one, the unit job failed, a requirement of
//	   a whole run that no spec ran for, an interrupted run, or the
//	   reports could not be read or the pages written
//	2  the command was called wrongly (flags, releases, feature sets)
//	3  not a sign-off, though what ran passed: LABELS, FOCUS or SKIP left
//	   specs out, or on a cluster the suite made the run left a requirement
//	   out of its own reach (UPGRADE=0: no node image of the next release)
//	4  not signed off: the cluster broke under a run (a node NotReady, a
//	   control-plane component or the driver's pod down, not by the
//	   suite's doing), and no spec failed otherwise
//
// Where columns differ, 1 wins over 4, 4 over 3, and 3 over 0. Columns of
// a Kubernetes pre-release (1.38.0-beta.0) among released ones are judged
// apart: their own sign-off goes to OUT/prerelease/ and is said on the
// line before the last, and the last line and the exit code are the
// released columns'. A sign-off of pre-release columns alone exits as any
// other, its verdict led by "Pre-release Kubernetes v1.38.0-beta.0 (not
// 1.38.0): ". The work is signoff.Collect, which make e2e's runner
// (e2e/run) calls as its last step.
//
//	signoff diff OLD NEW
//
// says in Markdown what changed from one signoff.json to a later one:
// the verdict, columns added, gone or changed, each requirement's verdict
// that moved in a column, known upstream defects that appeared or expired.
// It exits 0 whether or not anything changed (the weekly CI run puts it in
// its job summary), and 2 where it was called wrongly or a file cannot be
// read as a sign-off of this schema version.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
)

type folders []string

func (f *folders) String() string     { return strings.Join(*f, ",") }
func (f *folders) Set(v string) error { *f = append(*f, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: diff, or the sign-off.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "diff" {
		return diff(args[1:], stdout, stderr)
	}
	return collect(args, stdout, stderr)
}

// diff prints what changed from the sign-off of args[0] to that of args[1].
func diff(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: signoff diff OLD/signoff.json NEW/signoff.json")
		return signoff.ExitUsage
	}
	older, err := signoff.ReadDocument(args[0])
	if err != nil {
		fmt.Fprintln(stderr, "signoff diff:", err)
		return signoff.ExitUsage
	}
	newer, err := signoff.ReadDocument(args[1])
	if err != nil {
		fmt.Fprintln(stderr, "signoff diff:", err)
		return signoff.ExitUsage
	}
	fmt.Fprint(stdout, signoff.Compare(older, newer).Markdown())
	return 0
}

// collect is the sign-off: it writes the pages and prints the verdict last, and
// returns the exit code (see the package comment).
func collect(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("signoff", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var artifacts, cells folders
	flags.Var(&artifacts, "artifacts", "a folder holding one folder per release, as make e2e writes it (repeatable)")
	flags.Var(&cells, "cells", "a folder holding one folder per cell, each holding one folder per release (repeatable)")
	releases := flags.String("releases", "", `the releases of the run, e.g. "1.33 1.34 1.35", or all`)
	features := flags.String("features", "all", "the DRA feature set of the run's columns, or all that each release lists")
	out := flags.String("out", "", "where signoff.md, signoff.html and signoff.json go (default: the first folder given)")
	var jobs signoff.Jobs
	flags.StringVar(&jobs.Unit, "unit-result", "", "the CI workflow's unit job's result (needs.unit.result): other than success, no cell ran")
	flags.StringVar(&jobs.E2E, "e2e-result", "", "the CI workflow's e2e job's result (needs.e2e.result), one for all its cells")
	flags.StringVar(&jobs.Labels, "labels", "", "the run's own label filter, which makes each column one cell (with --unit-result or --e2e-result)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, `usage: signoff [--artifacts DIR ...] [--cells DIR ...] --releases "1.35 1.36" [--features all|SET] [--out DIR]
              [--unit-result RESULT] [--e2e-result RESULT] [--labels FILTER]
       signoff diff OLD/signoff.json NEW/signoff.json`)
		flags.PrintDefaults()
		fmt.Fprintln(stderr, "exit: 0 signed off, 1 not signed off (a failure, a suite problem, a column or a cell without a report, the unit job failed), 2 called wrongly, 3 what ran passed but the run left requirements out (LABELS, FOCUS, SKIP; UPGRADE=0)")
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return signoff.ExitUsage
	}
	if strings.TrimSpace(*releases) == "" || flags.NArg() > 0 {
		flags.Usage()
		return signoff.ExitUsage
	}
	src := signoff.Sources{Artifacts: artifacts, Cells: cells, Releases: *releases, Features: *features, Out: *out}
	// The CI workflow's jobs, where it said how they ended: the cells of
	// each column are then known.
	flags.Visit(func(f *flag.Flag) {
		if f.Name == "unit-result" || f.Name == "e2e-result" {
			src.Jobs = &jobs
		}
	})
	if src.Jobs == nil && jobs.Labels != "" {
		fmt.Fprintln(stderr, "signoff: --labels names the CI run's cells: give it with --unit-result or --e2e-result")
		return signoff.ExitUsage
	}
	return signoff.Collect(src, stdout, stderr)
}
