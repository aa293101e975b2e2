// SPDX-License-Identifier: Apache-2.0

// Package report turns Ginkgo's run report into the suite's own report.json
// and report.md: release x profile x spec -> passed, failed or skipped (with
// the reason), durations, component versions, and the KEP requirement each
// spec covers. Release sign-off attaches these.
package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/clusters/release"

	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

// KEPEntry is the report entry name under which a spec states the KEP
// requirement it covers; ProfileEntry the profile it ran under when it moved
// the cluster away from the suite's; DeclaredSkipEntry the release table's
// need (release.Need) whose declared skip the spec took, and
// OutOfReachEntry the same need where its row is one of how the run reaches
// the cluster (release.OutOfReach); KnownDefectEntry the upstream issue
// (release.Defect) whose declared outcome the spec saw.
const (
	KEPEntry          = "KEP requirement"
	ProfileEntry      = "profile"
	DeclaredSkipEntry = "declared skip"
	OutOfReachEntry   = "out of reach"
	KnownDefectEntry  = "known upstream defect"
	// AllocatorEntry is the allocator implementation and feature set
	// (AllocatorRun) a spec ran with where a group moved kube-scheduler
	// away from the run's own; other specs have the Meta's.
	AllocatorEntry = "allocator"
)

// AllocatorRun is the value of an AllocatorEntry.
type AllocatorRun struct {
	Allocator  string `json:"allocator"`
	FeatureSet string `json:"featureSet"`
}

// Meta describes the cluster the run used, and what a sign-off needs to
// trust the result: which suite, which tools, which image, which gates.
type Meta struct {
	Release string `json:"release"`
	// Version is the Kubernetes version the run ran: the patch that
	// booted ("1.35.8", which kind's published image may run where the
	// table pins another) or a pre-release, whole ("1.38.0-beta.0"); ""
	// where no cluster answered, or an older suite wrote the report.
	Version    string            `json:"version,omitempty"`
	Profile    string            `json:"profile"`
	Cluster    string            `json:"cluster"`
	Existing   bool              `json:"existingCluster"`
	Components map[string]string `json:"components"`
	// Provenance (empty where unknown, e.g. the image of an existing cluster).
	SuiteCommit string            `json:"suiteCommit,omitempty"`
	KindVersion string            `json:"kindVersion,omitempty"`
	GoVersion   string            `json:"goVersion,omitempty"`
	NodeImage   string            `json:"nodeImage,omitempty"`
	NodeImageID string            `json:"nodeImageID,omitempty"`
	Gates       map[string]string `json:"gates,omitempty"` // --feature-gates per component
	// GatesRead: Gates were read from the nodes' files at the end of the
	// run; otherwise they are what the profile set.
	GatesRead bool `json:"gatesRead,omitempty"`
	// GatesFrom says where Gates came from on an existing cluster whose
	// nodes are out of reach (kube-apiserver's metrics), instead of the
	// profile; "" otherwise.
	GatesFrom string `json:"gatesFrom,omitempty"`
	// FeatureSet is the DRA features kube-scheduler runs with, and
	// Allocator the structured allocator's implementation that set selects
	// (the release table's rule, read in the module).
	FeatureSet string `json:"featureSet,omitempty"`
	Allocator  string `json:"allocator,omitempty"`
	// Unreachable are the release's allocator implementations that no
	// gate kube-scheduler may be given selects for admin access, with why
	// (release.Release.Unreachable): no column checks them, and the
	// report says so rather than leave them out unseen.
	Unreachable map[string]string `json:"unreachableAllocators,omitempty"`
	// Features is the cluster's DRA feature set by name (make e2e
	// FEATURES): with Release, the sign-off column the run belongs to.
	// Reports written before it existed were all of the defaults.
	Features string `json:"features,omitempty"`
	// DeviceClass is the DEVICE_CLASS whose devices a driver of the user's
	// own lent the run: each class a vendor signs off is a column of its
	// own, since its devices may keep the promises another class's break.
	DeviceClass string `json:"deviceClass,omitempty"`
	// What selected the specs: LABELS, FOCUS and SKIP as Ginkgo got them.
	LabelFilter string   `json:"labelFilter,omitempty"`
	Focus       []string `json:"focus,omitempty"`
	Skip        []string `json:"skip,omitempty"`
}

