// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/kep5018/adminaccess-conformance/e2e/specfiles"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
)

func spec(text string, state types.SpecState, msg string, entries ...types.ReportEntry) types.SpecReport {
	return types.SpecReport{
		LeafNodeType: types.NodeTypeIt, LeafNodeText: text, ContainerHierarchyTexts: []string{"Admin access"},
		State: state, Failure: types.Failure{Message: msg}, RunTime: 1500 * time.Millisecond, ReportEntries: entries,
		LeafNodeLabels: []string{"authz"},
	}
}

func TestFromGinkgoCountsAndCarriesReasons(t *testing.T) {
	kep := types.ReportEntry{Name: KEPEntry, Value: types.WrapEntryValue("only labelled namespaces get admin access")}
	prof := types.ReportEntry{Name: ProfileEntry, Value: types.WrapEntryValue("scheduler-off")}
	declared := types.ReportEntry{Name: DeclaredSkipEntry, Value: types.WrapEntryValue("gate-switching")}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("denies", types.SpecStatePassed, "", kep),
		spec("locked", types.SpecStateSkipped, "DRAAdminAccess is GA-locked in Kubernetes 1.36\nmore", declared),
		spec("scrapes", types.SpecStateSkipped, "the metric endpoint cannot be reached"),
		spec("filtered", types.SpecStateSkipped, ""),
		spec("toggles", types.SpecStateFailed, "expected x, seen y", prof),
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "no docker"}},
	}}, Meta{Release: "1.35", Profile: "default"})
	if r.Totals != (Totals{Passed: 1, Failed: 2, Skipped: 1, NotSelected: 1}) {
		t.Fatalf("totals %+v", r.Totals)
	}
	byName := map[string]Spec{}
	for _, s := range r.Specs {
		byName[s.Name] = s
	}
	if s := byName["Admin access denies"]; s.KEP != "only labelled namespaces get admin access" || s.Profile != "default" || s.Seconds != 1.5 {
		t.Fatalf("passed spec %+v", s)
	}
	if s := byName["Admin access locked"]; s.State != "skipped" || s.Reason != "DRAAdminAccess is GA-locked in Kubernetes 1.36" || s.Declared != "gate-switching" {
		t.Fatalf("declared skip %+v", s)
	}
	if s := byName["Admin access scrapes"]; s.State != "failed" || s.Reason != UndeclaredSkip+"the metric endpoint cannot be reached" {
		t.Fatalf("undeclared skip %+v", s)
	}
	if s := byName["Admin access filtered"]; s.State != "not selected" {
		t.Fatalf("filtered spec %+v", s)
	}
	if s := byName["Admin access toggles"]; s.Profile != "scheduler-off" || s.State != "failed" {
		t.Fatalf("failed spec %+v", s)
	}
	if got := r.Undeclared(); len(got) != 1 || got[0] != "Admin access scrapes" {
		t.Fatalf("undeclared %v", got)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no docker") {
		t.Fatalf("suite problems %v", r.Problems)
	}
	if got := r.Summary(); got != "e2e: 1 passed, 2 failed, 1 skipped" {
		t.Fatal(got)
	}
	wantFailures := "FAILED suite node\n    SynchronizedBeforeSuite: no docker\n" +
		"FAILED Admin access scrapes\n    " + UndeclaredSkip + "the metric endpoint cannot be reached\n" +
		"FAILED Admin access toggles\n    expected x, seen y\n"
	if got := r.Failures(6, 200); got != wantFailures {
		t.Fatalf("failures:\n%s\nwant:\n%s", got, wantFailures)
	}
	md := r.Markdown()
	for _, want := range []string{"(partial: 4 of 5 specs selected by the label filter or focus)", "declared (gate-switching): DRAAdminAccess is GA-locked"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// The suite's specs skip only through require (e2e/adminaccess/skips.go), which
// consults the release table; a direct ginkgo.Skip elsewhere would be a skip
// nobody declared. The report catches one at run time too; this catches it
// before any cluster is made.
func TestFailuresAreCutToTheirFirstLines(t *testing.T) {
	r := Report{Specs: []Spec{{Name: "waits", State: "failed",
		Reason: "Timed out after 120s.\n\npod p should run\n  pod p is Pending: PodScheduled=False\nfourth"}}}
	want := "FAILED waits\n    Timed out after 120s.\n    pod p should run\n    pod p is Pending: Pod...\n    ...\n"
	if got := r.Failures(3, 21); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestSpecsSkipOnlyThroughTheReleaseTable(t *testing.T) {
	files, err := specfiles.Read()
	if err != nil {
		t.Fatal(err)
	}
	for f, data := range files {
		n := strings.Count(data, "ginkgo.Skip(")
		if filepath.Base(f) == "skips.go" {
			if n != 1 {
				t.Errorf("%s: want exactly one ginkgo.Skip (in stopWithVerdict), found %d", f, n)
			}
			continue
		}
		if n > 0 {
			t.Errorf("%s calls ginkgo.Skip directly %d time(s); use require with a need the release table declares", f, n)
		}
	}
}

func TestJSONRoundTripAndMarkdown(t *testing.T) {
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{spec("a | b", types.SpecStatePassed, "")}},
		Meta{Release: "1.34", Profile: "default", Components: map[string]string{"kube-apiserver": "v1.34.4"}})
	path := filepath.Join(t.TempDir(), "report.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil || back.Totals.Passed != 1 || back.Components["kube-apiserver"] != "v1.34.4" {
		t.Fatalf("%+v %v", back, err)
	}
	md := r.Markdown()
	for _, want := range []string{"Kubernetes 1.34, profile default", "| kube-apiserver | v1.34.4 |", `Admin access a \| b`, "**1 passed, 0 failed, 0 skipped**"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestFromGinkgoBuildsTheTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	move := types.ReportEntry{Name: timeline.Entry, Value: types.WrapEntryValue(
		timeline.Step{Kind: timeline.KindMove, Name: "kube-apiserver DRAAdminAccess=false", Started: at(100), Seconds: 9.5})}
	setup := types.ReportEntry{Name: timeline.Entry, Value: types.WrapEntryValue(
		timeline.Step{Kind: timeline.KindSetup, Name: "cluster create", Started: at(1), Seconds: 50})}
	inGroup := func(group string, start, end float64, entries ...types.ReportEntry) types.SpecReport {
		s := spec("x", types.SpecStatePassed, "", entries...)
		s.ContainerHierarchyTexts = []string{group}
		s.StartTime, s.EndTime, s.RunTime = at(start), at(end), at(end).Sub(at(start))
		return s
	}
	// A group whose inner container is Serial: that part is a group of its
	// own, in the Serial part of the run.
	serialPart := func(group string, start, end float64) types.SpecReport {
		s := inGroup(group, start, end)
		s.ContainerHierarchyTexts = append(s.ContainerHierarchyTexts, "feature promises [Serial]")
		s.ContainerHierarchyLabels = [][]string{{"allocators"}, {"Serial"}}
		return s
	}
	r := FromGinkgo(types.Report{StartTime: t0, SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStatePassed, ReportEntries: []types.ReportEntry{setup}},
		inGroup("authz", 60, 70),
		inGroup("authz", 55, 65),
		inGroup("toggle", 95, 130, move),
		spec("filtered", types.SpecStateSkipped, ""), // never ran: no group time
		inGroup("allocators", 56, 66),
		serialPart("allocators", 140, 150),
	}}, Meta{Release: "1.35"})
	var got []string
	for _, s := range r.Timeline {
		got = append(got, fmt.Sprintf("%s %s @%.0f %.1f", s.Kind, s.Name, s.Started.Sub(t0).Seconds(), s.Seconds))
	}
	want := []string{"setup cluster create @1 50.0", "group authz @55 15.0", "group allocators @56 10.0", "group toggle @95 35.0", "move kube-apiserver DRAAdminAccess=false @100 9.5",
		"group allocators [Serial] @140 10.0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("timeline:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	md := r.Markdown()
	if !strings.Contains(md, "| +1:40.0 | move | kube-apiserver DRAAdminAccess=false | 0:09.5 |") {
		t.Fatalf("report.md lacks the move's row:\n%s", md)
	}
}

