// SPDX-License-Identifier: Apache-2.0

package release

import "fmt"

// A skip is a verdict too: a spec may skip only where this table declares
// that it cannot run, for the release and the way the suite reaches the
// cluster. Anywhere else the spec must get what it needs or fail with the
// cause, and the suite reports any other skip as a failure.

// Need is something a spec needs that not every run can give it.
type Need string

const (
	// NeedGateSwitching: restarting components with DRAAdminAccess switched.
	NeedGateSwitching Need = "gate-switching"
	// NeedReleaseSwitching: swapping control-plane images and kubelets to the next release.
	NeedReleaseSwitching Need = "release-switching"
	// NeedGateLock: a release where the gate is locked, to see a component refuse it off.
	NeedGateLock Need = "gate-lock"
	// NeedNodeAccess: running commands inside the nodes (CDI files, component logs).
	NeedNodeAccess Need = "node-access"
	// NeedMetricsEndpoints: reading kube-controller-manager's and kube-scheduler's secure ports.
	NeedMetricsEndpoints Need = "metrics-endpoints"
	// NeedPartitionableDevices: DRAPartitionableDevices on in the cluster's feature set.
	NeedPartitionableDevices Need = "partitionable-devices"
	// NeedConsumableCapacity: DRAConsumableCapacity on in the cluster's
	// feature set (devices that allow multiple allocations).
	NeedConsumableCapacity Need = "consumable-capacity"
	// NeedDeviceTaints: DRADeviceTaints on in the cluster's feature set.
	NeedDeviceTaints Need = "device-taints"
	// NeedPrioritizedList: DRAPrioritizedList on in the cluster's feature set.
	NeedPrioritizedList Need = "prioritized-list"
	// NeedExtendedResources: DRAExtendedResource on (pods asking for a
	// device class's extended resource get devices through a claim
	// kube-scheduler makes).
	NeedExtendedResources Need = "extended-resources"
	// NeedOtherAllocators: an allocator implementation besides the one the
	// release's defaults select that kube-scheduler can use for admin access.
	NeedOtherAllocators Need = "other-allocators"
	// NeedBundledDriver: the suite's own test driver, whose contract the
	// spec reads (device names and attributes, counts, layouts, what the
	// workload prints of its devices).
	NeedBundledDriver Need = "bundled-driver"
)

// Mode is how this run reaches its cluster.
type Mode struct {
	// Existing: the cluster was given with --kubeconfig; the suite did not create it.
	Existing bool
	// NodeAccess: its nodes are kind containers on this machine.
	NodeAccess bool
	// UpgradeImage: the next release's node image, or its bits, were given (make e2e gets them unless UPGRADE=0).
	UpgradeImage bool
	// VendorDriver: the run claims the devices of a driver the user named
	// (DRIVER, DEVICE_CLASS) instead of installing the bundled one.
	VendorDriver bool
}

// declaredSkip is one row: when a Need cannot be had, and the reason the report shows.
type declaredSkip struct {
	need Need
	// when says whether the row applies; the string it returns is the reason.
	when func(r Release, m Mode) (string, bool)
	// doc is the row as docs/verdicts.md lists it.
	doc string
	// reach says why the row exists: the run cannot reach what the spec
	// reads, or the release does not have the behaviour.
	reach Reach
}

// Reach is why a declared skip exists, which is what a sign-off counts it
// as. A requirement out of reach is one a cluster the suite made, with the
// bundled driver, would check; one not applicable is one no cluster of the
// release and feature set could.
type Reach string

const (
	// NotApplicable: the release or its DRA feature set does not have the
	// behaviour the spec checks (a locked gate, no next release, a feature off).
	NotApplicable Reach = "not applicable"
	// OutOfReach: the way the run reaches the cluster keeps the spec from
	// what it reads or changes (an existing cluster's components, nodes and
	// metric endpoints; a driver of the user's own in place of the bundled
	// one; no node image or bits of the next release given).
	OutOfReach Reach = "out of reach"
)

// Skip is a declared skip as a spec takes it.
type Skip struct {
	Need   Need
	Reason string
	Reach  Reach
}

// OutOfReach says whether the run, not the release, keeps the spec from running.
func (s Skip) OutOfReach() bool { return s.Reach == OutOfReach }