// Set is the run's DRA feature set by name: the release defaults where the
// report names none (it was written before reports named it).
func (m Meta) Set() string {
	if m.Features == "" {
		return release.DefaultSet
	}
	return m.Features
}

// PreRelease is the Kubernetes pre-release the run is of
// ("1.38.0-beta.0"), or "" for a release. A report that names no version
// is of the release table's row of Release, so that a column whose run
// ended before its cluster answered is still known for a pre-release.
func (m Meta) PreRelease() string {
	v := m.Version
	if v == "" {
		if r, err := release.Get(m.Release); err == nil {
			v = r.Version
		}
	}
	// The release table's one rule of what a pre-release is, on the
	// version alone.
	if (release.Release{Version: v}).PreRelease() == "" {
		return ""
	}
	return v
}

// Ran names the Kubernetes the run ran, for a heading: "v1.35.8",
// "pre-release v1.38.0-beta.0", or "" where the report names no version
// of a release (the table's pin need not be what booted).
func (m Meta) Ran() string {
	if pre := m.PreRelease(); pre != "" {
		return "pre-release v" + pre
	}
	if m.Version != "" {
		return "v" + m.Version
	}
	return ""
}

// Column is the sign-off column of the run: release and DRA feature set
// ("1.36 stable"), as e2e/matrix keys its columns, and the device class
// where a driver of the user's own served it ("1.35 defaults class
// gpu.example.com").
func (m Meta) Column() string {
	if m.DeviceClass != "" {
		return m.Release + " " + m.Set() + " class " + m.DeviceClass
	}
	return m.Release + " " + m.Set()
}

// Spec is one spec's outcome.
type Spec struct {
	Name    string   `json:"name"`
	Labels  []string `json:"labels"`
	Profile string   `json:"profile"`
	State   string   `json:"state"` // passed, failed, skipped, known defect, cut short, cluster broke, not selected
	Reason  string   `json:"reason,omitempty"`
	// Declared is the release table's need behind a skip.
	Declared string `json:"declaredSkip,omitempty"`
	// OutOfReach: the declared skip's row is one of how the run reaches
	// the cluster (an existing cluster, a driver of the user's own), not
	// of what the release has; a cluster the suite made would run the
	// spec. Reports written before it existed read false.
	OutOfReach bool `json:"outOfReach,omitempty"`
	// Defect is the upstream issue behind a known-defect verdict.
	Defect  string  `json:"knownDefect,omitempty"`
	Seconds float64 `json:"seconds"`
	KEP     string  `json:"kepRequirement,omitempty"`
	// KEPID is the requirement's stable ID (e2e/requirements).
	KEPID    string `json:"kepRequirementID,omitempty"`
	Location string `json:"location"`
	// Allocator and FeatureSet: kube-scheduler's, while the spec ran.
	Allocator  string `json:"allocator,omitempty"`
	FeatureSet string `json:"featureSet,omitempty"`
}

// Totals counts outcomes. Skipped counts only skips the release table
// declares; KnownDefects the promises that failed exactly as a declared
// upstream defect makes them fail; CutShort the specs an interrupt stopped
// mid-run; NotSelected the specs a label filter or focus left out (and, in
// an interrupted run, those it never reached).
type Totals struct {
	Passed       int `json:"passed"`
	Failed       int `json:"failed"`
	Skipped      int `json:"skipped"`
	KnownDefects int `json:"knownDefects"`
	CutShort     int `json:"cutShort,omitempty"`
	ClusterBroke int `json:"clusterBroke,omitempty"`
	NotSelected  int `json:"notSelected"`
}

