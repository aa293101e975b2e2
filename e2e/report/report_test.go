package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
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
	r := FromGinkgo(types.Report{SpecReports: types.SpecReports{
		spec("denies", types.SpecStatePassed, "", kep),
		spec("locked", types.SpecStateSkipped, "DRAAdminAccess is GA-locked in Kubernetes 1.36\nmore"),
		spec("toggles", types.SpecStateFailed, "expected x, seen y", prof),
		{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "no docker"}},
	}}, Meta{Release: "1.35", Profile: "default"})
	if r.Totals != (Totals{Passed: 1, Failed: 1, Skipped: 1}) {
		t.Fatalf("totals %+v", r.Totals)
	}
	byName := map[string]Spec{}
	for _, s := range r.Specs {
		byName[s.Name] = s
	}
	if s := byName["Admin access denies"]; s.KEP != "only labelled namespaces get admin access" || s.Profile != "default" || s.Seconds != 1.5 {
		t.Fatalf("passed spec %+v", s)
	}
	if s := byName["Admin access locked"]; s.Reason != "DRAAdminAccess is GA-locked in Kubernetes 1.36" {
		t.Fatalf("skip reason %q", s.Reason)
	}
	if s := byName["Admin access toggles"]; s.Profile != "scheduler-off" || s.State != "failed" {
		t.Fatalf("failed spec %+v", s)
	}
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no docker") {
		t.Fatalf("suite problems %v", r.Problems)
	}
	if got := r.Summary(); got != "e2e: 1 passed, 1 failed, 1 skipped" {
		t.Fatal(got)
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