// offIn is the reason a feature's spec skips: the feature set the cluster
// runs leaves it off.
func offIn(r Release, f Feature, alphaBefore string) string {
	if r.FeatureSetName != "" {
		return fmt.Sprintf("%s is off in Kubernetes %s's DRA feature set %s (FEATURES=%s)", f, r.Minor, r.FeatureSetName, r.FeatureSetName)
	}
	return fmt.Sprintf("%s is off in Kubernetes %s's default feature set (alpha before %s)", f, r.Minor, alphaBefore)
}

const existingCluster = "the cluster was given with --kubeconfig; "

var declaredSkips = []declaredSkip{
	{NeedGateSwitching, func(_ Release, m Mode) (string, bool) {
		return existingCluster + "switching feature gates needs a cluster this suite created", m.Existing
	}, "the cluster was given with --kubeconfig", OutOfReach},
	{NeedGateSwitching, func(r Release, _ Mode) (string, bool) {
		return fmt.Sprintf("%s is %s in Kubernetes %s and cannot be switched", Gate, r.GateState, r.Minor), !r.GateSwitchable()
	}, "the gate is GA-locked (1.36 and later)", NotApplicable},
	{NeedReleaseSwitching, func(_ Release, m Mode) (string, bool) {
		return existingCluster + "swapping control-plane images and kubelets needs a cluster this suite created", m.Existing
	}, "the cluster was given with --kubeconfig", OutOfReach},
	{NeedReleaseSwitching, func(r Release, _ Mode) (string, bool) {
		_, ok := r.Next()
		return fmt.Sprintf("Kubernetes %s is the newest release the suite pins; there is no release to upgrade to", r.Minor), !ok
	}, "the newest release the suite pins", NotApplicable},
	// Before the missing image: under a feature set no image is fetched,
	// and the skip's reason is the set.
	{NeedReleaseSwitching, func(r Release, _ Mode) (string, bool) {
		return fmt.Sprintf("the cluster runs the %s DRA feature set of Kubernetes %s (FEATURES=%s); the in-place upgrade moves a cluster of the release defaults, since another release's set names other gates",
			r.FeatureSetName, r.Minor, r.FeatureSetName), r.FeatureSetName != ""
	}, "the cluster runs a DRA feature set other than the release defaults (`FEATURES`)", NotApplicable},
	{NeedReleaseSwitching, func(r Release, m Mode) (string, bool) {
		next, ok := r.Next()
		return fmt.Sprintf("no node image or bits of Kubernetes %s were given (UPGRADE=0)", next.Minor), ok && !m.UpgradeImage
	}, "no node image or bits of the next release were given (`UPGRADE=0`)", OutOfReach},
	{NeedGateLock, func(r Release, _ Mode) (string, bool) {
		return fmt.Sprintf("%s is %s in Kubernetes %s and may be switched; the lock applies from 1.36", Gate, r.GateState, r.Minor), r.GateSwitchable()
	}, "the gate is not locked (1.33–1.35)", NotApplicable},
	{NeedGateLock, func(_ Release, m Mode) (string, bool) {
		return existingCluster + "restarting components needs a cluster this suite created", m.Existing
	}, "the cluster was given with --kubeconfig", OutOfReach},
	{NeedNodeAccess, func(_ Release, m Mode) (string, bool) {
		return existingCluster + "it is not a kind cluster on this machine, so its nodes cannot be looked inside", m.Existing && !m.NodeAccess
	}, "the cluster was given with --kubeconfig and is not a kind cluster on this machine", OutOfReach},
	{NeedPartitionableDevices, func(r Release, _ Mode) (string, bool) {
		return offIn(r, FeaturePartitionableDevices, "1.36"),
			!r.DefaultFeatures().Has(FeaturePartitionableDevices)
	}, "the release's default feature set leaves DRAPartitionableDevices off (1.33–1.35)", NotApplicable},
	{NeedConsumableCapacity, func(r Release, _ Mode) (string, bool) {
		return offIn(r, FeatureConsumableCapacity, "1.36"),
			!r.DefaultFeatures().Has(FeatureConsumableCapacity)
	}, "the release's default feature set leaves DRAConsumableCapacity off (1.33–1.35; and `FEATURES=stable`)", NotApplicable},
	{NeedDeviceTaints, func(r Release, _ Mode) (string, bool) {
		return offIn(r, FeatureDeviceTaints, "1.36"),
			!r.DefaultFeatures().Has(FeatureDeviceTaints)
	}, "the release's default feature set leaves DRADeviceTaints off (1.33–1.35)", NotApplicable},
	{NeedPrioritizedList, func(r Release, _ Mode) (string, bool) {
		return offIn(r, FeaturePrioritizedList, "1.34"),
			!r.DefaultFeatures().Has(FeaturePrioritizedList)
	}, "the release's default feature set leaves DRAPrioritizedList off (1.33)", NotApplicable},
	{NeedExtendedResources, func(r Release, _ Mode) (string, bool) {
		return fmt.Sprintf("DRAExtendedResource is off in Kubernetes %s by default (alpha before 1.36)", r.Minor), !r.ExtendedResources
	}, "DRAExtendedResource is off by default (1.33–1.35)", NotApplicable},
	{NeedOtherAllocators, func(r Release, _ Mode) (string, bool) {
		return fmt.Sprintf("Kubernetes %s's kube-scheduler has one structured allocator implementation to use for admin access", r.Minor), len(r.Allocators) == 1
	}, "the release's kube-scheduler has one allocator implementation to use for admin access (1.33)", NotApplicable},
	{NeedBundledDriver, func(_ Release, m Mode) (string, bool) {
		return "the run claims the devices of the driver given with DRIVER and DEVICE_CLASS; this spec reads what the bundled test driver promises (its device names and attributes, layouts, what its workload prints)", m.VendorDriver
	}, "a driver of your own was given (`DRIVER`, `DEVICE_CLASS`)", OutOfReach},
	{NeedMetricsEndpoints, func(_ Release, m Mode) (string, bool) {
		return existingCluster + "the control plane's metric endpoints cannot be reached", m.Existing
	}, "the cluster was given with --kubeconfig and its endpoints do not answer", OutOfReach},
}

