// SPDX-License-Identifier: Apache-2.0

package resolved

import (
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
)

// vars are variables' values by name, what Inputs.Get reads.
type vars map[string]string

func inputs(mod func(vars)) Inputs {
	v := vars{"K8S_VERSION": "1.35", "PROFILE": "default", "FEATURES": release.DefaultSet, "CLUSTER_NAME": "dra-e2e", "UPGRADE": "1"}
	if mod != nil {
		mod(v)
	}
	return Inputs{Get: func(name string) string { return v[name] },
		UpgradeBits: "/r/_output/upgrade-bits-1.35.json", Root: "/r", Output: "/r/_output", Artifacts: "_artifacts/1.35"}
}

// The release is resolved once, at the table's patch, and the upgrade is
// decided once, with the table's reasons word for word where it is a
// declared skip.
func TestNew(t *testing.T) {
	r, err := New(inputs(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r.Release != "1.35.8" || r.Layout.Artifacts != "/r/_artifacts/1.35" ||
		!r.Upgrade.Runs || r.Upgrade.Next != "1.36" || r.Upgrade.Bits != "/r/_output/upgrade-bits-1.35.json" {
		t.Errorf("resolved %+v", r)
	}
	if rel, err := r.Rel(); err != nil || rel.Published == "" {
		t.Errorf("the row of a minor given keeps kind's published image: %+v, %v", rel, err)
	}
	rel135, _ := release.Get("1.35")
	for name, c := range map[string]struct {
		mod        func(vars)
		runs       bool
		mode       release.Mode
		outOfReach bool
	}{
		"the requirement's ID selects it": {func(v vars) { v["LABELS"] = labels.UpgradeRequirement }, true, release.Mode{}, false},
		"UPGRADE=0":                       {func(v vars) { v["UPGRADE"] = "0" }, false, release.Mode{}, true},
		"an existing cluster":             {func(v vars) { v["KUBECONFIG"] = "/kc" }, false, release.Mode{Existing: true, UpgradeImage: true}, true},
	} {
		r, err := New(inputs(c.mod))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Upgrade.Runs != c.runs {
			t.Errorf("%s: runs %t", name, r.Upgrade.Runs)
		}
		if c.runs {
			continue
		}
		want, _ := rel135.SkipFor(release.NeedReleaseSwitching, c.mode)
		if r.Upgrade.Why != want.Reason || !r.Upgrade.Declared || r.Upgrade.OutOfReach != c.outOfReach || r.Upgrade.Bits != "" {
			t.Errorf("%s: %+v, want the table's %q", name, r.Upgrade, want.Reason)
		}
	}
	if r, _ := New(inputs(func(v vars) { v["LABELS"] = "authz" })); r.Upgrade.Runs || r.Upgrade.Declared {
		t.Errorf("a filter that leaves the spec out: %+v", r.Upgrade)
	}
	alpha, err := New(inputs(func(v vars) { v["FEATURES"] = "alpha" }))
	if err != nil || alpha.Upgrade.Runs || !strings.Contains(alpha.Upgrade.Why, "FEATURES=alpha") {
		t.Errorf("a feature set: %+v, %v", alpha.Upgrade, err)
	}
	if newest, err := New(inputs(func(v vars) { v["K8S_VERSION"] = newestMinor() })); err != nil || newest.Upgrade.Runs || !newest.Upgrade.Declared {
		t.Errorf("the newest release: %+v, %v", newest.Upgrade, err)
	}
	for _, bad := range []func(vars){
		func(v vars) { v["K8S_VERSION"] = "1.99" }, func(v vars) { v["FEATURES"] = "nosuch" }, func(v vars) { v["LABELS"] = "authz &&" },
	} {
		if _, err := New(inputs(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("refusal not one line: %v", err)
		}
	}
}

// Every field the variables fill comes from its variable by its tag, a
// switch as a boolean; a driver is the user's only where DRIVER or its
// class names one.
func TestNewFillsTaggedFields(t *testing.T) {
	r, err := New(inputs(func(v vars) {
		v["KUBECONFIG"], v["KUBECONTEXT"], v["KEEP_CLUSTER"], v["DRIVER"], v["DEVICE_CLASS"], v["DRIVER_NAMESPACE"], v["FOCUS"] =
			"kc", "staging", "1", "gpu.example.com", "gpu", "gpu-operator", "quota"
	}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster != (Cluster{Name: "dra-e2e", Kubeconfig: "/r/kc", Context: "staging", Keep: true}) || r.Filters != (Filters{Focus: "quota"}) ||
		r.Driver.Vendor == nil || *r.Driver.Vendor != (Vendor{Name: "gpu.example.com", DeviceClass: "gpu", Namespace: "gpu-operator"}) {
		t.Errorf("resolved %+v, driver %+v", r, r.Driver.Vendor)
	}
	if r, err := New(inputs(func(v vars) { v["ADMIN_CHECK"] = "true" })); err != nil || r.Driver.Vendor != nil {
		t.Errorf("ADMIN_CHECK alone names no driver: %+v, %v", r.Driver.Vendor, err)
	}
}

// A pre-release is carried whole into run.json: the run checks the
// version given, and what reads run.json gets that version's row back.
func TestNewCarriesAPreReleaseWhole(t *testing.T) {
	dir := t.TempDir()
	r, err := New(inputs(func(v vars) { v["K8S_VERSION"] = "1.37.3-rc.0" }))
	if err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := back.Rel()
	if back.Release != "1.37.3-rc.0" || err != nil || rel.Version != "1.37.3-rc.0" || rel.PreRelease() != "rc.0" {
		t.Errorf("run.json's release %q, its row %q (pre-release %q), %v", back.Release, rel.Version, rel.PreRelease(), err)
	}
}
