// Command summary prints a report.json's closing line ("e2e: N passed, N
// failed, N skipped") and exits non-zero when anything failed, a skip the
// release table does not declare included.
package main

import (
	"fmt"
	"os"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summary REPORT.json")
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
	fmt.Println(r.Summary())
	if r.Totals.Failed > 0 || len(r.Problems) > 0 {
		os.Exit(1)
	}
}
