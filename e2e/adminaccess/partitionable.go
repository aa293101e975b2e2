// SPDX-License-Identifier: Apache-2.0

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

// Partitionable devices (KEP-4815) with admin access. The API's promise
// (resource.k8s.io/v1 ExactDeviceRequest.AdminAccess): "ignores all ordinary
// claims to the device with respect to access modes and any resource
// allocations". A device's shared counters are such an allocation: an
// admin-access request must get a device whose counters ordinary claims
// have used up, and must use none itself.
//
// The devices are a second instance of the bundled driver (featureDriver,
// layout partitionable: the whole device index 0, its halves 1 and 2, on one
// counter set that fits the whole device once).
var _ = framework.Describe("Admin access on partitionable devices", ginkgo.Label("partitionable"), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
	f := newFramework("partitionable")
	itEach(f, newFeatureDriver(contract.LayoutPartitionable, release.NeedPartitionableDevices), partitionPromises, nil)
})

// partitionPromises are the group's specs as bodies, so that the allocators
// group runs them again under each other allocator implementation; seen,
// where given, checks which implementation allocated, and is called before
// the spec ends, also with a known-defect verdict.
var partitionPromises = []featurePromise{
	{text: "allocates to admin-access claims a partition in use and a device whose counters ordinary claims used up", kep: "admin access ignores ordinary claims' use of a partitionable device's counters", run: adminGetsPartitionInUse},
	{text: "consumes no counters for an admin-access allocation", kep: "admin access ignores ordinary claims' use of a partitionable device's counters", run: adminConsumesNoCounters},
}

// The partitionable promises' bodies; partitionPromises gives each its sentence.

// adminGetsPartitionInUse: first a half an ordinary claim holds (the device
// in use, its counters with room: the KEP's first promise on a partition);
// then the whole device, which no claim holds but whose counters the
// ordinary claims of both halves have used up, so that the counters are the
// only reason left to refuse it (kubernetes/kubernetes#140729's cause, read
// in kube-scheduler's log where the defect is declared).
func adminGetsPartitionInUse(ctx context.Context, f *framework.Framework, parts *featureDriver, seen func(context.Context)) {
	b := parts.builder(ctx, f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)

	ginkgo.By("an admin-access claim gets the half an ordinary claim holds")
	holder, held, _ := runOn(ctx, b, node, half)
	halfClaim, err := b.CreateClaim(ctx, b.Claim(half, builder.AdminAccess()))
	framework.ExpectNoError(err)
	halfAdminPod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(halfClaim)), node))
	framework.ExpectNoError(err)
	halfAdmin := expectAdminAllocated(ctx, b, halfAdminPod, halfClaim.Name)
	halfVars := expectRunning(ctx, b, halfAdminPod)
	gomega.Expect(observe.AllocatedDevices(halfAdmin)).To(gomega.Equal(observe.AllocatedDevices(held)), "the half the ordinary claim holds")
	gomega.Expect(observe.AdminAccessResults(halfAdmin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
	gomega.Expect(halfVars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))

	ginkgo.By("an ordinary claim takes the other half: the ordinary halves use up the counters, and no claim holds the whole device")
	otherHolder, otherHeld, _ := runOn(ctx, b, node, otherHalf)
	holders := []*corev1.Pod{holder, otherHolder, halfAdminPod}
	before := []podSnapshot{snapshot(ctx, holder), snapshot(ctx, otherHolder), snapshot(ctx, halfAdminPod)}

	ginkgo.By("an admin-access claim for the whole device, whose counters the ordinary halves hold")
	adminClaim, err := b.CreateClaim(ctx, b.Claim(whole, builder.AdminAccess()))
	framework.ExpectNoError(err)
	adminPod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(adminClaim)), node))
	framework.ExpectNoError(err)
	wholeDevice := poolDevice(node, contract.PartitionDevices[0])
	admin := allocatedOrKnownDefect(ctx, b, adminPod, adminClaim.Name, wholeDevice, release.DefectAdminConsumesCounters, func(ctx context.Context) {
		ginkgo.By("the ordinary claims on the halves go: their counters are free again")
		deletePod(ctx, holder)
		deleteClaim(ctx, b, held)
		deletePod(ctx, otherHolder)
		deleteClaim(ctx, b, otherHeld)
	}, seen)
	gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.Equal([]string{wholeDevice}), "the whole device")
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
	vars := expectRunning(ctx, b, adminPod)
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.DeviceEnv(contract.PartitionDevices[0]), string(admin.UID)))
	expectAllUndisturbed(ctx, holders, before)
	if seen != nil {
		seen(ctx)
	}
}

func adminConsumesNoCounters(ctx context.Context, f *framework.Framework, parts *featureDriver, seen func(context.Context)) {
	b := parts.builder(ctx, f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	adminPod, admin, _ := runOn(ctx, b, node, whole, builder.AdminAccess())
	adminBefore := snapshot(ctx, adminPod)

	ginkgo.By("an ordinary claim gets the whole device the admin-access claim has: its counters are all free")
	holder, held, vars := runOn(ctx, b, node, whole)
	gomega.Expect(observe.AllocatedDevices(held)).To(gomega.Equal(observe.AllocatedDevices(admin)))
	gomega.Expect(observe.AdminAccessResults(held)).To(gomega.Equal([]bool{false}))
	gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))

	ginkgo.By("a second ordinary claim, for a half, is refused: the ordinary whole device holds every counter, as it would without the admin claim")
	halfClaim, err := b.CreateClaim(ctx, b.Claim(half))
	framework.ExpectNoError(err)
	waiting, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(halfClaim)), node))
	framework.ExpectNoError(err)
	expectPodEvent(ctx, waiting, allocateTimeout, failedScheduling(release.CannotAllocate),
		"kube-scheduler should refuse the half while the whole device's ordinary claim holds the counters")
	// Over a window, not read once: an allocation on the scheduler's retry
	// would break the promise as much as one on its first attempt.
	expectStaysUnallocated(ctx, b, "the half must stay unallocated while the whole device's ordinary claim "+held.Name+" holds every counter", halfClaim.Name)

	ginkgo.By("once the ordinary whole device goes, the half is allocated though the admin-access claim still has the whole device")
	deletePod(ctx, holder)
	deleteClaim(ctx, b, held)
	gomega.Expect(expectRunning(ctx, b, waiting)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))
	gomega.Expect(observe.AllocatedDevices(allocatedClaim(ctx, b, halfClaim.Name))).To(gomega.Equal([]string{poolDevice(node, contract.PartitionDevices[1])}))
	expectUndisturbed(ctx, adminPod, adminBefore)
	if seen != nil {
		seen(ctx)
	}
}