func TestClockCarriesRoundedSecondsIntoTheMinute(t *testing.T) {
	for d, want := range map[time.Duration]string{
		6*time.Minute + 59960*time.Millisecond: "7:00.0",
		59940 * time.Millisecond:               "0:59.9",
		12*time.Minute + 3*time.Second:         "12:03.0",
		-1500 * time.Millisecond:               "-0:01.5",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestKnownDefectIsCountedApart(t *testing.T) {
	defect := types.ReportEntry{Name: KnownDefectEntry, Value: types.WrapEntryValue("kubernetes/kubernetes#140729")}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("passes", types.SpecStatePassed, ""),
		spec("partitions", types.SpecStateSkipped, "known upstream defect kubernetes/kubernetes#140729: admin claim refused\nmore", defect),
	}}, Meta{Release: "1.36", Profile: "default"})
	if r.Totals != (Totals{Passed: 1, KnownDefects: 1}) {
		t.Fatalf("totals %+v: a known defect is neither passed, failed nor skipped", r.Totals)
	}
	s := r.Specs[0] // sorted by name
	if s.State != KnownDefect || s.Defect != "kubernetes/kubernetes#140729" || s.Reason != "known upstream defect kubernetes/kubernetes#140729: admin claim refused" {
		t.Fatalf("spec %+v", s)
	}
	if got := r.Summary(); got != "e2e: 1 passed, 0 failed, 0 skipped" {
		t.Errorf("the closing line keeps its shape, got %q", got)
	}
	if got := r.KnownDefects(); !strings.Contains(got, "1 spec(s) met a known upstream defect (kubernetes/kubernetes#140729)") {
		t.Errorf("known-defect line %q", got)
	}
	if md := r.Markdown(); !strings.Contains(md, "**1 known upstream defect(s)**") || !strings.Contains(md, "| known defect | Admin access partitions |") {
		t.Errorf("report.md does not show the known defect:\n%s", md)
	}
	if len(r.Undeclared()) != 0 || r.Failures(8, 300) != "" {
		t.Error("a known defect is neither an undeclared skip nor a failure")
	}
	// Without the entry the same skip is an undeclared one: the verdict is
	// the spec's, never inferred from the message.
	if state, _ := Outcome(types.SpecStateSkipped, "known upstream defect x", "", ""); state != "failed" {
		t.Errorf("a skip without the defect entry must count as failed, got %s", state)
	}
}