// SkipFor says whether a spec that cannot have n may skip on this release
// in this mode, with the reason and why the row exists. Where the release
// lacks the behaviour and the run cannot reach it either (an existing
// cluster of a release whose gate is locked), the release's row is taken:
// no cluster could check the spec, so it is not applicable rather than out
// of reach. Where no row applies, the spec must fail instead.
func (r Release) SkipFor(n Need, m Mode) (Skip, bool) {
	var reachable *Skip
	for _, d := range declaredSkips {
		if d.need != n {
			continue
		}
		why, ok := d.when(r, m)
		switch {
		case !ok:
		case d.reach == NotApplicable:
			return Skip{Need: n, Reason: why, Reach: d.reach}, true
		case reachable == nil:
			reachable = &Skip{Need: n, Reason: why, Reach: d.reach}
		}
	}
	if reachable != nil {
		return *reachable, true
	}
	return Skip{}, false
}

// DeclaredSkip is SkipFor's reason alone, for callers that only ask
// whether the run can give a spec n.
func (r Release) DeclaredSkip(n Need, m Mode) (string, bool) {
	s, ok := r.SkipFor(n, m)
	return s.Reason, ok
}

// SkipDoc is one row as docs/verdicts.md lists it.
type SkipDoc struct {
	Need  Need
	When  string
	Reach Reach
}

// DeclaredSkipDocs lists every row, for docs/verdicts.md and the report.
func DeclaredSkipDocs() []SkipDoc {
	out := make([]SkipDoc, len(declaredSkips))
	for i, d := range declaredSkips {
		out[i] = SkipDoc{Need: d.need, When: d.doc, Reach: d.reach}
	}
	return out
}

// Brief names a need in a few words, as a sign-off's line lists what was
// out of reach ("node access, control-plane metrics").
func (n Need) Brief() string {
	if b, ok := needBriefs[n]; ok {
		return b
	}
	return string(n)
}

var needBriefs = map[Need]string{
	NeedGateSwitching:        "gate switching",
	NeedReleaseSwitching:     "release switching",
	NeedGateLock:             "the gate lock",
	NeedNodeAccess:           "node access",
	NeedMetricsEndpoints:     "control-plane metrics",
	NeedPartitionableDevices: "partitionable devices",
	NeedConsumableCapacity:   "consumable capacity",
	NeedDeviceTaints:         "device taints",
	NeedPrioritizedList:      "the prioritized list",
	NeedExtendedResources:    "extended resources",
	NeedOtherAllocators:      "other allocators",
	NeedBundledDriver:        "the bundled driver's contract",
}
