// SPDX-License-Identifier: Apache-2.0

package release

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestGetByMinorPatchOrV(t *testing.T) {
	for _, name := range []string{"1.35", "1.35.8", "v1.35.8", " 1.35 "} {
		r, err := Get(name)
		if err != nil || r.Version != "1.35.8" || r.GitVersion() != "v1.35.8" {
			t.Errorf("Get(%q) = %+v, %v", name, r.Version, err)
		}
	}
	_, err := Get("1.32")
	if err == nil || !strings.Contains(err.Error(), "supported releases are "+strings.Join(Minors(), ", ")) {
		t.Fatalf("unknown release error: %v", err)
	}
	if got := Minors(); !slices.IsSorted(got) || got[0] != "1.33" || !slices.Contains(got, Default) {
		t.Fatalf("Minors = %v", got)
	}
	if r, _ := Get(Default); !r.GateSwitchable() {
		t.Fatal("the default release must let the gate be switched")
	}
}

func TestLabelAndDenialFollowTheRename(t *testing.T) {
	r133, _ := Get("1.33")
	r134, _ := Get("1.34")
	if r133.AdminLabel != "resource.k8s.io/admin-access" || r133.StaleLabel != r134.AdminLabel {
		t.Fatalf("1.33 labels %q %q", r133.AdminLabel, r133.StaleLabel)
	}
	want := "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on the containing namespace"
	if got := r134.AdminAccessDenial(); got != want {
		t.Fatalf("1.34 denial %q", got)
	}
	if !strings.Contains(r133.AdminAccessDenial(), "`resource.k8s.io/admin-access: true`") {
		t.Fatalf("1.33 denial %q", r133.AdminAccessDenial())
	}
	if r134.AdminAccessFieldPath(0) != "spec.devices.requests[0].adminAccess" ||
		r134.AdminAccessStatusFieldPath(1) != "status.allocation.devices.results[1].adminAccess" {
		t.Fatal("field paths")
	}
}

func TestGateMaturity(t *testing.T) {
	cases := map[string]struct{ def, switchable bool }{
		"1.33": {false, true}, "1.34": {true, true}, "1.35": {true, true}, "1.36": {true, false},
	}
	for minor, want := range cases {
		r, _ := Get(minor)
		if r.GateDefault() != want.def || r.GateSwitchable() != want.switchable {
			t.Errorf("%s: default %t switchable %t", minor, r.GateDefault(), r.GateSwitchable())
		}
	}
	r, _ := Get("1.36")
	if r.LockedGateError() != "cannot set feature gate DRAAdminAccess to false, feature is locked to true" {
		t.Fatal(r.LockedGateError())
	}
}

func TestMetricNamesPerRelease(t *testing.T) {
	r133, _ := Get("1.33")
	r134, _ := Get("1.34")
	r135, _ := Get("1.35")
	if r133.Metrics.Labelled || r133.Metrics.CreatesTotal != "resourceclaim_controller_create_attempts_total" ||
		r133.Metrics.AllocatedResourceClaims != "resourceclaim_controller_allocated_resource_claims" {
		t.Fatalf("1.33 metrics %+v", r133.Metrics)
	}
	if !r134.Metrics.Labelled || r134.Metrics.SourceLabel || r134.Metrics.CreatesTotal != "resourceclaim_controller_creates_total" {
		t.Fatalf("1.34 metrics %+v", r134.Metrics)
	}
	if !r135.Metrics.SourceLabel {
		t.Fatal("1.35 adds the source label")
	}
	// The 1.33 row must never share state with the labelled rows.
	if r133.Metrics.SchedulerPending != "scheduler_pending_pods" || r135.Metrics.SchedulerUnschedulable != "scheduler_unschedulable_pods" {
		t.Fatal("scheduler metric names")
	}
}

