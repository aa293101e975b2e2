// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/clusterbreak"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

// report.md: the report as a page a person reads (the CI job summary).

// Markdown renders report.md.
func (r Report) Markdown() string {
	var b strings.Builder
	kube := r.Release
	if ran := r.Ran(); ran != "" {
		kube += " (" + ran + ")"
	}
	fmt.Fprintf(&b, "# DRA admin access conformance: Kubernetes %s, profile %s\n\n", kube, r.Profile)
	where := "created by the suite"
	if r.Existing {
		where = "existing cluster"
	}
	fmt.Fprintf(&b, "Cluster `%s` (%s), started %s, %s in all.\n\n", r.Cluster, where, r.Started.UTC().Format(time.RFC3339), time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
	if r.Allocator != "" {
		fmt.Fprintf(&b, "kube-scheduler's allocator was `%s`, DRA feature set %s, for every spec but those whose row names another.\n\n", r.Allocator, r.FeatureSet)
	}
	if u := r.UnreachableText(); u != "" {
		fmt.Fprintf(&b, "Checked by no column, since no gate kube-scheduler may be given selects it for admin access: %s.\n\n", u)
	}
	fmt.Fprintf(&b, "**%d passed, %d failed, %d skipped**", r.Totals.Passed, r.Totals.Failed, r.Totals.Skipped)
	if r.Totals.KnownDefects > 0 {
		fmt.Fprintf(&b, ", **%d known upstream defect(s)**", r.Totals.KnownDefects)
	}
	if r.Totals.ClusterBroke > 0 {
		fmt.Fprintf(&b, ", **%d cut short by a broken cluster**", r.Totals.ClusterBroke)
	}
	if sel := r.Selection(); sel != "" {
		fmt.Fprintf(&b, " (%s)", sel)
	}
	self, moved := clusterbreak.ByItself(r.ClusterBreaks)
	switch {
	case len(self) > 0 && r.Totals.ClusterBroke > 0:
		fmt.Fprintf(&b, "\n\n**The cluster broke under the run**, not by the suite's doing (outside its own gate moves, restarts and release switches, and for longer than the watch's grace): %s. The %d spec(s) that ran while it was broken read `%s`: neither passed nor failed requirements, and the sign-off counts them as not run.",
			Cell(clusterbreak.Text(self)), r.Totals.ClusterBroke, ClusterBroke)
	case len(self) > 0:
		fmt.Fprintf(&b, "\n\nThe cluster broke under the run, not by the suite's doing, and no spec ran while it was broken (information; the specs' outcomes stand): %s.", Cell(clusterbreak.Text(self)))
	}
	if len(moved) > 0 {
		fmt.Fprintf(&b, "\n\n**Not back after the suite's own moves**: %s. That is the suite's move failing, or the release not coming back, not a cluster that broke by itself: the specs that failed meanwhile stay failed.", Cell(clusterbreak.Text(moved)))
	}
	b.WriteString("\n\nEvery skip below is one the release table declares for this release and mode (its need is named); any other skip counts as failed.")
	if n, needs := r.OutOfReachNeeds(); n > 0 {
		fmt.Fprintf(&b, " %d of them are out of reach of this run (%s), not of the release: a cluster the suite made, with the bundled driver, runs them.", n, strings.Join(needs, ", "))
	}
	b.WriteString("\n\n")
	if len(r.Components) > 0 {
		b.WriteString("| component | version |\n|---|---|\n")
		keys := make([]string, 0, len(r.Components))
		for k := range r.Components {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "| %s | %s |\n", k, r.Components[k])
		}
		b.WriteString("\n")
	}
	b.WriteString(r.provenanceMarkdown())
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "Suite problem: %s\n\n", Cell(p))
	}
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "A cell of this column is missing: %s\n\n", Cell(m))
	}
	b.WriteString(r.timelineMarkdown())
	b.WriteString("| result | spec | labels | profile | allocator | seconds | KEP requirement | reason |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Specs {
		reason := s.Reason
		switch {
		case s.OutOfReach:
			reason = "declared (" + s.Declared + "), out of reach of this run: " + reason
		case s.Declared != "":
			reason = "declared (" + s.Declared + "): " + reason
		}
		if s.Defect != "" {
			reason = "known upstream defect " + s.Defect + ": " + reason
		}
		allocator := s.Allocator
		if s.FeatureSet != r.FeatureSet {
			allocator += " (" + s.FeatureSet + ")"
		}
		kep := s.KEP
		if s.KEPID != "" {
			kep = s.KEPID + ": " + kep
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.1f | %s | %s |\n", s.State, Cell(s.Name), strings.Join(s.Labels, ", "), s.Profile, Cell(allocator), s.Seconds, Cell(kep), Cell(reason))
	}
	return b.String()
}

