// SPDX-License-Identifier: Apache-2.0

// Package signoff turns the reports of several runs into the page a release
// team signs: KEP requirement x column, where a column is one release under
// one DRA feature set (so one allocator implementation for the whole run),
// each cell passed, failed, skipped (with the declared reason: not
// applicable to the release, or out of reach of the run) or a known
// upstream defect (with the cause the spec saw), and for each column where
// the result came from (suite commit, kind, node image, component versions,
// the gates read from the components, Go, date and duration). A release is
// signed off only where each of its columns is; verdict.go says when a
// column is, counts its requirements and writes the verdict's line. It
// renders signoff.md, a self-contained signoff.html and signoff.json, for
// programs that compare two sign-offs.
package signoff

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// NoRequirement heads the specs that name no KEP requirement.
const NoRequirement = "(no KEP requirement named)"

// Cell is one requirement in one column; signoff.json carries it as is,
// less the page's link.
type Cell struct {
	// State is passed, failed, known defect, skipped, not run (also where
	// the only specs were cut short by an interrupt), or "" (no such spec
	// in that column).
	State   string `json:"state"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	// KnownDefects counts specs that met a declared upstream defect.
	KnownDefects int `json:"knownDefects"`
	// CutShort counts specs an interrupt stopped mid-run: not run, never
	// failed, so alone they leave the requirement not run.
	CutShort int `json:"cutShort,omitempty"`
	// ClusterBroke counts specs that ran while the cluster was broken
	// under the run (report.ClusterBroke): not run, like CutShort.
	ClusterBroke int `json:"clusterBroke,omitempty"`
	// OutOfReach counts the skips out of reach of the run (of Skipped),
	// and Needs names their needs (release.Need).
	OutOfReach int      `json:"outOfReach,omitempty"`
	Needs      []string `json:"outOfReachNeeds,omitempty"`
	// Standing is how the verdict counts the requirement in this column:
	// checked, failed, out of reach, not applicable or not run.
	Standing string `json:"standing"`
	// Reasons are the failures' first lines, the declared skips' reasons, or
	// the known defects' verdicts.
	Reasons []string `json:"reasons,omitempty"`
	// Link is where a failed cell's evidence lies, relative to the page.
	Link string `json:"-"`
	// Defects are the upstream issues of the known defects met
	// ("kubernetes/kubernetes#140729"), which the pages link;
	// signoff.json lists them with their URLs (Document.KnownDefects).
	Defects []string `json:"-"`
}

// Matrix is the sign-off.
type Matrix struct {
	Requirements []string
	// Runs are one per column (report.Meta.Column), in the order given.
	Runs []report.Report
	// Cells are by requirement, then by column.
	Cells map[string]map[string]Cell
	// Apart is the sign-off of the pre-release columns where the runs
	// held released ones too: judged apart, so that a pre-release
	// neither fails the releases' sign-off nor signs it off, and written
	// into PreReleaseDir beside it. Nil otherwise: a sign-off of
	// pre-release columns alone is the sign-off, its verdict saying so.
	Apart *Matrix
	// LeftOut are the columns asked for that do not exist (a release that
	// does not list the set: matrix.Available): said on the pages and in
	// the verdict, counted as nothing.
	LeftOut []matrix.LeftOut
	// Unit is the CI workflow's unit job's result where it was not
	// success ("failure"): no cell ran, and the verdict says so first.
	Unit string
}

// PreReleaseDir is the folder, beside a sign-off of released columns,
// that holds the sign-off of the pre-release columns judged apart.
const PreReleaseDir = "prerelease"

// Build makes the matrix. artifactsOf gives, per column's report, the folder
// (relative to where the page is written) that holds its report.md and logs.
// Where the runs hold released and pre-release columns, the pre-release
// ones go to the Apart matrix.
func Build(runs []report.Report, artifactsOf func(report.Report) string) Matrix {
	var released, pre []report.Report
	for _, r := range runs {
		if r.PreRelease() != "" {
			pre = append(pre, r)
		} else {
			released = append(released, r)
		}
	}
	if len(released) == 0 || len(pre) == 0 {
		return build(runs, artifactsOf)
	}
	m := build(released, artifactsOf)
	// Its page is one folder down: its links go up to the reports.
	apart := build(pre, func(r report.Report) string { return "../" + artifactsOf(r) })
	m.Apart = &apart
	return m
}

// build makes the matrix of every run given.
func build(runs []report.Report, artifactsOf func(report.Report) string) Matrix {
	m := Matrix{Runs: runs, Cells: map[string]map[string]Cell{}}
	for _, r := range runs {
		for _, s := range r.Specs {
			req := s.KEP
			if req == "" {
				req = NoRequirement
			}
			if m.Cells[req] == nil {
				m.Cells[req] = map[string]Cell{}
				m.Requirements = append(m.Requirements, req)
			}
			c := m.Cells[req][r.Column()]
			switch s.State {
			case "passed":
				c.Passed++
			case "failed":
				c.Failed++
				c.Reasons = append(c.Reasons, report.FirstLine(s.Name+": "+s.Reason))
				c.Link = artifactsOf(r) + "/report.md"
			case "skipped":
				c.Skipped++
				declared := s.Declared
				if s.OutOfReach {
					c.OutOfReach++
					c.Needs = append(c.Needs, s.Declared)
					declared += ", out of reach"
				}
				c.Reasons = append(c.Reasons, fmt.Sprintf("declared (%s): %s", declared, report.FirstLine(s.Reason)))
			case report.KnownDefect:
				c.KnownDefects++
				c.Reasons = append(c.Reasons, report.FirstLine(s.Reason))
				c.Defects = append(c.Defects, s.Defect)
			case report.CutShort:
				c.CutShort++
				c.Reasons = append(c.Reasons, report.FirstLine(s.Name+": cut short by the interrupt"))
			case report.ClusterBroke:
				c.ClusterBroke++
				c.Reasons = append(c.Reasons, report.FirstLine(s.Name+": cut short by the broken cluster: "+s.Reason))
			}
			m.Cells[req][r.Column()] = c
		}
	}
	// Every requirement of the list is a row, also where no spec of it ran
	// in this run (a label filter left it out): its cells say "not run".
	for _, r := range requirements.All {
		if m.Cells[r.Text] == nil {
			m.Cells[r.Text] = map[string]Cell{}
			m.Requirements = append(m.Requirements, r.Text)
		}
	}
	for req, byColumn := range m.Cells {
		for _, r := range runs {
			c := byColumn[r.Column()]
			c.State, c.Standing = state(c), standing(c)
			c.Reasons, c.Needs, c.Defects = unique(c.Reasons), unique(c.Needs), unique(c.Defects)
			byColumn[r.Column()] = c
		}
		m.Cells[req] = byColumn
	}
	// The list's order (by ID) first, then any other text.
	sort.SliceStable(m.Requirements, func(i, j int) bool {
		a, aok := requirements.Of(m.Requirements[i])
		b, bok := requirements.Of(m.Requirements[j])
		switch {
		case aok && bok:
			return indexOf(a.ID) < indexOf(b.ID)
		case aok != bok:
			return aok
		}
		return m.Requirements[i] < m.Requirements[j]
	})
	return m
}

func indexOf(id string) int {
	for i, r := range requirements.All {
		if r.ID == id {
			return i
		}
	}
	return len(requirements.All)
}

// Label is a row's heading: the requirement's ID and text.
func Label(req string) string {
	if r, ok := requirements.Of(req); ok {
		return r.ID + ": " + req
	}
	return req
}

func state(c Cell) string {
	switch {
	case c.Failed > 0:
		return "failed"
	case c.KnownDefects > 0:
		// A promise upstream breaks is not shown as passed, even where other
		// specs of the requirement passed.
		return report.KnownDefect
	case c.Passed > 0:
		return "passed"
	case c.Skipped > 0:
		return "skipped"
	}
	return "not run"
}

func unique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// summary is a cell in words, the same on both pages.
func (c Cell) summary() string {
	switch c.State {
	case "":
		return "—"
	case "failed":
		return fmt.Sprintf("failed %d of %d", c.Failed, c.Passed+c.Failed+c.Skipped+c.KnownDefects)
	case report.KnownDefect:
		return fmt.Sprintf("known upstream defect %d of %d", c.KnownDefects, c.Passed+c.Skipped+c.KnownDefects)
	case "passed":
		if c.Skipped > 0 {
			return fmt.Sprintf("passed %d (%d declared skips)", c.Passed, c.Skipped)
		}
		return fmt.Sprintf("passed %d", c.Passed)
	case "skipped":
		// Skipped is which of the two the requirement is in this column.
		return c.Standing
	case "not run":
		if c.CutShort > 0 {
			return fmt.Sprintf("not run (%d cut short by the interrupt)", c.CutShort)
		}
		if c.ClusterBroke > 0 {
			return fmt.Sprintf("not run (%d cut short by the broken cluster)", c.ClusterBroke)
		}
	}
	return c.State
}

// text is a cell as the Markdown page shows it: failures linked, skips with
// their reasons (the HTML page lists the reasons under every cell).
func (c Cell) text() string {
	switch c.State {
	case "failed":
		return fmt.Sprintf("**%s** ([report](%s))", c.summary(), c.Link)
	case "skipped":
		return c.summary() + ": " + strings.Join(c.Reasons, "; ")
	case report.KnownDefect:
		// The issues' links before the reasons, which a long cell cuts.
		var links []string
		for _, d := range c.Defects {
			links = append(links, markdownLink(d, issueURL(d)))
		}
		return c.summary() + " (" + strings.Join(links, ", ") + "): " + strings.Join(c.Reasons, "; ")
	}
	return c.summary()
}

// markdownLink is text linked to url, or text alone where there is no url.
func markdownLink(text, url string) string {
	if url == "" {
		return text
	}
	return "[" + text + "](" + url + ")"
}

// The KEP's text and its tracking issue, which both pages link under their
// title, in these words.
const (
	kepText  = "KEP-5018, DRA Admin Access"
	kepIssue = "tracking issue kubernetes/enhancements#5018"
)

// apartNote says what the pre-release columns' own sign-off is, on both
// pages of the releases' sign-off.
const apartNote = "neither this verdict nor its exit code counts them; their own sign-off is"

// leftOutNote says what a column left out is, on both pages.
const leftOutNote = "Asked for, but no column: the release does not list that DRA feature set, so nothing ran and nothing failed."

// leftOutList names the columns left out, "" where none was.
func (m Matrix) leftOutList() string {
	whys := make([]string, len(m.LeftOut))
	for i, l := range m.LeftOut {
		whys[i] = l.Why()
	}
	return strings.Join(whys, ", ")
}

// defectsNote says what a known upstream defect is, on both pages.
const defectsNote = "Met where the release table declares them (clusters/release/defects.go, docs/verdicts.md): each spec checked that the promise failed as declared, for the declared cause, and counts as a known upstream defect, neither passed nor failed."

// standingNote says what the two kinds of declared skip mean, on both pages.
const standingNote = "A requirement is not applicable where the release or its feature set lacks the behaviour, and out of reach where only how the run reaches the cluster kept its specs from running (an existing cluster's nodes, components and metric endpoints, a driver of your own): an existing cluster is signed off for what it can check, and its verdict counts the rest."

// Markdown renders signoff.md.
func (m Matrix) Markdown() string {
	var b strings.Builder
	// The verdict is the first line: what a reader (or a CI summary) sees first.
	fmt.Fprintf(&b, "**%s.**\n\n", m.Verdict())
	b.WriteString("# DRA admin access (KEP-5018) sign-off\n\n")
	fmt.Fprintf(&b, "The rows are the requirements of %s (%s), each by its ID.\n\n",
		markdownLink(kepText, requirements.KEPReadme), markdownLink(kepIssue, requirements.KEPIssue))
	b.WriteString("One column per release and DRA feature set (so per allocator implementation); a release is signed off only where each of its columns is. " + standingNote + "\n\n")
	if a := m.Apart; a != nil {
		fmt.Fprintf(&b, "**Pre-release columns, judged apart** (%s): %s [%s](%s): %s.\n\n",
			columnList(a.Runs), apartNote, PreReleaseDir+"/signoff.md", PreReleaseDir+"/signoff.md", a.Verdict())
	}
	if left := m.leftOutList(); left != "" {
		fmt.Fprintf(&b, "**Left out**: %s. %s\n\n", left, leftOutNote)
	}
	b.WriteString("| KEP requirement |")
	for _, r := range m.Runs {
		fmt.Fprintf(&b, " %s |", report.Cell(Heading(r)))
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(m.Runs)) + "\n")
	for _, req := range m.Requirements {
		fmt.Fprintf(&b, "| %s |", report.Cell(Label(req)))
		for _, r := range m.Runs {
			fmt.Fprintf(&b, " %s |", report.Cell(m.Cells[req][r.Column()].text()))
		}
		b.WriteString("\n")
	}
	if defects := m.Document().KnownDefects; len(defects) > 0 {
		b.WriteString("\n## Known upstream defects\n\n" + defectsNote + "\n\n")
		for _, d := range defects {
			fmt.Fprintf(&b, "- %s: %s (%s)\n", markdownLink(d.Issue, d.URL), strings.Join(d.Columns, ", "), specCount(len(d.Specs)))
		}
	}
	b.WriteString("\n## Provenance\n\n")
	for _, p := range m.provenance() {
		fmt.Fprintf(&b, "### Kubernetes %s\n\n| | |\n|---|---|\n", p.Column)
		for _, kv := range p.Rows {
			fmt.Fprintf(&b, "| %s | %s |\n", report.Cell(kv[0]), report.Cell(kv[1]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// specCount is "1 spec" or "n specs".
func specCount(n int) string {
	if n == 1 {
		return "1 spec"
	}
	return fmt.Sprintf("%d specs", n)
}
