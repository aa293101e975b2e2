// Package report turns Ginkgo's run report into the suite's own report.json
// and report.md: release x profile x spec -> passed, failed or skipped (with
// the reason), durations, component versions, and the KEP requirement each
// spec covers. Release sign-off attaches these.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// KEPEntry is the report entry name under which a spec states the KEP
// requirement it covers; ProfileEntry the profile it ran under when it moved
// the cluster away from the suite's.
const (
	KEPEntry     = "KEP requirement"
	ProfileEntry = "profile"
)

// Meta describes the cluster the run used.
type Meta struct {
	Release    string            `json:"release"`
	Profile    string            `json:"profile"`
	Cluster    string            `json:"cluster"`
	Existing   bool              `json:"existingCluster"`
	Components map[string]string `json:"components"`
}

// Spec is one spec's outcome.
type Spec struct {
	Name     string   `json:"name"`
	Labels   []string `json:"labels"`
	Profile  string   `json:"profile"`
	State    string   `json:"state"` // passed, failed, skipped
	Reason   string   `json:"reason,omitempty"`
	Seconds  float64  `json:"seconds"`
	KEP      string   `json:"kepRequirement,omitempty"`
	Location string   `json:"location"`
}

// Totals counts outcomes.
type Totals struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Report is the whole run of one release.
type Report struct {
	Meta
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Totals   Totals    `json:"totals"`
	Specs    []Spec    `json:"specs"`
	Problems []string  `json:"suiteProblems,omitempty"`
}

// FromGinkgo builds the report from Ginkgo's.
func FromGinkgo(r types.Report, meta Meta) Report {
	out := Report{Meta: meta, Started: r.StartTime, Seconds: r.RunTime.Seconds()}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			if s.State.Is(types.SpecStateFailureStates) {
				out.Problems = append(out.Problems, fmt.Sprintf("%s: %s", s.LeafNodeType, s.Failure.Message))
			}
			continue
		}
		spec := Spec{
			Name: s.FullText(), Labels: s.Labels(), Profile: meta.Profile,
			Seconds: s.RunTime.Seconds(), Location: s.LeafNodeLocation.String(),
		}
		for _, e := range s.ReportEntries {
			switch e.Name {
			case KEPEntry:
				spec.KEP = e.StringRepresentation()
			case ProfileEntry:
				spec.Profile = e.StringRepresentation()
			}
		}
		switch {
		case s.State == types.SpecStatePassed:
			spec.State = "passed"
			out.Totals.Passed++
		case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
			spec.State = "skipped"
			spec.Reason = firstLine(s.Failure.Message)
			if spec.Reason == "" {
				spec.Reason = "not selected by the label filter or focus"
			}
			out.Totals.Skipped++
		default:
			spec.State = "failed"
			spec.Reason = s.Failure.Message
			out.Totals.Failed++
		}
		out.Specs = append(out.Specs, spec)
	}
	sort.SliceStable(out.Specs, func(i, j int) bool { return out.Specs[i].Name < out.Specs[j].Name })
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// WriteJSON writes report.json.
func (r Report) WriteJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Read loads a report.json.
func Read(path string) (Report, error) {
	var r Report
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(data, &r)
}

// Summary is the plain closing line: "e2e: N passed, N failed, N skipped".
func (r Report) Summary() string {
	return fmt.Sprintf("e2e: %d passed, %d failed, %d skipped", r.Totals.Passed, r.Totals.Failed, r.Totals.Skipped)
}

// Markdown renders report.md.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# DRA admin access conformance: Kubernetes %s, profile %s\n\n", r.Release, r.Profile)
	where := "created by the suite"
	if r.Existing {
		where = "existing cluster"
	}
	fmt.Fprintf(&b, "Cluster `%s` (%s), started %s, %s in all.\n\n", r.Cluster, where, r.Started.UTC().Format(time.RFC3339), time.Duration(r.Seconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(&b, "**%d passed, %d failed, %d skipped**\n\n", r.Totals.Passed, r.Totals.Failed, r.Totals.Skipped)
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
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "Suite problem: %s\n\n", cell(p))
	}
	b.WriteString("| result | spec | labels | profile | seconds | KEP requirement | reason |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Specs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.1f | %s | %s |\n", s.State, cell(s.Name), strings.Join(s.Labels, ", "), s.Profile, s.Seconds, cell(s.KEP), cell(s.Reason))
	}
	return b.String()
}

// cell keeps a value on one table row.
func cell(s string) string {
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