// timelineMarkdown is the "where the time went" table: each step's start
// from the suite's start (before the suite: "-") and its duration. Spec
// groups overlap each other and the moves inside them.
func (r Report) timelineMarkdown() string {
	if len(r.Timeline) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Where the time went\n\n")
	phases, ok := timeline.SplitPhases(r.Timeline)
	if ok {
		fmt.Fprintf(&b, "Spec groups: the parallel part %s, then the Serial part %s, one group after another (%d groups; each one's share of it is in the table).\n\n",
			clock(phases.Parallel), clock(phases.Serial), len(phases.SerialGroups))
	}
	b.WriteString("| at | kind | step | took |\n|---|---|---|---|\n")
	for _, s := range r.Timeline {
		at := "-"
		if !s.Started.IsZero() {
			at = "+" + clock(s.Started.Sub(r.Started))
		}
		took := clock(time.Duration(s.Seconds * float64(time.Second)))
		if ok && s.Kind == timeline.KindGroup && strings.Contains(s.Name, timeline.SerialMark) {
			took += fmt.Sprintf(" (%.0f%% of the Serial part)", 100*phases.Share(s))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", at, s.Kind, Cell(s.Name), took)
	}
	b.WriteString("\n")
	return b.String()
}

// clock writes a duration as m:ss.s.
func clock(d time.Duration) string {
	if d < 0 {
		return "-" + clock(-d)
	}
	// Round first: 6m59.96s must read 7:00.0, not 6:60.0.
	d = d.Round(100 * time.Millisecond)
	m := int(d / time.Minute)
	sec := (d - time.Duration(m)*time.Minute).Seconds()
	return fmt.Sprintf("%d:%04.1f", m, sec)
}

// Cell keeps a value on one Markdown table row: pipes escaped, one line,
// at most 300 characters.
func Cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// WriteMarkdown writes report.md.
func (r Report) WriteMarkdown(path string) error {
	return os.WriteFile(path, []byte(r.Markdown()), 0o644)
}

// provenanceMarkdown is what a sign-off needs to trust the run: which suite,
// tools, image and gates, and what selected the specs ("" where unknown).
func (r Report) provenanceMarkdown() string {
	rows := [][2]string{
		{"suite commit", r.SuiteCommit}, {"kind", r.KindVersion}, {"Go", r.GoVersion},
		{"node image", r.NodeImage}, {"node image ID", r.NodeImageID},
		{"allocator", r.Allocator}, {"allocators out of reach", r.UnreachableText()}, {"DRA feature set", r.FeatureSet},
		{"label filter", r.LabelFilter}, {"focus", strings.Join(r.Focus, " | ")}, {"skip", strings.Join(r.Skip, " | ")},
	}
	comps := make([]string, 0, len(r.Gates))
	for c := range r.Gates {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		source := " (the profile's)"
		switch {
		case r.GatesRead:
			source = " (read from the node)"
		case r.GatesFrom != "":
			source = " (" + r.GatesFrom + ")"
		}
		rows = append(rows, [2]string{"--feature-gates of " + c + source, r.Gates[c]})
	}
	var b strings.Builder
	b.WriteString("| provenance | |\n|---|---|\n")
	for _, row := range rows {
		v := row[1]
		if v == "" {
			v = "—"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], Cell(v))
	}
	b.WriteString("\n")
	return b.String()
}

// UnreachableText names each allocator implementation the release cannot
// reach, with why ("experimental: incubating supports ..."), or "".
func (m Meta) UnreachableText() string {
	names := make([]string, 0, len(m.Unreachable))
	for n := range m.Unreachable {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = "`" + n + "` (" + m.Unreachable[n] + ")"
	}
	return strings.Join(names, "; ")
}