func TestOnly133NeedsDRAAndBetaAPIsSwitchedOn(t *testing.T) {
	for _, minor := range Minors() {
		r, _ := Get(minor)
		needs := len(r.RuntimeConfig) > 0 || r.ExtraGates["DynamicResourceAllocation"]
		if needs != (minor == "1.33") {
			t.Errorf("%s: runtime-config %v, extra gates %v", minor, r.RuntimeConfig, r.ExtraGates)
		}
		if failV1 := r.KubeletFailCgroupV1; failV1 != (minor >= "1.35") {
			t.Errorf("%s: failCgroupV1 %t", minor, failV1)
		}
	}
}

func TestNextIsTheFollowingMinor(t *testing.T) {
	minors := Minors()
	for i, from := range minors[:len(minors)-1] {
		r, _ := Get(from)
		next, ok := r.Next()
		if !ok || next.Minor != minors[i+1] || next.Version == "" {
			t.Errorf("%s.Next() = %q, %t; want %s", from, next.Minor, ok, minors[i+1])
		}
	}
	newest, _ := Get(minors[len(minors)-1])
	if _, ok := newest.Next(); ok {
		t.Errorf("%s has no newer release pinned", newest.Minor)
	}
}

func TestUnschedulableGaugeForgetsDeletedPodsFrom136(t *testing.T) {
	for _, m := range Minors() {
		r, _ := Get(m)
		if want := m >= "1.36"; r.Metrics.UnschedulableForgetsDeleted != want {
			t.Errorf("%s: UnschedulableForgetsDeleted = %t, want %t", m, r.Metrics.UnschedulableForgetsDeleted, want)
		}
	}
}

// kube-scheduler counts the claims it makes for extended resources from
// 1.35, under its own name until 1.37 takes kube-controller-manager's
// counter, labels and all.
func TestSchedulerCountsItsExtendedResourceClaimsFrom135(t *testing.T) {
	want := map[string]string{"1.33": "", "1.34": "", "1.35": "scheduler_resourceclaim_creates_total",
		"1.36": "scheduler_resourceclaim_creates_total", "1.37": "dynamic_resource_allocation_resourceclaim_creates_total"}
	for _, m := range Minors() {
		r, _ := Get(m)
		if w, ok := want[m]; ok && r.Metrics.SchedulerCreates != w || r.Metrics.SchedulerCreatesLabelled != (m >= "1.37") {
			t.Errorf("%s: SchedulerCreates %q labelled %t", m, r.Metrics.SchedulerCreates, r.Metrics.SchedulerCreatesLabelled)
		}
	}
	r137, _ := Get("1.37")
	if r137.Metrics.SchedulerCreates != r137.Metrics.CreatesTotal {
		t.Error("1.37's kube-scheduler registers kube-controller-manager's counter")
	}
}

func Test137RenamedTheClaimMetrics(t *testing.T) {
	r136, _ := Get("1.36")
	r137, _ := Get("1.37")
	if r137.GateState != GALocked || r137.AdminLabel != r136.AdminLabel || r137.AdminAccessDenial() != r136.AdminAccessDenial() {
		t.Fatalf("1.37 keeps 1.36's gate, label and text: %+v", r137)
	}
	m := r137.Metrics
	if m.CreatesTotal != "dynamic_resource_allocation_resourceclaim_creates_total" || m.ResourceClaims != "dynamic_resource_allocation_resource_claims" ||
		!m.Labelled || !m.SourceLabel || !m.OwnerLabels {
		t.Fatalf("1.37 metrics %+v", m)
	}
	for _, old := range []string{r136.Metrics.CreatesTotal, r136.Metrics.ResourceClaims} {
		found := false
		for _, r := range m.Retired {
			found = found || r == old
		}
		if !found {
			t.Errorf("1.37 must list %s as retired", old)
		}
	}
}
func TestPublishedImagesArePinnedByDigestAndAtPatch(t *testing.T) {
	for _, m := range Minors() {
		r, _ := Get(m)
		if r.Published == "" { // kind publishes none: the node image is built
			if m != "1.33" && r.PreRelease() == "" && r.Toolchain == "" {
				t.Logf("%s: no published image of kind %s; the node image is built", m, KindVersion)
			}
			continue
		}
		if !strings.HasPrefix(r.Published, "kindest/node:v"+m+".") || !strings.Contains(r.Published, "@sha256:") || len(r.Published[strings.Index(r.Published, "@sha256:")+8:]) != 64 {
			t.Errorf("%s: published image %q is not a digest-pinned kindest/node of that minor", m, r.Published)
		}
	}
	r, _ := Get("1.35")
	at, err := r.AtPatch("v1.35.8")
	if err != nil || at.Version != "1.35.8" || at.GitVersion() != "v1.35.8" || at.Minor != "1.35" || at.AdminLabel != r.AdminLabel {
		t.Fatalf("AtPatch: %+v %v", at.Version, err)
	}
	if at, err := r.AtPatch("v1.35.2-rc.0"); err != nil || at.Version != "1.35.2-rc.0" || at.PreRelease() != "rc.0" {
		t.Fatalf("pre-release: %v %v", at.Version, err)
	}
	for _, bad := range []string{"v1.34.11", "1.35", "garbage"} {
		if _, err := r.AtPatch(bad); err == nil {
			t.Errorf("AtPatch(%q) must fail for 1.35", bad)
		}
	}
}

