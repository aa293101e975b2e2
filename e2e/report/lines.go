// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
)

// What a run prints of its report: the closing line, the known defects, the
// failures' first lines, and what the run left out.

// Summary is the plain closing line: "e2e: N passed, N failed, N skipped".
// Known defects are not in it (a CI reads that line's shape); KnownDefects
// says them on a line of their own.
func (r Report) Summary() string {
	return fmt.Sprintf("e2e: %d passed, %d failed, %d skipped", r.Totals.Passed, r.Totals.Failed, r.Totals.Skipped)
}

// KnownDefects is one line naming the upstream defects the run met where
// the release table declares them, or "" when none.
func (r Report) KnownDefects() string {
	if r.Totals.KnownDefects == 0 {
		return ""
	}
	var ids []string
	seen := map[string]bool{}
	for _, s := range r.Specs {
		if s.State == KnownDefect && !seen[s.Defect] {
			seen[s.Defect] = true
			ids = append(ids, s.Defect)
		}
	}
	return fmt.Sprintf("e2e: %d spec(s) met a known upstream defect (%s), as the release table declares: counted apart, neither passed nor failed",
		r.Totals.KnownDefects, strings.Join(ids, ", "))
}

// SelfBreaks is the breaks the cluster made by itself, in one line; "" where
// none.
func (r Report) SelfBreaks() string {
	self, _ := clusterbreak.ByItself(r.ClusterBreaks)
	return clusterbreak.Text(self)
}

// ClusterBroke is the lines saying what broke under the run and how many
// specs it cut short, or "" where nothing broke: those specs are counted
// apart, neither passed nor failed requirements. A break that cut no spec
// short is said as information; one after a move of the suite's is said
// as that move failing, its specs failed.
func (r Report) ClusterBroke() string {
	self, moved := clusterbreak.ByItself(r.ClusterBreaks)
	var lines []string
	switch {
	case len(self) > 0 && r.Totals.ClusterBroke > 0:
		lines = append(lines, fmt.Sprintf("e2e: the cluster broke under the run, not by the suite's doing: %s; %d spec(s) that ran while it was broken are counted apart (%s), not as failed requirements",
			clusterbreak.Text(self), r.Totals.ClusterBroke, ClusterBroke))
	case len(self) > 0:
		lines = append(lines, fmt.Sprintf("e2e: the cluster broke under the run, not by the suite's doing, and no spec ran while it was broken (information): %s", clusterbreak.Text(self)))
	}
	if len(moved) > 0 {
		lines = append(lines, fmt.Sprintf("e2e: not back after the suite's own moves (the move failing, or the release not coming back; the specs that failed meanwhile stay failed): %s", clusterbreak.Text(moved)))
	}
	return strings.Join(lines, "\n")
}

// OutOfReachNeeds counts the declared skips out of reach of the run and
// lists their needs, each once, in the order of the specs.
func (r Report) OutOfReachNeeds() (int, []string) {
	n := 0
	var needs []string
	for _, s := range r.Specs {
		if !s.OutOfReach {
			continue
		}
		n++
		if !slices.Contains(needs, s.Declared) {
			needs = append(needs, s.Declared)
		}
	}
	return n, needs
}

// OutOfReach is one line saying how many of the skips the way the run
// reaches the cluster caused, and for which needs, or "" when none did:
// those specs would run on a cluster the suite made, with the bundled
// driver, where the others could not.
func (r Report) OutOfReach() string {
	n, needs := r.OutOfReachNeeds()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("e2e: %d of the %d skips are out of reach of this run (%s), not of the release: a cluster the suite made, with the bundled driver, runs them",
		n, r.Totals.Skipped, strings.Join(needs, ", "))
}

// Failures is, for each failed spec and suite node, its name and the first
// lines of why it failed, each line cut to width. It is printed next to the
// summary because a CI log's tail is often all that is left of a run: the
// report and the cluster's logs go with the machine.
func (r Report) Failures(lines, width int) string {
	var b strings.Builder
	entry := func(name, why string) {
		fmt.Fprintf(&b, "FAILED %s\n", name)
		n := 0
		for _, l := range strings.Split(why, "\n") {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			if n == lines {
				b.WriteString("    ...\n")
				break
			}
			if len(l) > width {
				l = l[:width] + "..."
			}
			fmt.Fprintf(&b, "    %s\n", l)
			n++
		}
	}
	for _, p := range r.Problems {
		entry("suite node", p)
	}
	for _, s := range r.Specs {
		if s.State == "failed" {
			entry(s.Name, s.Reason)
		}
	}
	return b.String()
}

// Selection says, for a run that left specs out, how many of the release's
// specs it selected and by what: "partial: 3 of 40 specs selected by
// LABELS=authz"; for a run that was stopped, how many ran and how many of
// those it cut short; for a merged column that lacks a cell's report,
// that it is incomplete, never partial. It is "" when every spec was
// selected and the run went to its end.
func (r Report) Selection() string {
	if len(r.Missing) > 0 {
		return fmt.Sprintf("incomplete: %d of %d specs in the reports found; %s", len(r.Specs)-r.Totals.NotSelected, len(r.Specs), strings.Join(r.Missing, "; "))
	}
	if r.Interrupted {
		// Which of the specs it never reached the filter had selected is
		// not in Ginkgo's report; the count of those that ran is.
		s := fmt.Sprintf("interrupted: %d of %d specs ran before the run was stopped", len(r.Specs)-r.Totals.NotSelected, len(r.Specs))
		if r.Totals.CutShort > 0 {
			s += fmt.Sprintf(", %d of them cut short: neither passed nor failed", r.Totals.CutShort)
		}
		return s
	}
	if r.Totals.NotSelected == 0 {
		return ""
	}
	var by []string
	if r.LabelFilter != "" {
		by = append(by, "LABELS="+r.LabelFilter)
	}
	if len(r.Focus) > 0 {
		by = append(by, "FOCUS="+strings.Join(r.Focus, "|"))
	}
	if len(r.Skip) > 0 {
		by = append(by, "SKIP="+strings.Join(r.Skip, "|"))
	}
	if len(by) == 0 {
		by = []string{"the label filter or focus"}
	}
	return fmt.Sprintf("partial: %d of %d specs selected by %s", len(r.Specs)-r.Totals.NotSelected, len(r.Specs), strings.Join(by, ", "))
}
