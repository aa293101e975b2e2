// SPDX-License-Identifier: Apache-2.0

// Command bench prints where a release's run spends its time (e2e/bench):
// the timeline of one or more suite runs and, on a cluster the run kept,
// each component's gate move off and on repeated, with minimum, median and
// maximum. make bench runs the same through e2e/run; docs/benchmarks.md
// keeps its results.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/bench"
)

type reports []string

func (r *reports) String() string     { return strings.Join(*r, ",") }
func (r *reports) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	var files reports
	flag.Var(&files, "report", "a suite run's report.json (repeatable)")
	cluster := flag.String("cluster", "", "the cluster the first report's run kept, to time gate moves on (its release and DRA feature set are the run's, run.json beside the report; none: the reports alone)")
	kubeconfig := flag.String("kubeconfig", "", "that cluster's kubeconfig (default: kind's)")
	repeat := flag.Int("repeat", 3, "gate moves off and on per component")
	out := flag.String("out", "", "also write the table here")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: bench --report REPORT.json [--report ...] [--cluster NAME --repeat 3] [--out FILE]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if len(files) == 0 || *repeat < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := bench.Run(files, *cluster, *kubeconfig, *repeat, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