func TestSelectionNamesTheFilter(t *testing.T) {
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("runs", types.SpecStatePassed, ""),
		spec("left out", types.SpecStateSkipped, ""),
		spec("also left out", types.SpecStateSkipped, ""),
	}}, Meta{Release: "1.35", LabelFilter: "authz", Focus: []string{"denies"}})
	if got := r.Selection(); got != "partial: 1 of 3 specs selected by LABELS=authz, FOCUS=denies" {
		t.Errorf("selection %q", got)
	}
	if r.SchemaVersion != SchemaVersion {
		t.Errorf("report.json carries no schema version")
	}
	// Stopped by Ctrl-C: the specs it never reached are not the filter's doing.
	stopped := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("runs", types.SpecStatePassed, ""),
		spec("stopped", types.SpecStateInterrupted, "Interrupted by User"),
		spec("never reached", types.SpecStateSkipped, ""),
	}}, Meta{Release: "1.35"})
	if got := stopped.Selection(); got != "interrupted: 2 of 3 specs ran before the run was stopped, 1 of them cut short: neither passed nor failed" {
		t.Errorf("selection of a stopped run %q", got)
	}
	all := FromGinkgo(types.Report{SpecReports: types.SpecReports{spec("runs", types.SpecStatePassed, "")}}, Meta{})
	if all.Selection() != "" {
		t.Errorf("a run of every spec is not partial: %q", all.Selection())
	}
}

