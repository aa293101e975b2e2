// SPDX-License-Identifier: Apache-2.0

package signoff

// The sign-off's headline: one line for the whole matrix.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// Verdict is the page's one line: how many columns are signed off, and why
// the others are not, with each one's requirements by standing, led by
// "interrupted (Ctrl-C)" where a run was stopped; signed off only when
// every column is, and then for what each column could check. Where a
// column ran a pre-release the line starts with it ("Pre-release
// Kubernetes v1.38.0-beta.0 (not 1.38.0): "), so that the sign-off of one
// never reads as the release's.
//
// The columns asked for that do not exist close it ("; left out: 1.33 has
// no stable set"), neither signed off nor failed.
func (m Matrix) Verdict() string {
	v := m.verdict()
	if left := m.leftOutList(); left != "" {
		v += "; left out: " + left
	}
	pre := preReleases(m.Runs)
	if len(pre) == 0 {
		return v
	}
	return "Pre-release Kubernetes " + strings.Join(pre, ", ") + ": " + v
}

// preReleases names each pre-release the columns ran, once, in their order:
// "v1.38.0-beta.0 (not 1.38.0)".
func preReleases(runs []report.Report) []string {
	var out []string
	for _, r := range runs {
		if v := r.PreRelease(); v != "" {
			if s := "v" + v + " (not " + releaseOf(v) + ")"; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// verdict is the line, of released and pre-release columns alike.
func (m Matrix) verdict() string {
	signed := m.SignedColumns()
	if signed < len(m.Runs) || len(m.Runs) == 0 || m.Unit != "" {
		head := "NOT signed off"
		switch broke := m.clusterBroke(); {
		case m.Unit != "":
			// The CI workflow runs no cell unless make test passed: what
			// failed is the unit job, not a column.
			head += ": the unit job ended " + m.Unit + " (make test: its log says why), so no cell ran;"
		case m.interrupted():
			// The suite never aborts itself: a stopped run is a signal,
			// Ctrl-C or a CI job's cancel.
			head += ": interrupted (Ctrl-C);"
		case len(broke) > 0:
			// A cluster problem, not the requirements': said first.
			head += ": the cluster broke under the run: " + strings.Join(broke, "; ") + ";"
		default:
			head += ":"
		}
		var why []string
		for _, r := range m.Runs {
			if w := m.Unsigned(r); w != nil {
				why = append(why, fmt.Sprintf("%s: %s (requirements: %s)", r.Column(), strings.Join(w, "; "), m.Counts(r)))
			}
		}
		return fmt.Sprintf("%s %d of %d columns signed off; %s", head, signed, len(m.Runs), strings.Join(why, "; "))
	}
	var verdict string
	switch existing := anyExisting(m.Runs); {
	case len(m.Runs) == 1 && existing:
		head, tail := m.reach(m.Runs[0], true)
		verdict = "Signed off for " + head + "; " + strings.Join(tail, "; ")
	case len(m.Runs) == 1:
		head, tail := m.reach(m.Runs[0], false)
		verdict = fmt.Sprintf("Signed off: the one column (%s) passed every applicable check (skips are only those the release table declares): %s, %s",
			m.Runs[0].Column(), head, strings.Join(tail, ", "))
	default:
		var each []string
		for _, r := range m.Runs {
			head, tail := m.reach(r, false)
			each = append(each, r.Column()+": "+head+", "+strings.Join(tail, ", "))
		}
		how := "passed every applicable check (skips are only those the release table declares)"
		if existing {
			how = "passed every check within the run's reach (skips are only those the release table declares)"
		}
		verdict = fmt.Sprintf("Signed off: all %d columns (%s) %s; %s", len(m.Runs), columnList(m.Runs), how, strings.Join(each, "; "))
	}
	var defects []string
	for _, r := range m.Runs {
		if r.Totals.KnownDefects > 0 {
			defects = append(defects, fmt.Sprintf("%s: %d", r.Column(), r.Totals.KnownDefects))
		}
	}
	if len(defects) > 0 {
		verdict += "; known upstream defects met where declared (" + strings.Join(defects, ", ") + "), counted apart"
	}
	for _, r := range m.Runs {
		for _, n := range breakNotes(r) {
			verdict += "; " + r.Column() + ": " + n
		}
	}
	return verdict
}

func anyExisting(runs []report.Report) bool {
	for _, r := range runs {
		if r.Existing {
			return true
		}
	}
	return false
}

func columnList(runs []report.Report) string {
	keys := make([]string, len(runs))
	for i, r := range runs {
		keys[i] = r.Column()
	}
	return strings.Join(keys, ", ")
}