func TestGetTakesAnyPatchOfASupportedMinor(t *testing.T) {
	r, err := Get("1.33.12")
	if err != nil || r.Minor != "1.33" || r.Version != "1.33.12" || r.AdminLabel != "resource.k8s.io/admin-access" {
		t.Fatalf("Get(1.33.12) = %+v, %v", r.Version, err)
	}
	if _, err := Get("1.32.5"); err == nil {
		t.Fatal("a patch of an unsupported minor must be refused")
	}
}

func TestOnly133CountsClaimQuotaFromAnotherVersionThanItWatches(t *testing.T) {
	for _, m := range Minors() {
		r, _ := Get(m)
		if r.ClaimQuotaVersion == "" {
			t.Errorf("%s: no ClaimQuotaVersion", m)
		}
		if got, want := r.ClaimQuotaMayMissDeletes(), m == "1.33"; got != want {
			t.Errorf("%s: ClaimQuotaMayMissDeletes = %t (prefers %s, counts %s), want %t", m, got, r.PreferredVersion(), r.ClaimQuotaVersion, want)
		}
	}
	r, _ := Get("1.33")
	if r.PreferredVersion() != "v1beta2" {
		t.Errorf("1.33 prefers %s, want v1beta2 (what its discovery says with both betas on)", r.PreferredVersion())
	}
}

// The allocator each release's default feature set selects, by the rule of
// structured.NewAllocator: the first implementation whose supported features
// cover the set.
func TestAllocatorOfTheDefaultFeatureSet(t *testing.T) {
	for _, m := range Minors() {
		r, _ := Get(m)
		got, err := r.AllocatorFor(r.DefaultFeatures())
		if err != nil || got != r.DefaultAllocator || got == "" {
			t.Errorf("%s: the defaults select %q (%v); the release's file says %q", m, got, err, r.DefaultAllocator)
		}
	}
}

// Every implementation a release has is reached, by the defaults, a move
// or a cluster set, or its file says why none can reach it: the report and
// the sign-off name those, so a column never reads as if it had checked
// them.
func TestEveryAllocatorIsReachedOrSaysWhyNot(t *testing.T) {
	for _, m := range Minors() {
		r, _ := Get(m)
		reached := map[string]bool{r.DefaultAllocator: true}
		for _, mv := range r.FeatureMoves {
			reached[mv.Allocator] = true
		}
		for _, s := range r.Sets {
			reached[s.Allocator] = true
		}
		for _, a := range r.Allocators {
			why, declared := r.Unreachable[a.Name]
			switch {
			case reached[a.Name] && declared:
				t.Errorf("%s: %s is reached, but declared unreachable (%s)", m, a.Name, why)
			case !reached[a.Name] && (!declared || why == ""):
				t.Errorf("%s: nothing reaches %s, and the release's file does not say why", m, a.Name)
			}
		}
		for name := range r.Unreachable {
			if !slices.ContainsFunc(r.Allocators, func(a Allocator) bool { return a.Name == name }) {
				t.Errorf("%s: unreachable %q is no allocator of the release", m, name)
			}
		}
	}
}