func TestASpecOfAMovedSchedulerNamesItsAllocator(t *testing.T) {
	run := AllocatorRun{Allocator: "stable", FeatureSet: "kube-scheduler with DRAConsumableCapacity=false (DRAAdminAccess)"}
	// As recorded on this process, and as JSON from another.
	raw := types.ReportEntry{Name: AllocatorEntry, Value: types.WrapEntryValue(run)}
	fromJSON := types.ReportEntry{Name: AllocatorEntry, Value: types.WrapEntryValue(nil)}
	fromJSON.Value.AsJSON = `{"allocator":"stable","featureSet":"kube-scheduler with DRAConsumableCapacity=false (DRAAdminAccess)"}`
	meta := Meta{Release: "1.36", Profile: "default", Allocator: "incubating", FeatureSet: "release defaults (DRAAdminAccess, DRAConsumableCapacity)"}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("defaults", types.SpecStatePassed, ""),
		spec("moved", types.SpecStatePassed, "", raw),
		spec("moved elsewhere", types.SpecStatePassed, "", fromJSON),
	}}, meta)
	for _, s := range r.Specs {
		want := run
		if s.Name == "Admin access defaults" {
			want = AllocatorRun{Allocator: meta.Allocator, FeatureSet: meta.FeatureSet}
		}
		if s.Allocator != want.Allocator || s.FeatureSet != want.FeatureSet {
			t.Errorf("%s: allocator %q, feature set %q; want %+v", s.Name, s.Allocator, s.FeatureSet, want)
		}
	}
	md := r.Markdown()
	if !strings.Contains(md, "| stable (kube-scheduler with DRAConsumableCapacity=false (DRAAdminAccess)) |") || !strings.Contains(md, "| incubating |") {
		t.Errorf("markdown rows do not name the allocators:\n%s", md)
	}
}

func TestReportMarkdownCarriesTheProvenance(t *testing.T) {
	meta := Meta{Release: "1.35", Profile: "default", SuiteCommit: "abc123", KindVersion: "v0.33.0", GoVersion: "go1.26.8",
		NodeImage: "kind-e2e/node:v1.35.4-x", NodeImageID: "sha256:1", Gates: map[string]string{"kube-apiserver": "DRAAdminAccess=true"},
		LabelFilter: "authz"}
	md := FromGinkgo(types.Report{SpecReports: types.SpecReports{spec("denies", types.SpecStatePassed, "")}}, meta).Markdown()
	for _, want := range []string{"| suite commit | abc123 |", "| kind | v0.33.0 |", "| node image | kind-e2e/node:v1.35.4-x |", "| node image ID | sha256:1 |",
		"| --feature-gates of kube-apiserver (the profile's) | DRAAdminAccess=true |", "| label filter | authz |", "| focus | — |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// A skip whose row is one of how the run reaches the cluster carries the
// out-of-reach entry into report.json (readable: "outOfReach": true), its
// report.md row and the printed line; a spec that went on and failed is a
// failure, and a report written before the field reads every skip as before.
func TestOutOfReachSkips(t *testing.T) {
	declared := func(n string) types.ReportEntry {
		return types.ReportEntry{Name: DeclaredSkipEntry, Value: types.WrapEntryValue(n)}
	}
	reach := types.ReportEntry{Name: OutOfReachEntry, Value: types.WrapEntryValue("node-access")}
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("reads the nodes", types.SpecStateSkipped, "the cluster was given with --kubeconfig; it is not a kind cluster", declared("node-access"), reach),
		spec("reads the contract", types.SpecStateSkipped, "the run claims the devices of the driver given with DRIVER",
			declared("bundled-driver"), types.ReportEntry{Name: OutOfReachEntry, Value: types.WrapEntryValue("bundled-driver")}),
		spec("is locked", types.SpecStateSkipped, "DRAAdminAccess is GA-locked in Kubernetes 1.36", declared("gate-switching")),
		spec("went on", types.SpecStateFailed, "scrape failed", reach),
	}}, Meta{Release: "1.36", Existing: true})
	byName := map[string]Spec{}
	for _, s := range r.Specs {
		byName[s.Name] = s
	}
	if s := byName["Admin access reads the nodes"]; s.State != "skipped" || !s.OutOfReach || s.Declared != "node-access" {
		t.Errorf("out of reach: %+v", s)
	}
	if s := byName["Admin access is locked"]; s.OutOfReach {
		t.Errorf("not applicable: %+v", s)
	}
	if s := byName["Admin access went on"]; s.OutOfReach || s.State != "failed" {
		t.Errorf("a failure is never out of reach: %+v", s)
	}
	if n, needs := r.OutOfReachNeeds(); n != 2 || strings.Join(needs, ",") != "bundled-driver,node-access" {
		t.Errorf("OutOfReachNeeds = %d %v", n, needs)
	}
	if got, want := r.OutOfReach(), "e2e: 2 of the 3 skips are out of reach of this run (bundled-driver, node-access), not of the release"; !strings.HasPrefix(got, want) {
		t.Errorf("line %q, want it to start %q", got, want)
	}
	md := r.Markdown()
	for _, want := range []string{"2 of them are out of reach of this run (bundled-driver, node-access)",
		"declared (node-access), out of reach of this run: the cluster was given with --kubeconfig", "declared (gate-switching): DRAAdminAccess is GA-locked"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || strings.Count(string(data), `"outOfReach": true`) != 2 {
		t.Errorf("report.json: %v\n%s", err, data)
	}
	old := strings.ReplaceAll(string(data), `"outOfReach": true,`, "")
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if n, _ := back.OutOfReachNeeds(); err != nil || n != 0 || back.Totals.Skipped != 3 || back.OutOfReach() != "" {
		t.Errorf("a report without the field: %v, %+v", err, back.Totals)
	}
}

