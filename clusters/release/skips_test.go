// SPDX-License-Identifier: Apache-2.0

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
	minors := Minors()
	newest, _ := Get(minors[len(minors)-1])
	r136stable, _ := Resolve("1.36", "stable")
	created := Mode{NodeAccess: true, UpgradeImage: true}
	existing := Mode{Existing: true}
	existingKind := Mode{Existing: true, NodeAccess: true}
	cases := []struct {
		name  string
		r     Release
		n     Need
		m     Mode
		skip  bool
		why   string
		reach Reach
	}{
		// On a cluster the suite made, with the upgrade image, 1.33-1.35 run everything but the lock spec.
		{"1.35 gates switch", r135, NeedGateSwitching, created, false, "", ""},
		{"1.35 upgrade", r135, NeedReleaseSwitching, created, false, "", ""},
		{"1.35 nodes", r135, NeedNodeAccess, created, false, "", ""},
		{"1.35 metrics", r135, NeedMetricsEndpoints, created, false, "", ""},
		{"1.35 lock", r135, NeedGateLock, created, true, "DRAAdminAccess is beta in Kubernetes 1.35 and may be switched", NotApplicable},
		{"1.33 lock", r133, NeedGateLock, created, true, "is alpha in Kubernetes 1.33", NotApplicable},
		// 1.36: locked, newest.
		{"1.36 gates", r136, NeedGateSwitching, created, true, "DRAAdminAccess is GA-locked in Kubernetes 1.36 and cannot be switched", NotApplicable},
		{"1.36 lock", r136, NeedGateLock, created, false, "", ""},
		{"1.36 upgrade", r136, NeedReleaseSwitching, created, false, "", ""},
		{"1.37 upgrade", r137, NeedReleaseSwitching, created, false, "", ""},
		{"newest upgrade", newest, NeedReleaseSwitching, created, true, "Kubernetes " + newest.Minor + " is the newest release the suite pins", NotApplicable},
		{"1.37 gates", r137, NeedGateSwitching, created, true, "GA-locked in Kubernetes 1.37", NotApplicable},
		// UPGRADE=0: the run was not given what the release has.
		{"no image", r135, NeedReleaseSwitching, Mode{NodeAccess: true}, true, "no node image or bits of Kubernetes 1.36 were given (UPGRADE=0)", OutOfReach},
		// Under a feature set no upgrade image is fetched: the reason is the set,
		// and so it is for a feature the set turns off.
		{"stable upgrade", r136stable, NeedReleaseSwitching, Mode{NodeAccess: true}, true, "runs the stable DRA feature set of Kubernetes 1.36", NotApplicable},
		{"stable capacity", r136stable, NeedConsumableCapacity, created, true, "DRAConsumableCapacity is off in Kubernetes 1.36's DRA feature set stable (FEATURES=stable)", NotApplicable},
		{"1.35 capacity", r135, NeedConsumableCapacity, created, true, "DRAConsumableCapacity is off in Kubernetes 1.35's default feature set (alpha before 1.36)", NotApplicable},
		// --kubeconfig: out of reach, unless the release has no such behaviour
		// at all, which no cluster could check.
		{"existing gates", r135, NeedGateSwitching, existing, true, "--kubeconfig", OutOfReach},
		{"existing locked gates", r136, NeedGateSwitching, existing, true, "GA-locked in Kubernetes 1.36", NotApplicable},
		{"existing lock", r136, NeedGateLock, existing, true, "--kubeconfig", OutOfReach},
		{"existing unlocked lock", r135, NeedGateLock, existing, true, "may be switched", NotApplicable},
		{"existing upgrade", r135, NeedReleaseSwitching, existing, true, "--kubeconfig", OutOfReach},
		{"existing newest upgrade", newest, NeedReleaseSwitching, existing, true, "newest release", NotApplicable},
		{"existing metrics", r135, NeedMetricsEndpoints, existing, true, "metric endpoints", OutOfReach},
		{"existing nodes", r135, NeedNodeAccess, existing, true, "not a kind cluster", OutOfReach},
		{"existing kind nodes", r135, NeedNodeAccess, existingKind, false, "", ""},
		{"existing capacity", r135, NeedConsumableCapacity, existing, true, "off in Kubernetes 1.35", NotApplicable},
		{"unknown need", r135, Need("nothing"), existing, false, "", ""},
		// A driver of the user's own.
		{"vendor driver", r135, NeedBundledDriver, Mode{Existing: true, VendorDriver: true}, true, "DRIVER and DEVICE_CLASS", OutOfReach},
		{"bundled driver", r135, NeedBundledDriver, existing, false, "", ""},
	}
	for _, c := range cases {
		s, skip := c.r.SkipFor(c.n, c.m)
		if skip != c.skip || !strings.Contains(s.Reason, c.why) || s.Reach != c.reach || skip && s.Need != c.n {
			t.Errorf("%s: SkipFor = %+v, %t; want %t containing %q, %q", c.name, s, skip, c.skip, c.why, c.reach)
		}
		if s.OutOfReach() != (c.reach == OutOfReach) {
			t.Errorf("%s: OutOfReach() = %t", c.name, s.OutOfReach())
		}
		if why, declared := c.r.DeclaredSkip(c.n, c.m); why != s.Reason || declared != skip {
			t.Errorf("%s: DeclaredSkip = %q, %t; SkipFor %q, %t", c.name, why, declared, s.Reason, skip)
		}
	}
	docs := DeclaredSkipDocs()
	if len(docs) != len(declaredSkips) || docs[0].Need != NeedGateSwitching || docs[0].Reach != OutOfReach {
		t.Errorf("docs %v", docs)
	}
}