// A move, a feature set or the suite's own gates never turn a locked gate
// off or name a removed one: the component would refuse to start.
func TestNoMoveOrSetTurnsALockedGateOffOrNamesARemovedOne(t *testing.T) {
	for _, m := range Minors() {
		r, _ := Get(m)
		check := func(where string, gates map[string]bool) {
			for g, on := range gates {
				if slices.Contains(r.Removed, g) {
					t.Errorf("%s: %s names %s, which the release no longer has", m, where, g)
				}
				if !on && (slices.Contains(r.Locked, g) || g == Gate && !r.GateSwitchable()) {
					t.Errorf("%s: %s turns off %s, which the release locks on", m, where, g)
				}
			}
		}
		check("ExtraGates", r.ExtraGates)
		for _, mv := range r.FeatureMoves {
			check("the move to "+mv.Allocator, mv.Gates)
		}
		for _, s := range r.Sets {
			check("the feature set "+s.Name, s.Gates)
		}
	}
}

func TestAllocatorFollowsTheFeatureSet(t *testing.T) {
	r135, _ := Get("1.35")
	r136, _ := Get("1.36")
	cases := []struct {
		r    Release
		fs   []Feature
		want string
	}{
		// stable of 1.35 supports nothing: only a set without any DRA feature gets it.
		{r135, nil, "stable"},
		{r135, []Feature{FeatureAdminAccess}, "incubating"},
		{r135, []Feature{FeatureAdminAccess, FeaturePartitionableDevices, FeatureDeviceTaints}, "incubating"},
		{r135, []Feature{FeatureAdminAccess, FeatureConsumableCapacity}, "experimental"},
		// 1.36 serves admin access from stable once consumable capacity and binding conditions are off.
		{r136, []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints}, "stable"},
		{r136, append(r136.DefaultFeatures().Features, FeatureListTypeAttributes), "experimental"},
	}
	for _, c := range cases {
		got, err := c.r.AllocatorFor(FeatureSet{Name: "test", Features: c.fs})
		if err != nil || got != c.want {
			t.Errorf("%s %v: %q (%v), want %q", c.r.Minor, c.fs, got, err, c.want)
		}
	}
	if _, err := r135.AllocatorFor(FeatureSet{Name: "future", Features: []Feature{"DRASomethingNew"}}); err == nil {
		t.Error("a feature no implementation supports must be an error, not a guess")
	}
	if !r136.DefaultFeatures().Has(FeaturePartitionableDevices) || r135.DefaultFeatures().Has(FeaturePartitionableDevices) {
		t.Error("partitionable devices are on by default from 1.36 (beta), off before (alpha)")
	}
}

func TestKnownDefectRows(t *testing.T) {
	for _, m := range []string{"1.36", "1.37"} {
		r, _ := Get(m)
		d, ok := r.KnownDefect(DefectAdminConsumesCounters, "incubating")
		if !ok || d.Title != "DRA: AdminAccess consumes counters" {
			t.Errorf("%s: #140729 must be declared for the default allocator", m)
		}
		if _, ok := r.KnownDefect(DefectAdminConsumesCounters, "stable"); !ok {
			t.Errorf("%s: stable checks counters for admin requests too", m)
		}
	}
	// 1.34's allocators check counters for admin requests too; its alpha
	// set is where a run has partitionable devices.
	r134, _ := Resolve("1.34", "alpha")
	if _, ok := r134.KnownDefect(DefectAdminConsumesCounters, "experimental"); !ok {
		t.Error("1.34: #140729 must be declared for experimental, the alpha set's allocator")
	}
	r133, _ := Get("1.33")
	if _, ok := r133.KnownDefect(DefectAdminConsumesCounters, r133.Allocators[0].Name); ok {
		t.Error("1.33 is not a release the defect is declared for")
	}
	r136, _ := Get("1.36")
	d, _ := r136.KnownDefect(DefectAdminConsumesCounters, "incubating")
	if msg := d.NotReproduced("1.36", "incubating"); !strings.HasPrefix(msg, "declared defect not reproduced: fixed upstream? update the release table") {
		t.Errorf("not-reproduced message %q", msg)
	}
	if v := d.Verdict("seen"); !strings.HasPrefix(v, "known upstream defect kubernetes/kubernetes#140729 (") {
		t.Errorf("verdict %q", v)
	}
}

