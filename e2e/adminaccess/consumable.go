package adminaccess

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/test/e2e/framework"

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
