package resolved

import (
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
)

func inputs(mod func(*Inputs)) Inputs {
	in := Inputs{Given: "1.35", Profile: "default", Features: release.DefaultSet, ClusterName: "dra-e2e", Upgrade: "1",
		UpgradeBits: "/r/_output/upgrade-bits-1.35.json", Root: "/r", Output: "/r/_output", Artifacts: "_artifacts/1.35"}
	if mod != nil {
		mod(&in)
	}
	return in
}

// The release is resolved once, at the table's patch, and the upgrade is
// decided once, with the table's reasons word for word where it is a
// declared skip.
func TestNew(t *testing.T) {
	r, err := New(inputs(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r.Release != "1.35.4" || r.Minor != "1.35" || r.Allocator == "" || r.Layout.Artifacts != "/r/_artifacts/1.35" ||
		!r.Upgrade.Runs || r.Upgrade.Next != "1.36" || r.Upgrade.Bits != "/r/_output/upgrade-bits-1.35.json" {
		t.Errorf("resolved %+v", r)
	}
	if rel, err := r.Rel(); err != nil || rel.Published == "" {
		t.Errorf("the row of a minor given keeps kind's published image: %+v, %v", rel, err)
	}
	rel135, _ := release.Get("1.35")
	for name, c := range map[string]struct {
		mod        func(*Inputs)
		runs       bool
		mode       release.Mode
		outOfReach bool
	}{
		"the requirement's ID selects it": {func(in *Inputs) { in.Labels = labels.UpgradeRequirement }, true, release.Mode{}, false},
		"UPGRADE=0":                       {func(in *Inputs) { in.Upgrade = "0" }, false, release.Mode{}, true},
		"an existing cluster":             {func(in *Inputs) { in.Kubeconfig = "/kc" }, false, release.Mode{Existing: true, UpgradeImage: true}, true},
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
	if r, _ := New(inputs(func(in *Inputs) { in.Labels = "authz" })); r.Upgrade.Runs || r.Upgrade.Declared {
		t.Errorf("a filter that leaves the spec out: %+v", r.Upgrade)
	}
	alpha, err := New(inputs(func(in *Inputs) { in.Features = "alpha" }))
	if err != nil || alpha.Upgrade.Runs || !strings.Contains(alpha.Upgrade.Why, "FEATURES=alpha") {
		t.Errorf("a feature set: %+v, %v", alpha.Upgrade, err)
	}
	if newest, err := New(inputs(func(in *Inputs) { in.Given = "1.37" })); err != nil || newest.Upgrade.Runs || !newest.Upgrade.Declared {
		t.Errorf("the newest release: %+v, %v", newest.Upgrade, err)
	}
	for _, bad := range []func(*Inputs){
		func(in *Inputs) { in.Given = "1.99" }, func(in *Inputs) { in.Features = "nosuch" }, func(in *Inputs) { in.Labels = "authz &&" },
	} {
		if _, err := New(inputs(bad)); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("refusal not one line: %v", err)
		}
	}
}
