// SPDX-License-Identifier: Apache-2.0

package matrix

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Print writes the matrix of releases ("all" or minors), features ("all"
// or a set) and a label filter of one's own (custom, "" for the groups) in
// a format: table (each column's cells, for people), github (the cells as
// the CI workflow's strategy.matrix, one line of JSON), columns (a column
// a line with the label filter its cells select together, which make
// signoff runs), releases (the releases, for K8S_VERSIONS=all) or offline
// (the releases whose node image is built offline, Offline, as one line
// of JSON: the CI workflow's node-image jobs). A release that does not
// list the set asked for is left out (Available), and the table says so
// below its columns. An error is a bad argument, or a request that leaves
// no column.
func Print(w io.Writer, format, releases, features, custom string) error {
	cols, left, err := Available(releases, features)
	if err != nil {
		return err
	}
	cells, err := Cells(cols, custom)
	if err != nil {
		return err
	}
	switch format {
	case "github":
		// Filters keep their && as typed: the JSON is read in a log too.
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(map[string]any{"include": cells})
	case "columns":
		groups, _ := GroupsFor(custom) // checked by Cells above
		for _, c := range cols {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", c.Release, c.Features, c.Allocator, Union(groups))
		}
	case "offline":
		// Always an array, [] for none: the workflow reads it with fromJSON.
		offline, err := Offline(cols)
		if err != nil {
			return err
		}
		return json.NewEncoder(w).Encode(offline)
	case "releases":
		var out []string
		for _, c := range cols {
			if len(out) == 0 || out[len(out)-1] != c.Release {
				out = append(out, c.Release)
			}
		}
		fmt.Fprintln(w, strings.Join(out, " "))
	case "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RELEASE\tFEATURES\tALLOCATOR\tGROUP\tLABELS")
		i := 0
		for _, c := range cols {
			for ; i < len(cells) && cells[i].Release == c.Release && cells[i].Features == c.Features; i++ {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Release, c.Features, c.Allocator, cells[i].Group, cells[i].Labels)
			}
		}
		tw.Flush()
		fmt.Fprintf(w, "%d columns, %d cells\n", len(cols), len(cells))
		for _, l := range left {
			fmt.Fprintf(w, "left out: %s\n", l.Why())
		}
	default:
		return fmt.Errorf("unknown --format %q: table, github, columns, releases or offline", format)
	}
	return nil
}