// A report names the version it ran, a pre-release whole; one that names
// none (no cluster answered, an older suite) is of its release's row.
func TestMetaNamesTheVersionItRan(t *testing.T) {
	for _, c := range []struct {
		meta     Meta
		pre, ran string
	}{
		{Meta{Release: "1.35", Version: "1.35.8"}, "", "v1.35.8"},
		{Meta{Release: "1.37", Version: "1.37.3-rc.0"}, "1.37.3-rc.0", "pre-release v1.37.3-rc.0"},
		{Meta{Release: "1.37.3-rc.0"}, "1.37.3-rc.0", "pre-release v1.37.3-rc.0"},
		{Meta{Release: "1.35"}, "", ""},
	} {
		if pre, ran := c.meta.PreRelease(), c.meta.Ran(); pre != c.pre || ran != c.ran {
			t.Errorf("%+v: pre-release %q, ran %q; want %q, %q", c.meta, pre, ran, c.pre, c.ran)
		}
	}
	r := Report{Meta: Meta{Release: "1.37", Version: "1.37.3-rc.0", Profile: "default"}}
	if md := r.Markdown(); !strings.HasPrefix(md, "# DRA admin access conformance: Kubernetes 1.37 (pre-release v1.37.3-rc.0), profile default\n") {
		t.Errorf("report.md's title: %q", strings.SplitN(md, "\n", 2)[0])
	}
}

// A release's allocator no gate reaches is named in the report, never left
// out unseen.
func TestTheReportNamesTheAllocatorsOutOfReach(t *testing.T) {
	r := Report{Meta: Meta{Release: "1.38", Profile: "default", Allocator: "stable",
		Unreachable: map[string]string{"experimental": "incubating supports every feature it does and is tried first"}}}
	md := r.Markdown()
	for _, want := range []string{"Checked by no column, since no gate kube-scheduler may be given selects it for admin access: `experimental` (incubating supports every feature it does and is tried first).",
		"| allocators out of reach | `experimental` (incubating supports every feature it does and is tried first) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains((Report{Meta: Meta{Release: "1.35"}}).Markdown(), "Checked by no column") {
		t.Error("a release that reaches every allocator names none")
	}
}
