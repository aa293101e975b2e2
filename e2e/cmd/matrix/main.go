// SPDX-License-Identifier: Apache-2.0

// Command matrix prints the sign-off matrix (e2e/matrix): its columns
// (release x DRA feature set, with the allocator each runs) and their cells
// (a column's spec groups). --format github prints the cells as the CI
// workflow's strategy.matrix (one line of JSON); --format columns prints one
// column a line with the label filter its cells select together; --format
// releases the releases; --format offline the releases whose node image is
// built offline (kind publishes none), as a JSON array for the workflow's
// node-image jobs. make matrix prints the same through e2e/cmd/run.
//
// A release that does not list the feature set asked for (1.33 and
// stable) is left out, not refused: the columns that exist are printed,
// and each one left out is said on stderr ("matrix: left out: 1.33 has no
// stable set") and under the table. It exits 2 where the arguments are
// bad or nothing at all is left.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
)

func main() {
	releases := flag.String("releases", "all", `minor releases, e.g. "1.36 1.37", or all`)
	features := flag.String("features", "all", "a DRA feature set (defaults, stable, alpha) or all that each release lists")
	labels := flag.String("labels", "", "a label filter of one's own: one cell per column with it instead of the groups")
	format := flag.String("format", "table", "table, github, columns, releases or offline")
	flag.Parse()
	err := fmt.Errorf("unexpected argument %q", flag.Arg(0))
	if flag.NArg() == 0 {
		err = matrix.Print(os.Stdout, *format, *releases, *features, *labels)
	}
	// The table says what it left out itself; the other formats are
	// read by programs, so it goes to the log.
	if _, left, lerr := matrix.Available(*releases, *features); err == nil && lerr == nil && *format != "table" {
		for _, l := range left {
			fmt.Fprintln(os.Stderr, "matrix: left out:", l.Why())
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		os.Exit(2)
	}
}
