// SPDX-License-Identifier: Apache-2.0

package resolved

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	in := Run{Given: "1.35", Release: "1.35.8", Profile: "default", Features: release.DefaultSet,
		Upgrade: Upgrade{Runs: true, Next: "1.36"}, Layout: Layout{Artifacts: dir}}
	path, err := Write(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Schema != Schema || out.Release != "1.35.8" || out.Upgrade.Next != "1.36" {
		t.Fatalf("read back %+v", out)
	}
}

func TestWriteRefusesUndecided(t *testing.T) {
	dir := t.TempDir()
	for name, r := range map[string]Run{
		"no reason":  {Release: "1.35.8", Profile: "default", Features: release.DefaultSet, Layout: Layout{Artifacts: dir}},
		"no release": {Profile: "default", Features: release.DefaultSet, Upgrade: Upgrade{Why: "x"}, Layout: Layout{Artifacts: dir}},
		"no next":    {Release: "1.35.8", Profile: "default", Features: release.DefaultSet, Upgrade: Upgrade{Runs: true}, Layout: Layout{Artifacts: dir}},
	} {
		if _, err := Write(dir, r); err == nil {
			t.Errorf("%s: written", name)
		}
	}
	if _, err := Read(filepath.Join(dir, FileName)); err == nil {
		t.Error("read a file no resolver wrote")
	}
}

func TestUpgradeFor(t *testing.T) {
	r135, _ := release.Get("1.35")
	newest, _ := release.Get(newestMinor())
	alpha, err := release.Resolve("1.35", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		rel      release.Release
		m        release.Mode
		selected bool
		runs     bool
		why      string
	}{
		{"defaults, images given, selected", r135, release.Mode{UpgradeImage: true}, true, true, ""},
		{"left out by the filters", r135, release.Mode{UpgradeImage: true}, false, false, "filters"},
		{"UPGRADE=0", r135, release.Mode{}, true, false, "UPGRADE=0"},
		{"existing cluster", r135, release.Mode{Existing: true, UpgradeImage: true}, true, false, "--kubeconfig"},
		{"newest release", newest, release.Mode{UpgradeImage: true}, true, false, "newest"},
		{"a feature set", alpha, release.Mode{UpgradeImage: true}, true, false, "feature set"},
	}
	for _, c := range cases {
		u := UpgradeFor(c.rel, c.m, c.selected)
		if u.Runs != c.runs || !strings.Contains(u.Why, c.why) {
			t.Errorf("%s: %+v", c.name, u)
		}
		if u.Runs && u.Next != "1.36" {
			t.Errorf("%s: next %q", c.name, u.Next)
		}
	}
}

// The bundled driver (no Vendor) reads as the zero Vendor, not a nil
// dereference; a driver of the user's own reads as it was resolved.
func TestVendor(t *testing.T) {
	if v := (Run{}).Vendor(); v != (Vendor{}) {
		t.Errorf("bundled driver: Vendor() = %+v, want the zero Vendor", v)
	}
	own := Vendor{Name: "gpu.example.com", DeviceClass: "gpu", Namespace: "gpu-driver"}
	if v := (Run{Driver: Driver{Vendor: &own}}).Vendor(); v != own {
		t.Errorf("driver of the user's own: Vendor() = %+v, want %+v", v, own)
	}
}

// newestMinor is the newest release of the table, which has no release to
// upgrade to.
func newestMinor() string {
	minors := release.Minors()
	return minors[len(minors)-1]
}
