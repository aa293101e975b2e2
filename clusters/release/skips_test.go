package release

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestDeclaredSkips(t *testing.T) {
	r133, _ := Get("1.33")
	r135, _ := Get("1.35")
	r136, _ := Get("1.36")
	r137, _ := Get("1.37")
	r136stable, _ := Resolve("1.36", "stable")
	created := Mode{NodeAccess: true, UpgradeImage: true}
	existing := Mode{Existing: true}
	existingKind := Mode{Existing: true, NodeAccess: true}
	cases := []struct {
		name string
		r    Release
		n    Need
		m    Mode
		skip bool
		why  string
	}{
		// On a cluster the suite made, with the upgrade image, 1.33-1.35 run everything but the lock spec.
		{"1.35 gates switch", r135, NeedGateSwitching, created, false, ""},
		{"1.35 upgrade", r135, NeedReleaseSwitching, created, false, ""},
		{"1.35 nodes", r135, NeedNodeAccess, created, false, ""},
		{"1.35 metrics", r135, NeedMetricsEndpoints, created, false, ""},
		{"1.35 lock", r135, NeedGateLock, created, true, "DRAAdminAccess is beta in Kubernetes 1.35 and may be switched"},
		{"1.33 lock", r133, NeedGateLock, created, true, "is alpha in Kubernetes 1.33"},
		// 1.36: locked, newest.
		{"1.36 gates", r136, NeedGateSwitching, created, true, "DRAAdminAccess is GA-locked in Kubernetes 1.36 and cannot be switched"},
		{"1.36 lock", r136, NeedGateLock, created, false, ""},
		{"1.36 upgrade", r136, NeedReleaseSwitching, created, false, ""},
		{"1.37 upgrade", r137, NeedReleaseSwitching, created, true, "Kubernetes 1.37 is the newest release the suite pins"},
		{"1.37 gates", r137, NeedGateSwitching, created, true, "GA-locked in Kubernetes 1.37"},
		// UPGRADE=0.
		{"no image", r135, NeedReleaseSwitching, Mode{NodeAccess: true}, true, "no node image of Kubernetes 1.36 was given"},
		// Under a feature set no upgrade image is fetched: the reason is the set,
		// and so it is for a feature the set turns off.
		{"stable upgrade", r136stable, NeedReleaseSwitching, Mode{NodeAccess: true}, true, "runs the stable DRA feature set of Kubernetes 1.36"},
		{"stable capacity", r136stable, NeedConsumableCapacity, created, true, "DRAConsumableCapacity is off in Kubernetes 1.36's DRA feature set stable (FEATURES=stable)"},
		{"1.35 capacity", r135, NeedConsumableCapacity, created, true, "DRAConsumableCapacity is off in Kubernetes 1.35's default feature set (alpha before 1.36)"},
		// --kubeconfig.
		{"existing gates", r135, NeedGateSwitching, existing, true, "--kubeconfig"},
		{"existing lock", r136, NeedGateLock, existing, true, "--kubeconfig"},
		{"existing upgrade", r135, NeedReleaseSwitching, existing, true, "--kubeconfig"},
		{"existing metrics", r135, NeedMetricsEndpoints, existing, true, "metric endpoints"},
		{"existing nodes", r135, NeedNodeAccess, existing, true, "not a kind cluster"},
		{"existing kind nodes", r135, NeedNodeAccess, existingKind, false, ""},
		{"unknown need", r135, Need("nothing"), existing, false, ""},
		// A driver of the user's own.
		{"vendor driver", r135, NeedBundledDriver, Mode{Existing: true, VendorDriver: true}, true, "DRIVER and DEVICE_CLASS"},
		{"bundled driver", r135, NeedBundledDriver, existing, false, ""},
	}
	for _, c := range cases {
		why, skip := c.r.DeclaredSkip(c.n, c.m)
		if skip != c.skip || !strings.Contains(why, c.why) {
			t.Errorf("%s: DeclaredSkip = %q, %t; want %t containing %q", c.name, why, skip, c.skip, c.why)
		}
	}
	if docs := DeclaredSkipDocs(); len(docs) != len(declaredSkips) || !strings.HasPrefix(docs[0], "gate-switching: ") {
		t.Errorf("docs %v", docs)
	}
}

// README.md lists every declared skip; a row added here must be documented there.
func TestREADMEListsEveryDeclaredSkip(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range DeclaredSkipDocs() {
		need, when, _ := strings.Cut(d, ": ")
		if row := "| `" + need + "` | " + when + " |"; !strings.Contains(string(data), row) {
			t.Errorf("README.md lacks the row %s", row)
		}
	}
}

// README.md names every known upstream defect with the allocators it is
// declared for, one table row per case.
func TestREADMEListsEveryKnownDefect(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defects {
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			found = found || strings.HasPrefix(line, "| ["+d.Issue+"]") && strings.Contains(line, fmt.Sprintf("%q", d.Title)) &&
				strings.Contains(line, d.Where) && strings.Contains(line, "| "+strings.Join(d.Allocators, ", ")+" |")
		}
		if !found {
			t.Errorf("README.md lacks the row of %s (%s %s) with allocators %v", d.Issue, d.Title, d.Where, d.Allocators)
		}
	}
}
