// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/timeline"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// kube-scheduler's structured allocator is three implementations, each with
// its own copy of the admin-access code, and the DRA gates kube-scheduler
// runs with pick one (release.Release.AllocatorFor). The allocation group
// checks the core promises with the release's defaults; this group checks
// them again under each other feature set the release table lists
// (release.Release.FeatureMoves: one per implementation it can use for admin
// access), and the partitionable promises where the release has that
// feature. Each spec also reads the log of the kube-scheduler that
// allocated: it logs its allocator's files at level 5, and every allocation
// the spec caused must come from the implementation the table names, so the
// verdict says what ran, not what should have.
//
// With the bundled driver every spec of the group runs beside the other
// specs, under a kube-scheduler of its own feature set
// (allocatorScheduler), so the cluster's kube-scheduler keeps the defaults
// for everything else: the core promises and the prioritized list's each
// in a spare pool of its own, the other feature groups' promises on driver
// instances of their own (featurePromisesBeside). With a driver of the
// user's own (one set of devices), the whole group runs Serial on the
// cluster's kube-scheduler, moved to each set and back; on a cluster made
// with another feature set, Serial on the cluster's kube-scheduler as it
// is (allocatorsMoved).
//
// The groups are built from the release given on the command line (the
// release table is known before the tree is); 1.33 has one implementation
// and no group.
var _ = framework.Describe("Admin access allocation under kube-scheduler's other allocator implementations", ginkgo.Label("allocators"), func() {
	if plan == nil {
		return // Main refused the run already
	}
	rel := plan.Rel
	if plan.Run.Vendor().Name != "" || rel.FeatureSetName != "" {
		framework.Context("on the cluster's kube-scheduler", framework.WithSerial(), func() { allocatorsMoved(rel) })
		return
	}
	if len(rel.FeatureSets()) == 1 {
		noOtherAllocator()
	}
	for n, s := range allocatorSchedulers(rel) {
		ginkgo.Context(fmt.Sprintf("the %s allocator (%s, a kube-scheduler of its own)", s.allocator, s.set.Name), func() {
			f := newFramework("alloc-" + s.allocator)
			for i, p := range corePromises {
				slot := allocatorSlot(n, i)
				it(p.text, kep("the core allocation promises hold under every allocator implementation the release can use"), func(ctx context.Context) {
					requireNodeAccess(ctx)
					underScheduler(ctx, s)
					inSlot(slot)
					since := metav1.Now()
					p.run(ctx, f)
					expectAllocatedBy(ctx, s.allocator, since, f.Namespace.Name)
				})
			}
		})
		featurePromisesBeside(s, n)
	}
})

// allocatorsMoved is the group on the cluster's kube-scheduler, one spec
// at a time: moved to each other feature set, or, on a cluster made with a
// feature set of its own, as it is.
func allocatorsMoved(rel release.Release) {
	if rel.FeatureSetName != "" {
		// A cluster made with another feature set (FEATURES) runs every
		// spec under the implementation that set selects; this group then
		// checks the core promises without moving anything, and that the
		// implementation that allocated is the one the table names.
		set := rel.DefaultFeatures()
		allocator, err := rel.AllocatorFor(set)
		if err != nil {
			panic(fmt.Sprintf("release table: %v", err)) // a unit test keeps every set resolvable
		}
		ginkgo.Context(fmt.Sprintf("the %s allocator (the cluster's feature set %s)", allocator, rel.FeatureSetName), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
			f := newFramework("alloc-" + allocator)
			ginkgo.BeforeEach(func() {
				reportAllocator(allocator, set)
			})
			allocatorPromises(f, allocator, set)
		})
		return
	}
	if len(rel.FeatureSets()) == 1 {
		noOtherAllocator()
	}
	for _, s := range allocatorSchedulers(rel) {
		ginkgo.Context(fmt.Sprintf("the %s allocator (%s)", s.allocator, s.set.Name), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
			f := newFramework("alloc-" + s.allocator)
			withFeatureSet(f, s.set, s.allocator)
			allocatorPromises(f, s.allocator, s.set)
		})
	}
}

