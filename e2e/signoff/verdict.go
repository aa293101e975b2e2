// SPDX-License-Identifier: Apache-2.0

package signoff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// How the verdict counts a requirement in a column (Cell.Standing).
const (
	// Checked: a spec of it passed or met a declared upstream defect, and none failed.
	Checked = "checked"
	// Failed: a spec of it failed.
	Failed = "failed"
	// OutOfReach: every spec of it took a declared skip whose row is one of
	// how the run reaches the cluster (release.OutOfReach).
	OutOfReach = "out of reach"
	// NotApplicable: every spec of it took a declared skip, and not all of
	// them out of reach: the release or its feature set lacks the behaviour.
	NotApplicable = "not applicable"
	// NotRun: no spec of it ran, not even to skip (a filter left them out,
	// an interrupt or a broken cluster cut them short, the interrupt came
	// before them, or the suite has none).
	NotRun = "not run"
)

// What signoff exits with (e2e/cmd/signoff).
const (
	// ExitSignedOff: every column is signed off, an existing cluster's for
	// the requirements within the run's reach.
	ExitSignedOff = 0
	// ExitFailed: a spec failed, a column has a suite problem or no report,
	// a run was interrupted, or a requirement of a whole run ran no spec.
	// (The runner that was interrupted exits with its own code, 130.)
	ExitFailed = 1
	// ExitLeftOut: what ran passed, but the run left requirements out that
	// it could have checked (LABELS, FOCUS or SKIP; UPGRADE=0 on a cluster
	// the suite made): not a sign-off.
	ExitLeftOut = 3
	// ExitClusterBroke: the cluster broke under a run (a node NotReady, a
	// control-plane component or the driver's pod down, not by the suite's
	// doing) under specs, cutting them short, and no spec failed otherwise: a
	// problem of the cluster, not of the requirements; run again on a cluster
	// that holds. A break that cut no spec short is information, not this.
	ExitClusterBroke = 4
)

func standing(c Cell) string {
	switch {
	case c.Failed > 0:
		return Failed
	case c.Passed > 0 || c.KnownDefects > 0:
		return Checked
	case c.OutOfReach > 0:
		// Some of its specs were out of reach: whatever else skipped, a
		// run that could reach them might have checked the requirement,
		// so it must not read as one the release lacks.
		return OutOfReach
	case c.Skipped > 0:
		return NotApplicable
	}
	return NotRun
}

// Counts is how many requirements (rows with a KEP ID) a column has of each
// standing.
type Counts struct {
	Checked       int `json:"checked"`
	Failed        int `json:"failed"`
	OutOfReach    int `json:"outOfReach"`
	NotApplicable int `json:"notApplicable"`
	NotRun        int `json:"notRun"`
}

