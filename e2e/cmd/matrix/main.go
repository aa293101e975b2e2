// Command matrix prints the sign-off matrix (e2e/matrix): its columns
// (release x DRA feature set, with the allocator each runs) and their cells
// (a column's spec groups). --format github prints the cells as the CI
// workflow's strategy.matrix (one line of JSON); --format columns prints one
// column a line with the label filter its cells select together, which
// make signoff runs; --format releases the releases, for K8S_VERSIONS=all.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
)

func main() {
	releases := flag.String("releases", "all", `minor releases, e.g. "1.36 1.37", or all`)
	features := flag.String("features", "all", "a DRA feature set (defaults, stable, alpha) or all that each release lists")
	labels := flag.String("labels", "", "a label filter of one's own: one cell per column with it instead of the groups")
	format := flag.String("format", "table", "table, github, columns or releases")
	flag.Parse()
	if flag.NArg() > 0 {
		fail(2, fmt.Errorf("unexpected argument %q", flag.Arg(0)))
	}
	cols, err := matrix.Columns(*releases, *features)
	if err != nil {
		fail(2, err)
	}
	cells, err := matrix.Cells(cols, *labels)
	if err != nil {
		fail(2, err)
	}
	switch *format {
	case "github":
		// Filters keep their && as typed: the JSON is read in a log too.
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"include": cells}); err != nil {
			fail(1, err)
		}
	case "columns":
		groups, _ := matrix.GroupsFor(*labels) // checked by Cells above
		for _, c := range cols {
			fmt.Printf("%s\t%s\t%s\t%s\n", c.Release, c.Features, c.Allocator, matrix.Union(groups))
		}
	case "releases":
		seen := map[string]bool{}
		var out []string
		for _, c := range cols {
			if !seen[c.Release] {
				seen[c.Release] = true
				out = append(out, c.Release)
			}
		}
		fmt.Println(strings.Join(out, " "))
	case "table":
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "RELEASE\tFEATURES\tALLOCATOR\tGROUP\tLABELS")
		i := 0
		for _, c := range cols {
			for ; i < len(cells) && cells[i].Release == c.Release && cells[i].Features == c.Features; i++ {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", c.Release, c.Features, c.Allocator, cells[i].Group, cells[i].Labels)
			}
		}
		w.Flush()
		fmt.Printf("%d columns, %d cells\n", len(cols), len(cells))
	default:
		fail(2, fmt.Errorf("unknown --format %q: table, github, columns or releases", *format))
	}
}

func fail(code int, err error) {
	fmt.Fprintln(os.Stderr, "matrix:", err)
	os.Exit(code)
}
