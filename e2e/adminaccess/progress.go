// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// Progress: after each spec, every process appends one line to a file the
// processes share, and the spec reports the running totals. Ginkgo prints that
// entry with the spec's name as it completes, so a run shows which spec group
// ran, under which profile, and how many passed so far.

// specsToRun is what this run will execute (after label filters and focus).
var specsToRun int

// suitePreview is Ginkgo's preview of the run: which specs will run.
var suitePreview ginkgo.Report

// willRunSpec says whether the spec with that sentence (the text given to
// it, before the bracketed tags of its labels) is among those the preview
// says will run.
func willRunSpec(preview ginkgo.Report, text string) bool {
	return previewRuns(preview, func(s types.SpecReport) bool {
		return s.LeafNodeText == text || strings.HasPrefix(s.LeafNodeText, text+" [")
	})
}

// willRun says whether a spec with the label is among those the preview
// says will run.
func willRun(preview ginkgo.Report, label string) bool {
	return previewRuns(preview, func(s types.SpecReport) bool { return slices.Contains(s.Labels(), label) })
}

// previewRuns says whether a spec that matches is among those the preview
// says will run.
func previewRuns(preview ginkgo.Report, matches func(types.SpecReport) bool) bool {
	for _, s := range preview.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && s.State != types.SpecStateSkipped && s.State != types.SpecStatePending && matches(s) {
			return true
		}
	}
	return false
}

func progressFile() string { return filepath.Join(theRun.Layout.Artifacts, ".progress") }

// recordProgress runs after every spec (registered by newFramework).
func recordProgress() {
	r := ginkgo.CurrentSpecReport()
	declared, defect := "", ""
	for _, e := range r.ReportEntries {
		switch e.Name {
		case report.DeclaredSkipEntry:
			declared = e.StringRepresentation()
		case report.KnownDefectEntry:
			defect = e.StringRepresentation()
		}
	}
	// The same judgement as report.json: an undeclared skip counts as failed.
	state, _ := report.Outcome(r.State, r.Failure.Message, declared, defect)
	os.MkdirAll(theRun.Layout.Artifacts, 0o755)
	f, err := os.OpenFile(progressFile(), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	// One short write with O_APPEND: lines from parallel processes never interleave.
	fmt.Fprintf(f, "%s\t%s\n", state, r.FullText())
	f.Close()
	counts := countProgress()
	ginkgo.AddReportEntry("progress", fmt.Sprintf("%d passed, %d failed, %d skipped, %d known upstream defects of %d",
		counts["passed"], counts["failed"], counts["skipped"], counts[report.KnownDefect], specsToRun))
}

func countProgress() map[string]int {
	counts := map[string]int{}
	f, err := os.Open(progressFile())
	if err != nil {
		return counts
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		state, _, _ := strings.Cut(s.Text(), "\t")
		counts[state]++
	}
	return counts
}