// String lists the counts, those at zero left out but checked.
func (c Counts) String() string {
	parts := []string{fmt.Sprintf("%d checked", c.Checked)}
	for _, p := range []struct {
		n    int
		what string
	}{{c.Failed, Failed}, {c.OutOfReach, OutOfReach}, {c.NotApplicable, NotApplicable}, {c.NotRun, NotRun}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

// Counts counts the column's requirements by standing.
func (m Matrix) Counts(r report.Report) Counts {
	var c Counts
	for _, id := range m.withStanding(r, "") {
		switch m.Cells[id.text][r.Column()].Standing {
		case Checked:
			c.Checked++
		case Failed:
			c.Failed++
		case OutOfReach:
			c.OutOfReach++
		case NotApplicable:
			c.NotApplicable++
		default:
			c.NotRun++
		}
	}
	return c
}

type requirementRow struct{ id, text string }

// withStanding lists the column's requirements of one standing (all of
// them for ""), in the page's order.
func (m Matrix) withStanding(r report.Report, want string) []requirementRow {
	var out []requirementRow
	for _, req := range m.Requirements {
		q, ok := requirements.Of(req)
		if ok && (want == "" || m.Cells[req][r.Column()].Standing == want) {
			out = append(out, requirementRow{q.ID, req})
		}
	}
	return out
}

// OutOfReachWhy names what kept the column's out-of-reach requirements from
// the run, in a few words each, the need behind the most requirements first.
func (m Matrix) OutOfReachWhy(r report.Report) []string {
	count := map[string]int{}
	var needs []string
	for _, row := range m.withStanding(r, OutOfReach) {
		for _, n := range m.Cells[row.text][r.Column()].Needs {
			if count[n] == 0 {
				needs = append(needs, n)
			}
			count[n]++
		}
	}
	sort.SliceStable(needs, func(i, j int) bool { return count[needs[i]] > count[needs[j]] })
	out := make([]string, len(needs))
	for i, n := range needs {
		out[i] = release.Need(n).Brief()
	}
	return out
}

// ownDriver says whether the column's run claimed the devices of a driver
// given with DRIVER and DEVICE_CLASS: its report names the class (reports
// written before Meta.DeviceClass among the components), or a spec skipped
// for want of the bundled driver.
func ownDriver(r report.Report) bool {
	if r.DeviceClass != "" || r.Components["device class"] != "" {
		return true
	}
	for _, s := range r.Specs {
		if s.Declared == string(release.NeedBundledDriver) && s.State == "skipped" {
			return true
		}
	}
	return false
}

// judge says why a column is not signed off (nil when it is) and what
// signoff exits with for it.
func (m Matrix) judge(r report.Report) ([]string, int) {
	var why []string
	// The interrupt comes first: it is why the column's requirements are
	// not run. The specs it cut short are not failures (report.CutShort);
	// a spec that failed before it is.
	if r.Interrupted {
		why = append(why, interruption(r))
	}
	// So does a cluster that broke under the run where it cut specs short:
	// those are not failures either (report.ClusterBroke). A break that
	// touched no spec vetoes nothing: the column is what its specs say,
	// and the break is said as information.
	cut := r.Totals.ClusterBroke > 0 // only a break of the cluster's own cuts a spec short
	if cut {
		why = append(why, breakage(r))
	}
	// A cell without a report: the column failed, however its other
	// cells' specs read (never a run a filter left specs out of).
	why = append(why, r.Missing...)
	if r.Totals.Failed > 0 {
		why = append(why, fmt.Sprintf("%d failed", r.Totals.Failed))
	}
	for _, p := range r.Problems {
		why = append(why, "suite problem: "+report.FirstLine(p))
	}
	if len(why) > 0 {
		why = append(why, breakNotes(r)...)
		if cut && !r.Interrupted && r.Totals.Failed == 0 && len(r.Problems) == 0 && len(r.Missing) == 0 {
			return why, ExitClusterBroke
		}
		return why, ExitFailed
	}
	// A run that left specs out says no more than what ran.
	if sel := r.Selection(); sel != "" {
		return []string{sel + ", and what ran passed"}, ExitLeftOut
	}
	// A whole run in which a requirement ran no spec (not even one that
	// skipped as declared) has a hole in the suite, not a pass.
	if unrun := ids(m.withStanding(r, NotRun)); len(unrun) > 0 {
		return []string{"no spec ran for " + strings.Join(unrun, ", ")}, ExitFailed
	}
	// On an existing cluster what the run cannot reach is the cluster's
	// limit, and the verdict names it; a cluster the suite made reaches
	// everything but what the run was not given (the next release's image).
	if out := ids(m.withStanding(r, OutOfReach)); !r.Existing && len(out) > 0 {
		return []string{fmt.Sprintf("out of reach of this run on a cluster the suite made: %s (%s), and what ran passed",
			strings.Join(out, ", "), strings.Join(m.OutOfReachWhy(r), ", "))}, ExitLeftOut
	}
	// A run that checked nothing signs nothing off, however its skips read
	// (an existing cluster whose every promise took a declared skip).
	if len(m.withStanding(r, Checked)) == 0 {
		return []string{"no requirement was checked: every one was out of reach or not applicable"}, ExitLeftOut
	}
	return nil, ExitSignedOff
}

func ids(rows []requirementRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.id
	}
	return out
}

// Unsigned says why a column is not signed off: an interrupt, its
// failures and suite problems, the specs it left out, a requirement no spec of it ran, or on
// a cluster the suite made one out of the run's reach; nil when it is
// signed off.
func (m Matrix) Unsigned(r report.Report) []string {
	why, _ := m.judge(r)
	return why
}

// ExitCode is what signoff exits with: ExitFailed where any column failed
// or was interrupted (or there is none, or the unit job failed), else
// ExitClusterBroke where a column's cluster broke under its run, else
// ExitLeftOut where any left requirements out, else ExitSignedOff. The
// pre-release columns judged apart (Apart) have their own, which this
// does not count; the columns left out (LeftOut) count for nothing.
func (m Matrix) ExitCode() int {
	if len(m.Runs) == 0 || m.Unit != "" {
		return ExitFailed
	}
	code := ExitSignedOff
	for _, r := range m.Runs {
		switch _, c := m.judge(r); {
		case c == ExitFailed:
			return ExitFailed
		case c == ExitClusterBroke, c != ExitSignedOff && code != ExitClusterBroke:
			code = c
		}
	}
	return code
}

// SignedOff says whether the sign-off is one: every column signed off
// (and the unit job, where CI said it, passed).
func (m Matrix) SignedOff() bool {
	return len(m.Runs) > 0 && m.Unit == "" && m.SignedColumns() == len(m.Runs)
}

// SignedColumns counts the columns signed off.
func (m Matrix) SignedColumns() int {
	n := 0
	for _, r := range m.Runs {
		if m.Unsigned(r) == nil {
			n++
		}
	}
	return n
}

// Releases lists, in the order of the columns, each release and whether it
// is signed off: only when every column of it is.
func (m Matrix) Releases() []ReleaseVerdict {
	var out []ReleaseVerdict
	at := map[string]int{}
	for _, r := range m.Runs {
		i, seen := at[r.Release]
		if !seen {
			i = len(out)
			at[r.Release] = i
			out = append(out, ReleaseVerdict{Release: r.Release, SignedOff: true})
		}
		out[i].Columns = append(out[i].Columns, r.Column())
		out[i].SignedOff = out[i].SignedOff && m.Unsigned(r) == nil
	}
	return out
}

// ReleaseVerdict is one release's verdict over its columns.
type ReleaseVerdict struct {
	Release   string   `json:"release"`
	SignedOff bool     `json:"signedOff"`
	Columns   []string `json:"columns"`
}

// reach is what a signed-off column was signed off for (head), and the
// counts of what it was not (tail): on a cluster the suite made, every
// requirement the release has; on an existing one, those the run could
// reach, with a driver of its own or the bundled one, and how many were
// out of its reach and why.
func (m Matrix) reach(r report.Report, named bool) (head string, tail []string) {
	c := m.Counts(r)
	if !r.Existing {
		return fmt.Sprintf("%d requirements checked", c.Checked), []string{fmt.Sprintf("%d not applicable to this release", c.NotApplicable)}
	}
	what := "that can be checked through the API"
	if ownDriver(r) {
		what = "a driver of one's own can check"
	}
	head = fmt.Sprintf("the %d requirements %s on this cluster", c.Checked, what)
	if named {
		head += " (" + r.Column() + ")"
	}
	out := fmt.Sprintf("%d out of reach", c.OutOfReach)
	if why := m.OutOfReachWhy(r); len(why) > 0 {
		out += " (" + strings.Join(why, ", ") + ")"
	}
	tail = []string{out}
	if c.NotApplicable > 0 {
		tail = append(tail, fmt.Sprintf("%d not applicable to this release", c.NotApplicable))
	}
	return head, tail
}

// countsText is a column's requirements by standing, with what kept those
// out of reach from the run.
func (m Matrix) countsText(r report.Report) string {
	s := m.Counts(r).String()
	if why := m.OutOfReachWhy(r); len(why) > 0 {
		s += " (out of reach: " + strings.Join(why, ", ") + ")"
	}
	return s
}
