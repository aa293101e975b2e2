// SPDX-License-Identifier: Apache-2.0

package signoff

// What each column ran: its heading (release, feature set, the Kubernetes
// it booted, a pre-release said as one) and the provenance rows a reader
// needs to trust it.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// Heading is a column's heading: release and feature set, the Kubernetes
// it ran (the patch, which kind's published image and the offline build
// need not share; "pre-release" with a pre-release's version, so that its
// column never reads as the release's), and the allocator.
func Heading(r report.Report) string {
	var about []string
	if ran := r.Ran(); ran != "" {
		about = append(about, ran)
	}
	if r.Allocator != "" {
		about = append(about, "allocator "+r.Allocator)
	}
	if len(about) == 0 {
		return r.Column()
	}
	return r.Column() + " (" + strings.Join(about, ", ") + ")"
}

// kubernetes is the provenance's row of the Kubernetes a column ran.
func kubernetes(r report.Report) string {
	switch pre := r.PreRelease(); {
	case pre != "":
		return "v" + pre + ", a pre-release: no sign-off of " + releaseOf(pre)
	case r.Version != "":
		return "v" + r.Version
	}
	return "unknown"
}

// releaseOf is the release a pre-release precedes ("1.38.0" of
// "1.38.0-beta.0").
func releaseOf(pre string) string {
	v, _, _ := strings.Cut(pre, "-")
	return v
}

type provenance struct {
	Column string
	Rows   [][2]string
}

func (m Matrix) provenance() []provenance {
	var out []provenance
	for _, r := range m.Runs {
		signed := "yes"
		if why := m.Unsigned(r); why != nil {
			signed = "no: " + strings.Join(why, "; ")
		}
		rows := [][2]string{
			{"signed off", signed},
			{"requirements", m.countsText(r)},
			{"result", result(r)},
			{"Kubernetes", kubernetes(r)},
			{"run", fmt.Sprintf("%s, %s", r.Started.UTC().Format(time.RFC3339), time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))},
			{"suite commit", orUnknown(r.SuiteCommit)},
			{"kind", orUnknown(r.KindVersion)},
			{"Go", orUnknown(r.GoVersion)},
			{"node image", orUnknown(r.NodeImage) + " " + r.NodeImageID},
			{"cluster", fmt.Sprintf("%s (profile %s%s)", r.Cluster, r.Profile, map[bool]string{true: ", existing cluster", false: ""}[r.Existing])},
			{"allocator", orUnknown(r.Allocator)},
			{"allocators out of reach", orNone(r.UnreachableText())},
			{"DRA feature set", orUnknown(r.FeatureSet)},
		}
		for _, k := range sortedKeys(r.Gates) {
			g := r.Gates[k]
			if g == "" {
				g = "release defaults"
			}
			label := "gates of " + k
			switch {
			case r.GatesRead:
				label += " (read from the nodes)"
			case r.GatesFrom != "":
				label += " (" + r.GatesFrom + ")"
			}
			rows = append(rows, [2]string{label, g})
		}
		for _, k := range sortedKeys(r.Components) {
			if k != "node image" {
				rows = append(rows, [2]string{k, r.Components[k]})
			}
		}
		out = append(out, provenance{Column: r.Column(), Rows: rows})
	}
	return out
}

// result is a column's specs by outcome, with those an interrupt cut short
// where it did.
func result(r report.Report) string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped, %d known upstream defects", r.Totals.Passed, r.Totals.Failed, r.Totals.Skipped, r.Totals.KnownDefects)
	if r.Totals.CutShort > 0 {
		s += fmt.Sprintf(", %d cut short by the interrupt", r.Totals.CutShort)
	}
	if r.Totals.ClusterBroke > 0 {
		s += fmt.Sprintf(", %d cut short by the broken cluster", r.Totals.ClusterBroke)
	}
	return s
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "unknown"
	}
	return s
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// orNone says "none" for an empty value that is no unknown.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
