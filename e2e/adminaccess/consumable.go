// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Consumable capacity (KEP-5075) with admin access. A device that allows
// multiple allocations is shared by claims, each consuming part of its
// capacity. The API's promise for admin access (resource.k8s.io/v1
// ExactDeviceRequest.AdminAccess) is the same as for a partitionable
// device: it "ignores all ordinary claims to the device with respect to
// access modes and any resource allocations". Capacity the ordinary claims
// consume is such an allocation: an admin-access request must get a shared
// device whose capacity they have used up, and must consume none itself.
//
// The device is a second instance of the bundled driver (featureDriver,
// layout shared: one device per node, 4Gi of memory to share in steps of
// 1Gi, 1Gi for a request that names no amount).
var _ = framework.Describe("Admin access on a device with consumable capacity", ginkgo.Label("consumable"), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
	f := newFramework("consumable")
	itEach(f, newFeatureDriver(contract.LayoutShared, release.NeedConsumableCapacity), capacityPromises, nil)
})

// capacityPromises are the group's specs as bodies, so that the allocators
// group runs them again under each other implementation that has
// consumable capacity.
var capacityPromises = []featurePromise{
	{text: "allocates to an admin-access claim a share of a device whose capacity ordinary claims have used up", kep: "admin access ignores ordinary claims' use of a shared device's consumable capacity", run: adminGetsShareOfUsedUpDevice},
	{text: "consumes no capacity for an admin-access share", kep: "admin access ignores ordinary claims' use of a shared device's consumable capacity", run: adminConsumesNoCapacity},
	{text: "gives back no capacity when an admin-access share is released: the ordinary holder keeps its share and a claim for capacity it holds still waits", kep: "admin access ignores ordinary claims' use of a shared device's consumable capacity", run: adminShareReleasedGivesBackNone},
}

// share asks for that much of the shared device's capacity.
func share(quantity string) builder.RequestOption {
	return builder.Capacity(contract.SharedCapacity, quantity)
}

func adminGetsShareOfUsedUpDevice(ctx context.Context, f *framework.Framework, shared *featureDriver, seen func(context.Context)) {
	b := shared.builder(ctx, f)
	node := anyWorker(ctx)
	ginkgo.By("two ordinary claims share the device and use up its capacity")
	bigPod, big, _ := runOn(ctx, b, node, share("3Gi"))
	smallPod, small, _ := runOn(ctx, b, node, share(contract.SharedStep))
	device := []string{poolDevice(node, contract.SharedDevice)}
	gomega.Expect([][]string{observe.AllocatedDevices(big), observe.AllocatedDevices(small)}).To(gomega.Equal([][]string{device, device}), "both ordinary claims on the one shared device")
	gomega.Expect([][]string{observe.Shares(big, contract.SharedCapacity), observe.Shares(small, contract.SharedCapacity)}).To(
		gomega.Equal([][]string{{"share of 3Gi"}, {"share of " + contract.SharedStep}}), "the ordinary shares as kube-scheduler recorded them")
	bigBefore, smallBefore := snapshot(ctx, bigPod), snapshot(ctx, smallPod)

	ginkgo.By("an ordinary claim for one more step is refused: the capacity is used up")
	more, err := b.CreateClaim(ctx, b.Claim(share(contract.SharedStep)))
	framework.ExpectNoError(err)
	morePod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(more)), node))
	framework.ExpectNoError(err)
	expectCannotAllocate(ctx, morePod)
	// Gone before anything is freed, so it cannot take what the defect's
	// evidence frees for the admin-access claim.
	deletePod(ctx, morePod)
	deleteClaim(ctx, b, more)

	labelForAdmin(ctx, f.Namespace.Name)
	adminClaim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
	framework.ExpectNoError(err)
	adminPod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(adminClaim)), node))
	framework.ExpectNoError(err)
	admin := allocatedOrKnownDefect(ctx, b, adminPod, adminClaim.Name, device[0], release.DefectAdminConsumesCapacity, func(ctx context.Context) {
		ginkgo.By("the ordinary claims go: the device's capacity is free again")
		deletePod(ctx, bigPod)
		deleteClaim(ctx, b, big)
		deletePod(ctx, smallPod)
		deleteClaim(ctx, b, small)
	}, seen)
	gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.Equal(device), "the shared device")
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
	vars := expectRunning(ctx, b, adminPod)
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.DeviceEnv(contract.SharedDevice), string(admin.UID)))
	expectAllUndisturbed(ctx, []*corev1.Pod{bigPod, smallPod}, []podSnapshot{bigBefore, smallBefore})
	if seen != nil {
		seen(ctx)
	}
}