func TestEveryMoveSelectsItsAllocator(t *testing.T) {
	// The history: which implementations the moves reach on each release.
	want := map[string][]string{
		"1.33": nil, // one implementation
		"1.34": {"incubating"},
		"1.35": {"experimental"},
		"1.36": {"stable"},
		"1.37": {"stable", "experimental"},
	}
	for _, m := range Minors() {
		r, _ := Get(m)
		sets := r.FeatureSets()
		def, _ := r.AllocatorFor(sets[0])
		var got []string
		for i, s := range sets[1:] {
			a, err := r.AllocatorFor(s)
			if err != nil || a != r.FeatureMoves[i].Allocator {
				t.Errorf("%s: set %s selects %q (%v), the move is for %q", m, s, a, err, r.FeatureMoves[i].Allocator)
			}
			if a == def {
				t.Errorf("%s: set %s selects the default's allocator %q", m, s, a)
			}
			if !s.Has(FeatureAdminAccess) {
				t.Errorf("%s: set %s leaves admin access off", m, s)
			}
			got = append(got, a)
		}
		if w, ok := want[m]; ok && !slices.Equal(got, w) {
			t.Errorf("%s: moves reach %v, want %v", m, got, w)
		}
	}
	r137, _ := Get("1.37")
	stable := r137.FeatureSets()[1]
	if stable.Has(FeatureConsumableCapacity) || stable.Has(FeatureFractionalCapacityRange) || !stable.Has(FeaturePartitionableDevices) {
		t.Errorf("1.37's stable set: %s", stable)
	}
	if got := r137.MovableGates(); !slices.Equal(got, []string{"DRAConsumableCapacity", "DRADeviceBindingConditions", "DRAFractionalCapacityRange", "DRAListTypeAttributes"}) {
		t.Errorf("1.37 movable gates: %v", got)
	}
}

func TestAPatchKindDoesNotPublishIsNeverBootedFromKindsImage(t *testing.T) {
	r, err := Get("1.35.6")
	if err != nil || r.Version != "1.35.6" || r.Published != "" {
		t.Errorf("Get(1.35.6): version %q, published %q, %v: kind's image runs 1.35.8, so it must be built", r.Version, r.Published, err)
	}
	minor, _ := Get("1.35")
	if minor.PublishedPatch() != "1.35.8" {
		t.Errorf("1.35's published patch %q", minor.PublishedPatch())
	}
	same, _ := Get("1.35.8")
	if same.Published != minor.Published {
		t.Errorf("Get(1.35.8) must keep kind's 1.35.8 image, got %q", same.Published)
	}
}