// count adds one spec of that state.
func (t *Totals) count(state string) {
	switch state {
	case "passed":
		t.Passed++
	case "skipped":
		t.Skipped++
	case KnownDefect:
		t.KnownDefects++
	case CutShort:
		t.CutShort++
	case ClusterBroke:
		t.ClusterBroke++
	case "not selected":
		t.NotSelected++
	default:
		t.Failed++
	}
}

// Report is the whole run of one release.
type Report struct {
	SchemaVersion int `json:"schemaVersion"`
	Meta
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"`
	Totals  Totals    `json:"totals"`
	// Interrupted: the run was stopped (Ctrl-C, or a spec aborted the
	// suite); its "not selected" specs include those it never reached, and
	// those it stopped mid-run are CutShort.
	Interrupted bool `json:"interrupted,omitempty"`
	// ClusterBreaks are what broke under the run, not by the suite's
	// doing; the specs that ran while one was open are ClusterBroke.
	ClusterBreaks []ClusterBreak `json:"clusterBreaks,omitempty"`
	Specs         []Spec         `json:"specs"`
	Problems      []string       `json:"suiteProblems,omitempty"`
	// Missing are the cells of a merged column (report.Merge) whose report
	// was not found, each said with how its CI job ended ("no report: its
	// job ended failure (e2e 1.35 defaults serial)"); the sign-off sets
	// them. Such a column failed: the specs its other cells left out are
	// no filter's doing.
	Missing []string `json:"missingCells,omitempty"`
	// Timeline is where the time went, in order: steps before the suite,
	// set-up, spec groups, gate moves and release switches, teardown.
	Timeline []timeline.Step `json:"timeline"`
}