func adminConsumesNoCapacity(ctx context.Context, f *framework.Framework, shared *featureDriver, seen func(context.Context)) {
	b := shared.builder(ctx, f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	ginkgo.By("an admin-access claim asks for the device's whole capacity")
	adminPod, admin, _ := runOn(ctx, b, node, share(contract.SharedTotal), builder.AdminAccess())
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}))
	adminBefore := snapshot(ctx, adminPod)

	ginkgo.By("an ordinary claim gets the whole capacity too: the admin-access share consumes none of it")
	holder, held, vars := runOn(ctx, b, node, share(contract.SharedTotal))
	gomega.Expect(observe.AllocatedDevices(held)).To(gomega.Equal(observe.AllocatedDevices(admin)))
	gomega.Expect(observe.Shares(held, contract.SharedCapacity)).To(gomega.Equal([]string{"share of " + contract.SharedTotal}))
	gomega.Expect(observe.AdminAccessResults(held)).To(gomega.Equal([]bool{false}))
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))

	ginkgo.By("a second ordinary claim, for one step, is refused: the ordinary claim holds the whole capacity, as it would without the admin claim")
	stepClaim, err := b.CreateClaim(ctx, b.Claim(share(contract.SharedStep)))
	framework.ExpectNoError(err)
	waiting, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(stepClaim)), node))
	framework.ExpectNoError(err)
	expectPodEvent(ctx, waiting, allocateTimeout, failedScheduling(release.CannotAllocate),
		"kube-scheduler should refuse the step while the ordinary claim holds the whole capacity")
	// Over a window, not read once: an allocation on the scheduler's retry
	// would break the promise as much as one on its first attempt.
	expectStaysUnallocated(ctx, b, "the step must stay unallocated while the ordinary claim "+held.Name+" holds the whole capacity", stepClaim.Name)

	ginkgo.By("once the ordinary claim goes, the step is allocated though the admin-access claim still has its share")
	deletePod(ctx, holder)
	deleteClaim(ctx, b, held)
	gomega.Expect(expectRunning(ctx, b, waiting)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))
	stepped := allocatedClaim(ctx, b, stepClaim.Name)
	gomega.Expect(observe.AllocatedDevices(stepped)).To(gomega.Equal([]string{poolDevice(node, contract.SharedDevice)}))
	gomega.Expect(observe.Shares(stepped, contract.SharedCapacity)).To(gomega.Equal([]string{"share of " + contract.SharedStep}))
	expectUndisturbed(ctx, adminPod, adminBefore)
	if seen != nil {
		seen(ctx)
	}
}

