// SPDX-License-Identifier: Apache-2.0

package labels

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "authz", "authz || allocation", "!disruptive", "metrics && !disruptive", "Disruptive && !Serial", "!serial"} {
		if err := Check(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	if err := Check("nosuch || authz"); err == nil || !strings.Contains(err.Error(), "unknown label nosuch") || !strings.Contains(err.Error(), "labels are allocation, allocators, authz") {
		t.Errorf("unknown label: %v", err)
	}
	if err := Check("authz &&"); err == nil || !strings.Contains(err.Error(), "does not parse") || strings.Contains(err.Error(), "\n") {
		t.Errorf("bad syntax: %v", err)
	}
}

// A requirement's ID and upstream's feature-gate labels are labels a filter
// may name, in each form Ginkgo reads: a label, a regular expression, a
// label set's operation as upstream's jobs write it.
func TestCheckTakesRequirementIDsAndUpstreamLabels(t *testing.T) {
	for _, ok := range []string{"KEP5018-AUTHZ-01", "kep5018-authz-01 || KEP5018-DRIVER-05", "authz && !KEP5018-AUTHZ-10",
		"FeatureGate:DRAAdminAccess", "FeatureGate:DRAAdminAccess && Beta", "Alpha || Feature:OffByDefault",
		"FeatureGate: containsAny DRAAdminAccess", "FeatureGate: containsAny {DRAAdminAccess, DRAPrioritizedList} && !Disruptive",
		"Feature: isEmpty && !Serial", "/KEP5018-AUTHZ-0[1-3]/", "/FeatureGate:/ && smoke"} {
		if err := Check(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, unknown := range map[string]string{
		"KEP5018-AUTHZ-99":                               "KEP5018-AUTHZ-99",
		"KEP5018-AUTHZ-1":                                "KEP5018-AUTHZ-1",
		"FeatureGate:DRAPrioritizedList":                 "FeatureGate:DRAPrioritizedList",
		"FeatureGate: containsAny DRAPrioritizedList":    "FeatureGate:DRAPrioritizedList",
		"FeatureGate: containsAll {DRAAdminAccess, Foo}": "FeatureGate:Foo",
		"/KEP5018-NOSUCH/":                               "/KEP5018-NOSUCH/",
		"BetaOffByDefault":                               "BetaOffByDefault",
	} {
		err := Check(bad)
		if err == nil || !strings.Contains(err.Error(), "unknown label "+unknown+" in") {
			t.Errorf("%q: %v, want %s named unknown", bad, err, unknown)
		}
	}
	err := Check("nosuch")
	for _, want := range []string{"a KEP requirement's ID, KEP5018-CLUSTER-01 to KEP5018-DRIVER-05", "upstream's feature-gate labels Alpha, Beta, Feature:OffByDefault, FeatureGate:DRAAdminAccess"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}

// What upstream's framework.WithFeatureGate writes for each maturity
// (k8s.io/kubernetes v1.35.4, test/e2e/framework/ginkgowrapper.go:
// withFeatureGate and registerInSuite), written out here.
func TestFeatureGateIsUpstreams(t *testing.T) {
	for _, c := range []struct {
		level string
		on    bool
		want  []Upstream
	}{
		{"Alpha", false, []Upstream{{"FeatureGate:G", true}, {"Alpha", true}, {"Feature:OffByDefault", true}}},
		{"Beta", true, []Upstream{{"FeatureGate:G", true}, {"Beta", true}}},
		{"Beta", false, []Upstream{{"FeatureGate:G", true}, {"Beta", true}, {"Feature:OffByDefault", true}, {"BetaOffByDefault", false}}},
		{"", true, []Upstream{{"FeatureGate:G", true}}},
	} {
		if got := FeatureGate("G", c.level, c.on); !slices.Equal(got, c.want) {
			t.Errorf("%q, on by default %v: %v, want %v", c.level, c.on, got, c.want)
		}
	}
}

// specLabels are the labels the spec files give their specs, each with the
// file it is in: those of ginkgo.Label calls, and those the e2e framework's
// decorators give (a decorator FrameworkLabels does not name is an error).
func specLabels(t *testing.T) map[string]string {
	files, _ := filepath.Glob("../adminaccess/*.go")
	if len(files) == 0 {
		t.Fatal("no spec files found")
	}
	labelCall := regexp.MustCompile(`ginkgo\.Label\(([^)]*)\)`)
	quoted := regexp.MustCompile(`"([^"]+)"`)
	decorator := regexp.MustCompile(`framework\.(With[A-Za-z]+)\(`)
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue // registers no spec
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range labelCall.FindAllStringSubmatch(string(data), -1) {
			for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
				out[q[1]] = f
			}
		}
		for _, m := range decorator.FindAllStringSubmatch(string(data), -1) {
			// labels.go's it gives every spec its requirement's ID and
			// upstream's feature-gate labels; the suite's dry run checks
			// those (e2e/matrix).
			if filepath.Base(f) == "labels.go" && (m[1] == "WithLabel" || m[1] == "WithFeatureGate") {
				continue
			}
			label, ok := FrameworkLabels[m[1]]
			if !ok {
				t.Errorf("%s: framework.%s gives a label FrameworkLabels does not name", f, m[1])
				continue
			}
			out[label] = f
		}
	}
	return out
}

// Every label a spec carries, its own or the framework's, is one Check
// accepts, so a filter naming it is never refused.
func TestKnownCoversEverySpecLabel(t *testing.T) {
	labels := specLabels(t)
	for label, f := range labels {
		if err := Check(label); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, want := range []string{"Serial", "Disruptive", "authz"} {
		if _, ok := labels[want]; !ok {
			t.Errorf("no spec carries %s: the scan of the spec files missed it", want)
		}
	}
}

// The upgrade spec is selected by its group, its requirement's ID (which
// e2e-cluster's copy of its labels missed) and upstream's feature-gate
// labels, and left out by filters that exclude any of them.
func TestUpgradeSelected(t *testing.T) {
	rel, err := release.Get("1.35")
	if err != nil {
		t.Fatal(err)
	}
	for filter, want := range map[string]bool{
		"": true, "upgrade": true, UpgradeRequirement: true, strings.ToLower(UpgradeRequirement): true, "Serial": true,
		"FeatureGate:DRAAdminAccess": true, "authz || " + UpgradeRequirement: true, "/KEP5018-GATE-0[5-9]/": true,
		"authz": false, "!Disruptive": false, "!upgrade": false, "KEP5018-GATE-01": false, "smoke && upgrade": false,
	} {
		got, err := UpgradeSelected(filter, rel)
		if err != nil || got != want {
			t.Errorf("UpgradeSelected(%q) = %t, %v; want %t", filter, got, err, want)
		}
	}
	if _, err := UpgradeSelected("authz &&", rel); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a filter that does not parse: %v", err)
	}
	r, ok := requirements.ByID(UpgradeRequirement)
	if !ok || !strings.HasPrefix(r.Text, "upgrade and rollback") {
		t.Errorf("%s is not the upgrade spec's requirement: %q", UpgradeRequirement, r.Text)
	}
}