func TestEveryClusterSetSelectsTheAllocatorItSays(t *testing.T) {
	for _, m := range Minors() {
		base, _ := Get(m)
		got, want := map[string]string{}, map[string]string{DefaultSet: base.DefaultAllocator}
		for _, s := range base.Sets {
			want[s.Name] = s.Allocator
		}
		for _, name := range base.SetNames() {
			r, err := base.WithFeatures(name)
			if err != nil {
				t.Fatalf("%s %s: %v", m, name, err)
			}
			a, err := r.AllocatorFor(r.DefaultFeatures())
			if err != nil {
				t.Errorf("%s %s: %v", m, name, err)
			}
			got[name] = a
			if !r.DefaultFeatures().Has(FeatureAdminAccess) {
				t.Errorf("%s %s leaves admin access off", m, name)
			}
			if r.PreferredVersion() != base.PreferredVersion() {
				t.Errorf("%s %s: discovery would prefer %s", m, name, r.PreferredVersion())
			}
			if name != DefaultSet {
				if len(r.FeatureMoves) != 0 || r.FeatureSetName != name {
					t.Errorf("%s %s: moves %v, name %q", m, name, r.FeatureMoves, r.FeatureSetName)
				}
				if _, skipped := r.DeclaredSkip(NeedReleaseSwitching, Mode{UpgradeImage: true}); !skipped {
					t.Errorf("%s %s: the upgrade is not a declared skip", m, name)
				}
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: sets select %v; the release's file says %v", m, got, want)
		}
	}
	r, _ := Resolve("1.35", "alpha")
	if !r.DefaultFeatures().Has(FeaturePartitionableDevices) || !r.DefaultFeatures().Has(FeatureDeviceTaints) || !r.ExtendedResources {
		t.Errorf("1.35 alpha: %s, extended resources %t", r.DefaultFeatures(), r.ExtendedResources)
	}
	if _, skipped := r.DeclaredSkip(NeedPartitionableDevices, Mode{}); skipped {
		t.Error("1.35 alpha: partitionable devices are declared skipped")
	}
	if !slices.Equal(r.Served, []string{"v1alpha3", "v1"}) || r.RuntimeConfig["resource.k8s.io/v1alpha3"] != "true" || !r.ExtraGates["DRADeviceTaintRules"] {
		t.Errorf("1.35 alpha: served %v, runtime-config %v, gates %v", r.Served, r.RuntimeConfig, r.ExtraGates)
	}
	if base, _ := Get("1.35"); len(base.ExtraGates) != 0 || len(base.RuntimeConfig) != 0 {
		t.Errorf("WithFeatures changed the table's row: %v %v", base.ExtraGates, base.RuntimeConfig)
	}
	if _, err := Resolve("1.35", "stable"); err == nil || !strings.Contains(err.Error(), "FEATURES takes defaults, alpha") {
		t.Errorf("1.35 stable: %v", err)
	}
	if _, d := r.KnownDefect(DefectAdminConsumesCounters, "experimental"); !d {
		t.Error("1.35 alpha: #140729 is not declared for experimental")
	}
}

// The capacity case of #140729 is a row of its own: declared where an
// allocator with consumable capacity serves admin access, and the spec that
// needs the feature runs only where the cluster's set has it.
func TestConsumableCapacityRowsFollowTheFeatureSet(t *testing.T) {
	for _, c := range []struct {
		minor, features string
		runs            bool
		allocator       string
	}{
		{"1.34", "", false, ""}, {"1.34", "alpha", true, "experimental"},
		{"1.35", "", false, ""}, {"1.35", "alpha", true, "experimental"},
		{"1.36", "", true, "incubating"}, {"1.36", "stable", false, ""}, {"1.36", "alpha", true, "incubating"},
		{"1.37", "", true, "incubating"}, {"1.37", "stable", false, ""}, {"1.37", "alpha", true, "experimental"},
	} {
		r, err := Resolve(c.minor, c.features)
		if err != nil {
			t.Fatal(err)
		}
		why, skipped := r.DeclaredSkip(NeedConsumableCapacity, Mode{})
		if skipped == c.runs {
			t.Errorf("%s FEATURES=%q: consumable capacity declared skipped %t (%s), want %t", c.minor, c.features, skipped, why, !c.runs)
		}
		if !c.runs {
			continue
		}
		allocator, err := r.AllocatorFor(r.DefaultFeatures())
		if err != nil || allocator != c.allocator {
			t.Errorf("%s FEATURES=%q: allocator %q (%v), want %q", c.minor, c.features, allocator, err, c.allocator)
		}
		d, ok := r.KnownDefect(DefectAdminConsumesCapacity, allocator)
		if !ok || d.Issue != "kubernetes/kubernetes#140729" || !strings.Contains(d.Verdict("seen"), "the capacity case") {
			t.Errorf("%s FEATURES=%q: the capacity case must be declared for %s: %+v", c.minor, c.features, allocator, d)
		}
		for _, a := range r.Allocators {
			if _, ok := r.KnownDefect(DefectAdminConsumesCapacity, a.Name); ok && !slices.Contains(a.Supports, FeatureConsumableCapacity) {
				t.Errorf("%s: %s has no consumable capacity, so no capacity case", c.minor, a.Name)
			}
		}
	}
}

// A known-defect verdict is reported only for its own cause: every row
// names the allocator's line for it, and the two cases of #140729 differ.
func TestEveryDefectNamesItsCause(t *testing.T) {
	causes := map[DefectCase]string{DefectAdminConsumesCounters: CauseCounters, DefectAdminConsumesCapacity: CauseCapacity, DefectDeviceTwiceInClaim: CauseDeviceTwice,
		DefectNoExecuteToleranceLost: CauseTolerationsLost, DefectImplicitExtendedResourceIgnored: CauseNoExtendedClaim,
		DefectGateOffFalseIsAdmin: CauseGateOffRequested}
	for _, d := range Defects() {
		if d.Cause == "" || d.Cause != causes[d.Case] {
			t.Errorf("%s: cause %q, want %q", d.Case, d.Cause, causes[d.Case])
		}
		if !strings.Contains(d.Outcome, d.Cause) {
			t.Errorf("%s: the outcome docs/verdicts.md shows does not name the cause %q: %s", d.Case, d.Cause, d.Outcome)
		}
	}
	if !strings.HasSuffix(AllocatorVModule, "=7") {
		t.Errorf("--vmodule=%s: the allocator says why it passed over a device only at level 7", AllocatorVModule)
	}
}

func TestImmutableSpecValueFollowsEachReleasesPrint(t *testing.T) {
	for _, c := range []struct {
		minor, kind, v, want string
		exact                bool
	}{
		{"1.33", "ResourceClaim", "true", "resource.ResourceClaimSpec{", false},
		{"1.33", "ResourceClaimTemplate", "false", "resource.ResourceClaimTemplateSpec{", false},
		{"1.34", "ResourceClaim", "true", `"AdminAccess":true`, false},
		{"1.36", "ResourceClaimTemplate", "null", `"AdminAccess":null`, false},
		{"1.37", "ResourceClaim", "false", "null", true},
		{"1.37", "ResourceClaimTemplate", "false", `"AdminAccess":false`, false},
	} {
		r, err := Get(c.minor)
		if err != nil {
			t.Fatal(err)
		}
		if got, exact := r.ImmutableSpecValue(c.kind, c.v); got != c.want || exact != c.exact {
			t.Errorf("%s %s %s: %q exact=%t, want %q exact=%t", c.minor, c.kind, c.v, got, exact, c.want, c.exact)
		}
	}
}

// The partitionable layout's counter set goes where the release's
// kube-apiserver takes it: beside the devices up to 1.34, in a slice of its
// own from 1.35. A feature set does not change the API's shape.
func TestCountersGoWithDevicesUpTo134(t *testing.T) {
	for _, m := range Minors() {
		r, err := Resolve(m, "alpha")
		if err != nil {
			r, _ = Get(m)
		}
		if want := m == "1.33" || m == "1.34"; r.CountersWithDevices != want {
			t.Errorf("%s: counters with devices %t, want %t", m, r.CountersWithDevices, want)
		}
	}
}

// 1.34's defects of device taints and extended resources are declared only
// where a run meets them: the alpha set's allocator on 1.34, no later
// release (both fixed for 1.35).
func TestDefectsFixedFor135AreDeclaredFor134Only(t *testing.T) {
	for _, c := range []DefectCase{DefectNoExecuteToleranceLost, DefectImplicitExtendedResourceIgnored} {
		r, _ := Resolve("1.34", "alpha")
		allocator, err := r.AllocatorFor(r.DefaultFeatures())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.KnownDefect(c, allocator); !ok {
			t.Errorf("%s: not declared for 1.34's alpha allocator %s", c, allocator)
		}
		if _, ok := r.KnownDefect(c, "incubating"); !ok {
			t.Errorf("%s: not declared for incubating, 1.34's other allocator with these features", c)
		}
		for _, m := range []string{"1.33", "1.35", "1.36", "1.37"} {
			r, _ := Get(m)
			for _, a := range r.Allocators {
				if _, ok := r.KnownDefect(c, a.Name); ok {
					t.Errorf("%s: declared for %s (%s)", c, m, a.Name)
				}
			}
		}
	}
}

// A rewritten allocation is refused by the hand-written check up to 1.36
// (its value printed as each release prints an internal type) and by the
// declarative NoModify on 1.37, which prints no value.
func TestImmutableAllocationFollowsEachReleasesValidator(t *testing.T) {
	for _, c := range []struct {
		minor, value, detail string
		exact                bool
	}{
		{"1.33", "resource.AllocationResult{", "field is immutable", false},
		{"1.34", `"AdminAccess":false`, "field is immutable", false},
		{"1.35", `"AdminAccess":false`, "field is immutable", false},
		{"1.36", `"AdminAccess":false`, "field is immutable", false},
		{"1.37", "null", "field cannot be modified once set", true},
	} {
		r, err := Get(c.minor)
		if err != nil {
			t.Fatal(err)
		}
		got := r.ImmutableAllocation(`"AdminAccess":false`)
		if got.Value != c.value || got.Exact != c.exact || got.Detail != c.detail || got.Validator == "" {
			t.Errorf("%s: %+v, want value %q exact=%t detail %q and a validator", c.minor, got, c.value, c.exact, c.detail)
		}
	}
}

func TestAPreReleaseIsCarriedWhole(t *testing.T) {
	r, _ := Get("1.35")
	for given, want := range map[string]string{
		"v1.35.9-beta.0": "1.35.9-beta.0", "1.35.9-rc.1": "1.35.9-rc.1", "v1.35.8+k3s1": "1.35.8",
		"v1.35.8-gke.1200": "1.35.8", "v1.35.9-rc.1+abc": "1.35.9-rc.1", "v1.35.9-beta.0.45+abc123": "1.35.9-beta.0",
	} {
		at, err := r.AtPatch(given)
		if err != nil || at.Version != want || at.GitVersion() != "v"+want {
			t.Errorf("AtPatch(%q) = %q, %v; want %q", given, at.Version, err, want)
		}
	}
	if at, _ := r.AtPatch("v1.35.8"); at.PreRelease() != "" {
		t.Errorf("1.35.8 is no pre-release: %q", at.PreRelease())
	}
	if got, err := Get("1.35.9-rc.0"); err != nil || got.Version != "1.35.9-rc.0" || got.Published != "" {
		t.Errorf("Get(1.35.9-rc.0) = %q %q, %v", got.Version, got.Published, err)
	}
	for _, bad := range []string{"1.35.8-gke.1", "1.35.x", "1.35.8-rc", "1.35.08"} {
		if _, err := Get(bad); err == nil || !strings.Contains(err.Error(), "or a pre-release such as") {
			t.Errorf("Get(%q) must be refused, naming the forms it takes: %v", bad, err)
		}
	}
}

// Once the gate is gone (1.39 plans it), a component given it at all
// refuses to start as for any gate it does not know; the lock spec
// expects that refusal instead of the lock's.
func TestAGateThatIsGoneIsUnrecognized(t *testing.T) {
	r, _ := Get("1.37")
	if r.GateOffError() != r.LockedGateError() {
		t.Errorf("1.37 locks the gate: %q", r.GateOffError())
	}
	r.GateState = Removed
	if r.GateSwitchable() || !r.GateDefault() || r.GateOffError() != "unrecognized feature gate: DRAAdminAccess" {
		t.Errorf("a removed gate: switchable %t, default %t, refusal %q", r.GateSwitchable(), r.GateDefault(), r.GateOffError())
	}
	if s, ok := r.SkipFor(NeedGateLock, Mode{NodeAccess: true}); ok {
		t.Errorf("the lock spec must run where the gate is gone: %+v", s)
	}
	r135, _ := Get("1.35")
	if r135.GateOffError() != "" {
		t.Errorf("1.35's gate may be switched: %q", r135.GateOffError())
	}
}