// FromGinkgo builds the report from Ginkgo's, with the breaks the run's
// cluster watch saw.
func FromGinkgo(r types.Report, meta Meta, breaks ...ClusterBreak) Report {
	out := Report{SchemaVersion: SchemaVersion, Meta: meta, Started: r.StartTime, Seconds: r.RunTime.Seconds(), ClusterBreaks: breaks}
	// An interrupt that came between specs cut none short: Ginkgo says it
	// only among the suite's failure reasons.
	for _, reason := range r.SpecialSuiteFailureReasons {
		out.Interrupted = out.Interrupted || slices.Contains(interruptMessages, reason)
	}
	// A spec group's wall time runs from its first spec's start to its last
	// spec's end (parallel specs overlap).
	type span struct{ start, end time.Time }
	groups := map[string]*span{}
	var groupOrder []string
	for _, s := range r.SpecReports {
		for _, e := range s.ReportEntries {
			if e.Name != timeline.Entry {
				continue
			}
			if step, ok := stepOf(e); ok {
				out.Timeline = append(out.Timeline, step)
			}
		}
		if s.LeafNodeType == types.NodeTypeIt && !s.StartTime.IsZero() && s.RunTime > 0 && len(s.ContainerHierarchyTexts) > 0 {
			name := groupOf(s)
			g, ok := groups[name]
			if !ok {
				g = &span{s.StartTime, s.EndTime}
				groups[name] = g
				groupOrder = append(groupOrder, name)
			}
			if s.StartTime.Before(g.start) {
				g.start = s.StartTime
			}
			if s.EndTime.After(g.end) {
				g.end = s.EndTime
			}
		}
		if s.State == types.SpecStateInterrupted || s.State == types.SpecStateAborted {
			// The specs after it never started: not left out by a filter.
			out.Interrupted = true
		}
		if s.LeafNodeType != types.NodeTypeIt {
			// A suite node the interrupt stopped (the cluster's set-up) is
			// the interrupt, which the report says, not a suite problem.
			if s.State.Is(types.SpecStateFailureStates) && s.State != types.SpecStateInterrupted {
				out.Problems = append(out.Problems, fmt.Sprintf("%s: %s", s.LeafNodeType, s.Failure.Message))
			}
			continue
		}
		spec := Spec{
			Name: s.FullText(), Labels: s.Labels(), Profile: meta.Profile,
			Seconds: s.RunTime.Seconds(), Location: s.LeafNodeLocation.String(),
			Allocator: meta.Allocator, FeatureSet: meta.FeatureSet,
		}
		for _, e := range s.ReportEntries {
			switch e.Name {
			case KEPEntry:
				spec.KEP = e.StringRepresentation()
			case ProfileEntry:
				spec.Profile = e.StringRepresentation()
			case DeclaredSkipEntry:
				spec.Declared = e.StringRepresentation()
			case OutOfReachEntry:
				spec.OutOfReach = true
			case KnownDefectEntry:
				spec.Defect = e.StringRepresentation()
			case AllocatorEntry:
				if run, ok := allocatorOf(e); ok {
					spec.Allocator, spec.FeatureSet = run.Allocator, run.FeatureSet
				}
			}
		}
		if req, ok := requirements.Of(spec.KEP); ok {
			spec.KEPID = req.ID
		}
		spec.State, spec.Reason = Outcome(s.State, s.Failure.Message, spec.Declared, spec.Defect)
		if spec.State != "skipped" && spec.State != CutShort && !strings.HasPrefix(spec.Reason, UndeclaredSkip) {
			spec.State = brokeDuring(breaks, s.StartTime, s.EndTime, spec.State)
		}
		// Only a declared skip is out of reach: a spec that went on after
		// the entry and failed is a failure.
		spec.OutOfReach = spec.OutOfReach && spec.State == "skipped"
		out.Totals.count(spec.State)
		out.Specs = append(out.Specs, spec)
	}
	sort.SliceStable(out.Specs, func(i, j int) bool { return out.Specs[i].Name < out.Specs[j].Name })
	for _, name := range groupOrder {
		g := groups[name]
		out.Timeline = append(out.Timeline, timeline.Step{Kind: timeline.KindGroup, Name: name, Started: g.start, Seconds: g.end.Sub(g.start).Seconds()})
	}
	timeline.Sort(out.Timeline)
	return out
}

// allocatorOf reads an allocator entry: as recorded on this process, or as
// JSON from another.
func allocatorOf(e types.ReportEntry) (AllocatorRun, bool) {
	if run, ok := e.GetRawValue().(AllocatorRun); ok {
		return run, true
	}
	var run AllocatorRun
	err := json.Unmarshal([]byte(e.Value.AsJSON), &run)
	return run, err == nil && run.Allocator != ""
}

// stepOf reads a timeline entry: as recorded on this process, or as JSON
// from another parallel process.
func stepOf(e types.ReportEntry) (timeline.Step, bool) {
	if step, ok := e.GetRawValue().(timeline.Step); ok {
		return step, true
	}
	var step timeline.Step
	err := json.Unmarshal([]byte(e.Value.AsJSON), &step)
	return step, err == nil
}

// Undeclared lists the specs counted failed for an undeclared skip.
func (r Report) Undeclared() []string {
	var out []string
	for _, s := range r.Specs {
		if strings.HasPrefix(s.Reason, UndeclaredSkip) {
			out = append(out, s.Name)
		}
	}
	return out
}

// FirstLine is a message's first line, trimmed.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// groupOf is the timeline's group of a spec: its outermost container, and
// apart from it the part of that container that is Serial (the allocators
// group with a driver of the user's own, or on a cluster made with a
// feature set of its own), which runs in the Serial part of the run while
// the rest ran beside the other groups.
func groupOf(s types.SpecReport) string {
	name := s.ContainerHierarchyTexts[0]
	if !strings.Contains(name, timeline.SerialMark) && slices.Contains(s.Labels(), "Serial") {
		name += " " + timeline.SerialMark
	}
	return name
}
