// SPDX-License-Identifier: Apache-2.0

package signoff

// Columns whose run did not go to its end: interrupted, or cut short by a
// cluster that broke under it; what the verdict says of each.

import (
	"fmt"
	"slices"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// interruption is an interrupted column's reason: how many specs ran to
// their end before the interrupt, of how many, and how many it cut short,
// which count as not run.
func interruption(r report.Report) string {
	finished := len(r.Specs) - r.Totals.NotSelected - r.Totals.CutShort
	s := fmt.Sprintf("interrupted after %d of %d specs", finished, len(r.Specs))
	if r.Totals.CutShort > 0 {
		s += fmt.Sprintf(", %d more cut short and counted not run", r.Totals.CutShort)
	}
	return s
}

// breakage is the reason of a column whose cluster broke under the run:
// what broke and when, and how many specs it cut short, which count as
// not run.
func breakage(r report.Report) string {
	return fmt.Sprintf("the cluster broke under the run: %s; %d spec(s) cut short by it, counted not run", r.SelfBreaks(), r.Totals.ClusterBroke)
}

// breakNotes are a column's breaks that are not why it is unsigned, as
// information: the cluster's own where they cut no spec short, and those
// after one of the suite's own moves (the move or the release failing:
// the specs that failed meanwhile are failures).
func breakNotes(r report.Report) []string {
	self, moved := clusterbreak.ByItself(r.ClusterBreaks)
	var out []string
	if len(self) > 0 && r.Totals.ClusterBroke == 0 {
		out = append(out, "the cluster broke under the run but cut no spec short (information): "+clusterbreak.Text(self))
	}
	if len(moved) > 0 {
		out = append(out, "not back after the suite's own moves (the move or the release failing, not the cluster): "+clusterbreak.Text(moved))
	}
	return out
}

// clusterBroke lists the breaks of every column whose cluster broke under
// specs, cutting them short.
func (m Matrix) clusterBroke() []string {
	var out []string
	for _, r := range m.Runs {
		if b := r.SelfBreaks(); b != "" && r.Totals.ClusterBroke > 0 {
			out = append(out, b)
		}
	}
	return out
}

// interrupted says whether a column's run was interrupted.
func (m Matrix) interrupted() bool {
	return slices.ContainsFunc(m.Runs, func(r report.Report) bool { return r.Interrupted })
}
