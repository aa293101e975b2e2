// SPDX-License-Identifier: Apache-2.0

// Command summary prints a report.json's closing line ("e2e: N passed, N
// failed, N skipped") and exits non-zero when anything failed, a skip the
// release table does not declare included, or the run was interrupted.
package main

import (
	"fmt"
	"os"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

const usage = `usage: summary REPORT.json

Prints the report's closing line ("e2e: N passed, N failed, N skipped"), the
specs a filter left out, any skip the release table does not declare, how
many declared skips were out of reach of the run (an existing cluster, a
driver of your own) and the first lines of each failure, and exits 1 when
anything failed or the run was interrupted. The sign-off's verdict is
signoff's (e2e/cmd/signoff).
`

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Print(usage)
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	r, err := report.Read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
	if sel := r.Selection(); sel != "" {
		fmt.Println("e2e:", sel)
	}
	for _, name := range r.Undeclared() {
		fmt.Println("e2e: undeclared skip (counted failed):", name)
	}
	fmt.Print(r.Failures(8, 300))
	if kd := r.KnownDefects(); kd != "" {
		fmt.Println(kd)
	}
	if oor := r.OutOfReach(); oor != "" {
		fmt.Println(oor)
	}
	if broke := r.ClusterBroke(); broke != "" {
		fmt.Println(broke)
	}
	fmt.Println(r.Summary())
	// The specs an interrupt or a broken cluster cut short are not
	// failures, but a run that stopped or lost its cluster under a spec is
	// not a pass (a break that cut no spec short is information).
	if r.Totals.Failed > 0 || len(r.Problems) > 0 || r.Interrupted || r.Totals.ClusterBroke > 0 {
		os.Exit(1)
	}
}