// Every row says why it exists, and the rows out of reach are exactly
// those of how the run reaches the cluster: an existing cluster's
// components, nodes and endpoints, a driver of the user's own, a node image
// not given. Each such need has a few words for the sign-off's line.
func TestOutOfReachRowsAreTheRunsReach(t *testing.T) {
	reach := map[Need]bool{NeedGateSwitching: true, NeedReleaseSwitching: true, NeedGateLock: true,
		NeedNodeAccess: true, NeedMetricsEndpoints: true, NeedBundledDriver: true}
	for _, d := range DeclaredSkipDocs() {
		switch {
		case d.Reach != OutOfReach && d.Reach != NotApplicable:
			t.Errorf("%s (%s): reach %q", d.Need, d.When, d.Reach)
		case d.Reach == OutOfReach && !reach[d.Need]:
			t.Errorf("%s (%s) is out of reach, but no way of reaching the cluster keeps it from a run", d.Need, d.When)
		}
		if d.Need.Brief() == string(d.Need) {
			t.Errorf("%s has no brief name", d.Need)
		}
	}
}

// verdictsPage is the page whose tables list the declared skips and the
// known upstream defects, from the repository's root.
const verdictsPage = "docs/verdicts.md"

// docs/verdicts.md lists every declared skip; a row added here must be
// documented there.
func TestTheVerdictsPageListsEveryDeclaredSkip(t *testing.T) {
	data, err := os.ReadFile("../../" + verdictsPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range DeclaredSkipDocs() {
		if row := "| `" + string(d.Need) + "` | " + d.When + " | " + string(d.Reach) + " |"; !strings.Contains(string(data), row) {
			t.Errorf("%s lacks the row %s", verdictsPage, row)
		}
	}
}

// docs/verdicts.md names every known upstream defect with the allocators it is
// declared for, one table row per case.
func TestTheVerdictsPageListsEveryKnownDefect(t *testing.T) {
	data, err := os.ReadFile("../../" + verdictsPage)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Defects() {
		found := false
		for _, line := range strings.Split(string(data), "\n") {
			found = found || strings.HasPrefix(line, "| ["+d.Issue+"]") && strings.Contains(line, fmt.Sprintf("%q", d.Title)) &&
				strings.Contains(line, d.Where) && strings.Contains(line, "| "+strings.Join(d.Allocators, ", ")+" |")
		}
		if !found {
			t.Errorf("%s lacks the row of %s (%s %s) with allocators %v", verdictsPage, d.Issue, d.Title, d.Where, d.Allocators)
		}
	}
}