// noOtherAllocator is the group's one spec where the release has a single
// implementation: the release table must declare that.
func noOtherAllocator() {
	it("has no other allocator implementation to check", kep("the core allocation promises hold under every allocator implementation the release can use"), func(ctx context.Context) {
		e := envOf(ctx)
		require(ctx, release.NeedOtherAllocators, nil)
		framework.Failf("Kubernetes %s has no feature set besides its defaults, but the release table declares no skip for that", e.Rel.Minor)
	})
}

// allocatorPromises are the group's specs under one implementation: the
// core promises, each checked against kube-scheduler's log for the
// implementation that allocated, and every feature group's promises where
// the release and the set have the feature (partitionable devices,
// consumable capacity, device taints, the prioritized list, extended
// resources), checked the same way.
func allocatorPromises(f *framework.Framework, allocator string, set release.FeatureSet) {
	for _, p := range corePromises {
		// One sign-off row for the group: each promise has its own row
		// from the allocation group.
		it(p.text, kep("the core allocation promises hold under every allocator implementation the release can use"), func(ctx context.Context) {
			// Moving kube-scheduler's other DRA gates and reading its log
			// need its node, not a switchable DRAAdminAccess: 1.36 and
			// 1.37 lock only that one.
			requireNodeAccess(ctx)
			since := metav1.Now()
			p.run(ctx, f)
			expectAllocatedBy(ctx, allocator, since, f.Namespace.Name)
		})
	}
	featurePromisesUnder(f, allocator, set)
}

// featureGroup is one feature group's promises as the allocators group
// registers them again: the layout of the driver instance they use (""
// for the bundled driver's own devices) and the need that instance checks.
type featureGroup struct {
	name     string
	layout   contract.Layout
	need     release.Need
	promises []featurePromise
}

// featureGroupsFor are the feature groups whose promises the allocators
// group checks under an implementation with feature set set.
func featureGroupsFor(set release.FeatureSet) []featureGroup {
	// upstream's #140729 is in each implementation's own copy of the
	// counter check, so each shows it (or not) itself; so is its capacity
	// check. The consumable-capacity need is the cluster's; a set that
	// takes the feature away from kube-scheduler (stable) has no such
	// spec, since the device would be an exclusive one to it.
	out := []featureGroup{{"partitionable", contract.LayoutPartitionable, release.NeedPartitionableDevices, partitionPromises}}
	if set.Has(release.FeatureConsumableCapacity) {
		out = append(out, featureGroup{"consumable", contract.LayoutShared, release.NeedConsumableCapacity, capacityPromises})
	}
	// The other feature groups' promises too, where the set keeps the
	// feature in kube-scheduler: a set without it would leave a tainted
	// device untainted or a firstAvailable list unserved to the scheduler,
	// so those specs would check the feature's absence, not admin access.
	if set.Has(release.FeatureDeviceTaints) {
		out = append(out, featureGroup{"taints", contract.LayoutTainted, release.NeedDeviceTaints, taintPromises})
	}
	if set.Has(release.FeaturePrioritizedList) {
		out = append(out, featureGroup{"prioritized", "", release.NeedPrioritizedList, prioritizedPromises})
	}
	// DRAExtendedResource is not an allocator feature: no move takes it
	// from kube-scheduler, and the claim it makes goes through the
	// implementation the set selects like any other.
	return append(out, featureGroup{"extended", contract.LayoutPlain, release.NeedExtendedResources, extendedPromises})
}

// featurePromisesUnder registers the feature groups' promises under one
// implementation, on the cluster's kube-scheduler.
func featurePromisesUnder(f *framework.Framework, allocator string, set release.FeatureSet) {
	begin := func(ctx context.Context) func(context.Context) {
		requireNodeAccess(ctx)
		since := metav1.Now()
		return func(ctx context.Context) { expectAllocatedBy(ctx, allocator, since, f.Namespace.Name) }
	}
	for _, g := range featureGroupsFor(set) {
		var d *featureDriver
		if g.layout != "" {
			d = newFeatureDriver(g.layout, g.need)
		}
		itEach(f, d, g.promises, begin)
	}
}

