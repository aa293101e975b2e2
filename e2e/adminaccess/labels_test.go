// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
)

// The gate registry compiled in says what the release table says of
// DRAAdminAccess in every release its history covers, so that where the
// suite writes upstream's labels from the table they are what
// framework.WithFeatureGate writes from the registry.
func TestTheGateRegistryAgreesWithTheReleaseTable(t *testing.T) {
	gate := utilfeature.DefaultMutableFeatureGate
	history := gate.GetAllVersioned()[features.DRAAdminAccess]
	if len(history) == 0 {
		t.Fatal("the compiled-in registry has no DRAAdminAccess")
	}
	own := gate.EmulationVersion()
	covered := 0
	for _, minor := range release.Minors() {
		rel, err := release.Get(minor)
		if err != nil {
			t.Fatal(err)
		}
		v := version.MustParse(minor)
		if v.GreaterThan(own) {
			continue // newer than the registry: the table alone says
		}
		var at *featuregate.FeatureSpec
		for i := range history {
			if !history[i].Version.GreaterThan(v) {
				at = &history[i]
			}
		}
		if at == nil {
			t.Errorf("the registry has no DRAAdminAccess at %s", minor)
			continue
		}
		covered++
		if got := maturityOf(*at); got != rel.GateState {
			t.Errorf("Kubernetes %s: the registry says %s (%s, default %v), the release table %s", minor, got, at.PreRelease, at.Default, rel.GateState)
		}
	}
	if covered < 2 {
		t.Errorf("the registry (version %s) covers %d of the table's releases", own, covered)
	}
}

// framework.WithFeatureGate writes the labels where the registry speaks for
// the release under test; elsewhere they are written from the table, as
// framework.WithLabel writes each.
func TestAdminAccessGateUsesTheFrameworkWhereItCan(t *testing.T) {
	for _, minor := range release.Minors() {
		rel, err := release.Get(minor)
		if err != nil {
			t.Fatal(err)
		}
		got := adminAccessGate(rel)
		if rel.GateState == registryMaturity() {
			if len(got) != 1 || !framework.TagsEqual(got[0], framework.WithFeatureGate(features.DRAAdminAccess)) {
				t.Errorf("Kubernetes %s (the registry's maturity, %s): %v, want framework.WithFeatureGate's", minor, rel.GateState, got)
			}
			continue
		}
		want := labels.AdminAccessGate(rel)
		if len(got) != len(want) {
			t.Errorf("Kubernetes %s: %d decorations for %v", minor, len(got), want)
			continue
		}
		for i, u := range want {
			if u.InName && !framework.TagsEqual(got[i], framework.WithLabel(u.Label)) {
				t.Errorf("Kubernetes %s: decoration %d is %v, want framework.WithLabel(%q)", minor, i, got[i], u.Label)
			}
		}
	}
	if registryMaturity() != release.Beta {
		t.Errorf("k8s.io/kubernetes v1.35.4's registry has DRAAdminAccess beta and on; read %q", registryMaturity())
	}
}
