// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"reflect"
	"strings"
	"testing"
)

const scrape = `# HELP resourceclaim_controller_creates_total Number of ResourceClaims creation requests
# TYPE resourceclaim_controller_creates_total counter
resourceclaim_controller_creates_total{admin_access="false",status="success"} 7
resourceclaim_controller_creates_total{admin_access="true",status="success"} 3
resourceclaim_controller_creates_total{admin_access="true",status="failure"} 1
# HELP resourceclaim_controller_resource_claims Number of ResourceClaims
# TYPE resourceclaim_controller_resource_claims gauge
resourceclaim_controller_resource_claims{admin_access="true",allocated="false",source=""} 2
resourceclaim_controller_resource_claims{admin_access="false",allocated="true",source="resource_claim_template"} 1
resourceclaim_controller_resource_claims{admin_access="false",allocated="false",source=""} 0
# HELP scheduler_pending_pods Number of pending pods
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} 0
scheduler_pending_pods{queue="unschedulable"} 4
scheduler_pending_pods{queue="backoff"} 1
`

func TestSumMatchesLabelSubsets(t *testing.T) {
	f, err := Parse(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"resourceclaim_controller_creates_total", map[string]string{"admin_access": "true", "status": "success"}, 3},
		{"resourceclaim_controller_creates_total", map[string]string{"admin_access": "true"}, 4},
		{"resourceclaim_controller_creates_total", nil, 11},
		{"scheduler_pending_pods", nil, 5},
		{"absent_family_total", nil, 0},
	}
	for _, c := range cases {
		if got := f.Sum(c.name, c.labels); got != c.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if !f.Has("scheduler_pending_pods") || f.Has("absent_family_total") {
		t.Error("Has")
	}
}

func TestSeriesLeaveOutZeros(t *testing.T) {
	f, _ := Parse(strings.NewReader(scrape))
	want := map[string]float64{
		"admin_access=true,allocated=false,source=":                        2,
		"admin_access=false,allocated=true,source=resource_claim_template": 1,
	}
	if got := f.Series("resourceclaim_controller_resource_claims"); !reflect.DeepEqual(got, want) {
		t.Fatalf("Series = %v", got)
	}
}

func TestExpectedClaimGauge(t *testing.T) {
	claims := []Claim{{AdminAccess: true}, {AdminAccess: true}, {Allocated: true, FromTemplate: true}}
	want := map[string]float64{
		"admin_access=true,allocated=false,source=":                        2,
		"admin_access=false,allocated=true,source=resource_claim_template": 1,
	}
	if got := ExpectedClaimGauge(claims, true); !reflect.DeepEqual(got, want) {
		t.Fatalf("with source: %v", got)
	}
	noSource := ExpectedClaimGauge(claims, false)
	if noSource["admin_access=true,allocated=false"] != 2 || len(noSource) != 2 {
		t.Fatalf("without source: %v", noSource)
	}
}

// The part of the gauge one source makes up, as a spec beside others
// reads it: the other sources' series are left out, and so are zeros.
func TestSeriesWithOneSource(t *testing.T) {
	f, _ := Parse(strings.NewReader(scrape + `resourceclaim_controller_resource_claims{admin_access="false",allocated="true",source="extended_resource"} 2
resourceclaim_controller_resource_claims{admin_access="true",allocated="true",source="extended_resource"} 0
`))
	got := f.SeriesWith("resourceclaim_controller_resource_claims", map[string]string{"source": SourceExtendedResource})
	want := map[string]float64{"admin_access=false,allocated=true,source=extended_resource": 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SeriesWith = %v", got)
	}
	claims := []Claim{{Allocated: true, ExtendedResource: true, FromTemplate: true}, {Allocated: true, ExtendedResource: true}, {AdminAccess: true}}
	var extended []Claim
	for _, c := range claims {
		if c.Source() == SourceExtendedResource {
			extended = append(extended, c)
		}
	}
	if e := ExpectedClaimGauge(extended, true); !reflect.DeepEqual(e, want) {
		t.Fatalf("expected from the extended-resource claims: %v", e)
	}
}

func TestParseRejectsGarbage(t *testing.T) {
	if _, err := Parse(strings.NewReader("metric{ 1\n")); err == nil {
		t.Fatal("want parse error")
	}
}

// The DRA gates a component reports, as --feature-gates would set them;
// the other gates are left out.
func TestDRAGates(t *testing.T) {
	f, err := Parse(strings.NewReader(`# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="DRAAdminAccess",stage="BETA"} 1
kubernetes_feature_enabled{name="DRADeviceTaints",stage="ALPHA"} 0
kubernetes_feature_enabled{name="DynamicResourceAllocation",stage=""} 1
kubernetes_feature_enabled{name="SidecarContainers",stage=""} 1
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.DRAGates(), "DRAAdminAccess=true,DRADeviceTaints=false,DynamicResourceAllocation=true"; got != want {
		t.Errorf("DRAGates = %q, want %q", got, want)
	}
	if got := (Families{}).DRAGates(); got != "" {
		t.Errorf("no family: %q", got)
	}
}