// featurePromisesBeside registers the feature groups' promises under the
// allocator scheduler s, the n-th, in the parallel part of the run: each
// group's in an Ordered container of its own, on a driver instance of its
// own (newFeatureDriverFor), installed by its first spec and removed after
// its last, so that neither the feature group's specs nor another
// implementation's take its devices; the prioritized list's, which uses
// the bundled driver's devices, in a spare pool of its own as the core
// promises are.
func featurePromisesBeside(s allocatorScheduler, n int) {
	for _, g := range featureGroupsFor(s.set) {
		framework.Context(fmt.Sprintf("the %s allocator (%s, a kube-scheduler of its own), %s promises", s.allocator, s.set.Name, g.name), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
			f := newFramework("alloc-" + s.allocator)
			var d *featureDriver
			if g.layout != "" {
				d = newFeatureDriverFor(g.layout, g.need, s.allocator)
			}
			itEach(f, d, g.promises, func(ctx context.Context) func(context.Context) {
				requireNodeAccess(ctx)
				underScheduler(ctx, s)
				if d == nil {
					inSlot(allocatorSlot(n, len(corePromises)))
				}
				since := metav1.Now()
				return func(ctx context.Context) { expectAllocatedBy(ctx, s.allocator, since, f.Namespace.Name) }
			})
		})
	}
}

// allocatorSlot is the spare pool of the i-th pooled spec under the n-th
// allocator scheduler: the allocation group has slots 1 to
// len(corePromises), and each allocator scheduler the next
// len(corePromises)+1, its core promises' and then its prioritized list's.
func allocatorSlot(n, i int) int {
	return len(corePromises) + n*(len(corePromises)+1) + i + 1
}

// withFeatureSet moves kube-scheduler to set for the container's specs and
// back to the release's defaults after them; each spec's report row names
// the allocator and the set. As in inProfile, the container's pods go
// before the move back.
func withFeatureSet(f *framework.Framework, set release.FeatureSet, allocator string) {
	ginkgo.BeforeAll(inEnv(func(ctx context.Context) {
		e := envOf(ctx)
		if nodesReachable(e) {
			moveScheduler(ctx, set)
		}
	}))
	ginkgo.AfterAll(inEnv(func(ctx context.Context) {
		e := envOf(ctx)
		if nodesReachable(e) {
			deletePodsOf(ctx, f.BaseName)
			moveScheduler(ctx, e.Rel.DefaultFeatures())
		}
	}), ginkgo.NodeTimeout(restoreTimeout))
	ginkgo.BeforeEach(func() {
		reportAllocator(allocator, set)
	})
}

// moveScheduler moves kube-scheduler to set and puts the restart on the
// report's timeline.
func moveScheduler(ctx context.Context, set release.FeatureSet) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	start := time.Now()
	took, err := e.Cluster.MoveSchedulerTo(ctx, set)
	if took > 0 {
		recordStep(timeline.Step{Kind: timeline.KindMove, Name: "kube-scheduler to DRA feature set " + set.Name + e.Cluster.RestartedBy(profile.Scheduler).Note(), Started: start, Seconds: took.Seconds()})
	}
	framework.ExpectNoError(err, "moving kube-scheduler to DRA feature set %s", set.Name)
	e.SetFeatureSet(set)
	framework.Logf("kube-scheduler runs DRA feature set %s (allocator %s) after %s", set, e.Allocator(), took.Round(time.Millisecond))
}

// expectAllocatedBy checks the log of the kube-scheduler that allocated
// since the spec started: every allocation it began for a pod of the
// spec's namespace comes from the implementation allocator, and there was
// at least one. Only that namespace's lines count: specs running at once
// share an allocator scheduler, and another's allocations must not pass
// for a spec whose pods that scheduler never saw.
func expectAllocatedBy(ctx context.Context, allocator string, since metav1.Time, namespace string) {
	ginkgo.GinkgoHelper()
	raw := schedulerLog(ctx, since)
	seen := observe.AllocatorsInLogFor(raw, namespace)
	gomega.Expect(seen).To(gomega.And(gomega.HaveKey(allocator), gomega.HaveLen(1)),
		"kube-scheduler's \"Starting allocation\" lines since %s for pods in %s, by implementation (it logs them at --vmodule=%s): the release table says %s; last lines:\n%s",
		since.Format(time.RFC3339), namespace, kindcluster.AllocatorVModule, allocator, strings.Join(lastOf(strings.Split(strings.TrimRight(raw, "\n"), "\n"), 5), "\n"))
}
