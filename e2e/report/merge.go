// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"sort"
	"strings"
)

// Merge makes one report of a release from the reports of several runs of
// it that each selected part of its specs (a CI matrix runs each release's
// groups in cells of their own). A spec's outcome is the one of the run
// that selected it; a spec no run selected stays "not selected", so the
// merged report is only as complete as the cells together were. The
// reports must be of one sign-off column (release and DRA feature set: runs
// under different feature sets are different columns, never merged); the
// first one's provenance stands for all, and a cell whose provenance
// differs (another Kubernetes version, node image, suite commit or
// allocator) is a suite problem of the merged report.
func Merge(parts ...Report) (Report, error) {
	if len(parts) == 0 {
		return Report{}, fmt.Errorf("no report to merge")
	}
	out := parts[0]
	out.Specs, out.Problems, out.Timeline, out.Totals, out.Seconds, out.ClusterBreaks, out.Missing = nil, nil, nil, Totals{}, 0, nil, nil
	byName := map[string]Spec{}
	var filters []string
	for i, p := range parts {
		if p.Column() != out.Column() {
			return Report{}, fmt.Errorf("report %d is of Kubernetes %s, the first of %s: merge one column's reports", i+1, p.Column(), out.Column())
		}
		for _, d := range [][3]string{{"Kubernetes version", p.Version, out.Version}, {"suite commit", p.SuiteCommit, out.SuiteCommit},
			{"node image", p.NodeImageID, out.NodeImageID}, {"allocator", p.Allocator, out.Allocator}} {
			if d[1] != d[2] {
				out.Problems = append(out.Problems, fmt.Sprintf("merged reports differ in %s: %q and %q", d[0], d[2], d[1]))
			}
		}
		out.Problems = append(out.Problems, p.Problems...)
		out.Missing = append(out.Missing, p.Missing...)
		out.Timeline = append(out.Timeline, p.Timeline...)
		out.Seconds += p.Seconds
		out.Interrupted = out.Interrupted || p.Interrupted
		out.ClusterBreaks = append(out.ClusterBreaks, p.ClusterBreaks...)
		if p.LabelFilter != "" {
			filters = append(filters, "("+p.LabelFilter+")")
		}
		for _, s := range p.Specs {
			if prev, seen := byName[s.Name]; !seen || prev.State == "not selected" {
				byName[s.Name] = s
			}
		}
	}
	for _, s := range byName {
		out.Specs = append(out.Specs, s)
		out.Totals.count(s.State)
	}
	sort.SliceStable(out.Specs, func(i, j int) bool { return out.Specs[i].Name < out.Specs[j].Name })
	// The filter that selected the merged specs is the cells' together.
	out.LabelFilter = strings.Join(filters, " || ")
	if out.Totals.NotSelected == 0 && len(out.Missing) == 0 {
		out.LabelFilter, out.Focus, out.Skip = "", nil, nil
	}
	return out, nil
}