// adminShareReleasedGivesBackNone is the shared-capacity twin of the
// dedicated device's "the admin-access claim goes, the holder stays, a new
// ordinary claim still waits" (adminGetsDeviceInUse). The admin-access
// share is recorded with the capacity it asked for (its result's
// consumedCapacity), as an ordinary share is; kube-scheduler leaves it out
// of the device's capacity in use when the claim is allocated
// (foreachAllocatedDevice, plugins/dynamicresources/allocateddevices.go),
// and must leave it out when the claim goes, or releasing it takes that
// much off what the ordinary holder still uses.
//
// The admin-access share is sized to fit beside the holder's (3Gi + 1Gi of
// 4Gi): where #140729's capacity case is declared, the allocator adds an
// admin-access request's amount to the device's use in its check, and a
// share that did not fit would be refused for that; sized so, it is
// allocated under every release and allocator, declared or not, and the
// verdict of this spec is the same everywhere.
func adminShareReleasedGivesBackNone(ctx context.Context, f *framework.Framework, shared *featureDriver, seen func(context.Context)) {
	e := envOf(ctx)
	b := shared.builder(ctx, f)
	node := anyWorker(ctx)
	device := []string{poolDevice(node, contract.SharedDevice)}
	// Claims of the group's earlier specs go with their namespaces, which
	// the framework deletes without waiting: a share one of them still
	// holds would leave less than the admin-access share's 1Gi beside the
	// holder's 3Gi where #140729's capacity case is declared (seen on 1.35
	// alpha: "Device capacity not enough" for the admin-access claim).
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		return ordinarySharesOf(ctx, b.DriverName, device[0])
	}).WithTimeout(podDeleteTimeout).Should(gomega.BeEmpty(), "the ordinary shares of device %s that earlier specs held", device[0])
	ginkgo.By("an ordinary claim holds 3Gi of the device's " + contract.SharedTotal)
	holder, held, _ := runOn(ctx, b, node, share("3Gi"))
	gomega.Expect(observe.AllocatedDevices(held)).To(gomega.Equal(device), "the ordinary claim on the shared device")
	gomega.Expect(observe.Shares(held, contract.SharedCapacity)).To(gomega.Equal([]string{"share of 3Gi"}), "the ordinary share as kube-scheduler recorded it")
	holderBefore := snapshot(ctx, holder)

	ginkgo.By("an admin-access claim shares the device with a share of " + contract.SharedStep)
	labelForAdmin(ctx, f.Namespace.Name)
	adminClaim, err := b.CreateClaim(ctx, b.Claim(share(contract.SharedStep), builder.AdminAccess()))
	framework.ExpectNoError(err)
	adminPod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(adminClaim)), node))
	framework.ExpectNoError(err)
	admin := expectAdminAllocated(ctx, b, adminPod, adminClaim.Name)
	gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.Equal(device), "the device the ordinary claim shares")
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
	// What a release could wrongly give back: without a recorded amount
	// the rest of the spec could not fail.
	gomega.Expect(observe.Shares(admin, contract.SharedCapacity)).To(gomega.Equal([]string{"share of " + contract.SharedStep}),
		"the admin-access share as kube-scheduler recorded it (its consumedCapacity)")
	gomega.Expect(expectRunning(ctx, b, adminPod)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))

	ginkgo.By("the admin-access claim goes while the holder stays: a new ordinary claim for 2Gi, which only the holder's 3Gi keeps out, still waits")
	deletePod(ctx, adminPod)
	deleteClaim(ctx, b, admin)
	// Compared with go-cmp, which takes a quantity's and a time's own Equal
	// (a quantity caches its text, so reflect's equality could tell two
	// equal amounts apart).
	gomega.Expect(allocatedClaim(ctx, b, held.Name).Status.Allocation).To(gomega.BeComparableTo(held.Status.Allocation),
		"the holder %s keeps its allocation, share ID and consumed capacity as they were", held.Name)
	// No other ordinary share has come meanwhile: one would keep the 2Gi
	// out too, and hide capacity the release gave back.
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		return ordinarySharesOf(ctx, b.DriverName, device[0])
	}).WithTimeout(podDeleteTimeout).Should(gomega.ConsistOf(held.Namespace+"/"+held.Name+": share of 3Gi"),
		"the ordinary shares of device %s: the holder's alone", device[0])
	more, err := b.CreateClaim(ctx, b.Claim(share("2Gi")))
	framework.ExpectNoError(err)
	waiting, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(more)), node))
	framework.ExpectNoError(err)
	if got, _ := allocatedOrRefused(ctx, b, waiting, more.Name); got != nil {
		framework.Failf("claim %s for 2Gi should wait while %s holds 3Gi of %s, but was allocated %v: releasing the admin-access share of %s gave back capacity",
			more.Name, held.Name, contract.SharedTotal, observe.Shares(got, contract.SharedCapacity), contract.SharedStep)
	}
	// Watched over the window: a scheduler whose first attempt still saw
	// the admin-access share and whose retry, after the release, allocates
	// fails here.
	expectUnschedulable(ctx, b, fmt.Sprintf("claim %s for 2Gi must stay unallocated while %s holds 3Gi of %s: releasing the admin-access share gives back nothing",
		more.Name, held.Name, contract.SharedTotal), waitingPod{waiting, more.Name})
	if nodesReachable(e) {
		// The only reason to refuse: the capacity the holder uses, not the
		// device in use or a selector.
		expectAllocatorLogged(ctx, waiting, device[0], release.CauseCapacity, "the holder's 3Gi leaves too little for 2Gi")
	}
	expectUndisturbed(ctx, holder, holderBefore)

	ginkgo.By("once the holder goes, the waiting claim gets its 2Gi: it waited for the holder's capacity alone")
	deletePod(ctx, holder)
	deleteClaim(ctx, b, held)
	gomega.Expect(expectRunning(ctx, b, waiting)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))
	got := allocatedClaim(ctx, b, more.Name)
	gomega.Expect(observe.AllocatedDevices(got)).To(gomega.Equal(device))
	gomega.Expect(observe.Shares(got, contract.SharedCapacity)).To(gomega.Equal([]string{"share of 2Gi"}))
	if seen != nil {
		seen(ctx)
	}
}

// ordinarySharesOf lists, in every namespace, the claims whose ordinary
// results share the driver's device (pool/device), each as "namespace/name:
// share of <amount>".
func ordinarySharesOf(ctx context.Context, driver, device string) ([]string, error) {
	e := envOf(ctx)
	list, err := e.DRA.ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range list.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver == driver && r.Pool+"/"+r.Device == device && r.ShareID != nil && !ptr.Deref(r.AdminAccess, false) {
				q := r.ConsumedCapacity[resourceapi.QualifiedName(contract.SharedCapacity)]
				out = append(out, c.Namespace+"/"+c.Name+": share of "+q.String())
			}
		}
	}
	return out, nil
}
