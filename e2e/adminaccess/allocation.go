// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
)

// corePromises are the allocation promises every allocator implementation
// must keep: the allocation group checks them on the release's defaults, the
// allocators group under each other implementation kube-scheduler can use.
var corePromises = []allocationPromise{
	{text: "allocates to an admin-access claim a device another pod holds, and leaves that pod undisturbed", kep: "admin access reaches devices already in use without taking them", run: adminGetsDeviceInUse, labels: ginkgo.Label("driver")},
	{text: "still allocates to an ordinary claim a device that an admin-access claim holds", kep: "devices under admin access stay available to ordinary claims", run: ordinaryGetsAdminsDevice},
	{text: "satisfies allocationMode All with admin access while every device of the node is in use", kep: "allocationMode All with admin access while every device is in use", run: allModeWhileAllInUse},
	{text: "runs an admin-access DaemonSet on every node with devices while ordinary pods hold them all", kep: "a DaemonSet with admin access monitors devices in use on every node", run: adminDaemonSetWhileAllInUse, labels: ginkgo.Label("daemonset")},
	{text: "never gives one claim one device twice: admin-access requests get devices no other request of the claim takes", kep: "within one claim no device is allocated twice, with or without admin access", run: oneDevicePerClaim},
	{text: "allocates an explicit adminAccess: false as an ordinary request: refused a device in use, given a free one without admin access", kep: "adminAccess unset or false asks for no admin access and needs no label", run: explicitFalseIsOrdinary},
	{text: "gives an ordinary claim, in a kube-scheduler started while an admin-access claim holds the node's devices, every device once its ordinary holder is gone", kep: "a kube-scheduler that starts while admin-access claims hold devices still gives them to ordinary claims", run: ordinaryGetsAdminsDevicesAfterStart},
}

// Each promise needs every device of a node to itself (it holds them all,
// or aims at one it must know is held), so ordinary claims of specs running
// alongside would take devices from under it. With the bundled driver each
// promise has a spare pool of its own on every node (contract.Slots, its
// class contract.SlotClass) and runs beside the other specs: "every device
// of the node" is every device of that pool. A driver of the user's own has
// one set of devices, which the promises share one at a time (Serial).
var _ = framework.Describe("Admin access allocation", ginkgo.Label("allocation"), func() {
	f := newAnyDriverFramework("allocation")
	if plan == nil {
		return // Main refused the run already
	}
	its := func(pooled bool) {
		for i, p := range corePromises {
			it(p.text, p.labels, kep(p.kep), func(ctx context.Context) {
				if pooled {
					inSlot(i + 1)
				}
				p.run(ctx, f)
			})
		}
	}
	if plan.Run.Vendor().Name == "" {
		its(true)
		return
	}
	framework.Context("on the devices of a driver of the user's own", framework.WithSerial(), func() { its(false) })
})

// The core promises' bodies; corePromises gives each its sentence.

func adminGetsDeviceInUse(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	node := devicesNode(ctx)
	// The ordinary claim holds every device of the node, so whichever one
	// the admin-access claim gets is in use: this reads the same for any
	// driver, whose devices need no attribute to be told apart.
	ordinaryPod, ordinary, ordinaryVars := holdEveryDevice(ctx, b, node)
	expectAdminAccessSeen(ctx, ordinaryPod, builder.WorkloadContainer, ordinaryVars, false, "the ordinary pod")
	before := snapshot(ctx, ordinaryPod)

	labelForAdmin(ctx, f.Namespace.Name)
	adminPod, admin, adminVars := runOn(ctx, b, node, builder.AdminAccess())
	gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.HaveLen(1))
	gomega.Expect(observe.AllocatedDevices(ordinary)).To(gomega.ContainElement(observe.AllocatedDevices(admin)[0]), "a device the ordinary claim holds")
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
	expectAdminAccessSeen(ctx, adminPod, builder.WorkloadContainer, adminVars, true, "the admin-access pod")
	expectDevicesSeen(e, adminVars, admin)
	expectUndisturbed(ctx, ordinaryPod, before)

	// Releasing the admin-access claim must not release what the ordinary
	// claim holds.
	ginkgo.By("the admin-access claim goes while the ordinary pod stays: a new ordinary claim for a device of the node still waits")
	deletePod(ctx, adminPod)
	deleteClaim(ctx, b, admin)
	second, err := b.CreateClaim(ctx, b.Claim())
	framework.ExpectNoError(err)
	waiting, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(second)), node))
	framework.ExpectNoError(err)
	expectUnschedulable(ctx, b, fmt.Sprintf("every device of %s is still %s's, whose pod %s runs", node, ordinary.Name, ordinaryPod.Name),
		waitingPod{waiting, second.Name})
	expectUndisturbed(ctx, ordinaryPod, before)
}

func ordinaryGetsAdminsDevice(ctx context.Context, f *framework.Framework) {
	b := newBuilder(ctx, f)
	node := devicesNode(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	// The admin-access claim has every device of the node, so the ordinary
	// claim's device is one of them, whichever it is.
	adminPod, admin, _ := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
	before := snapshot(ctx, adminPod)
	pod, ordinary, vars := runOn(ctx, b, node)
	gomega.Expect(observe.AllocatedDevices(ordinary)).To(gomega.HaveLen(1))
	gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.ContainElement(observe.AllocatedDevices(ordinary)[0]), "a device the admin-access claim has")
	gomega.Expect(observe.AdminAccessResults(ordinary)).To(gomega.Equal([]bool{false}))
	expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, vars, false, "the ordinary pod")
	expectUndisturbed(ctx, adminPod, before)
}

func allModeWhileAllInUse(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	node := devicesNode(ctx)
	holder, held, _ := holdEveryDevice(ctx, b, node)
	before := snapshot(ctx, holder)

	labelForAdmin(ctx, f.Namespace.Name)
	adminPod, admin, vars := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
	adminBefore := snapshot(ctx, adminPod)
	gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.ConsistOf(observe.AllocatedDevices(held)))
	gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.HaveEach(true))
	expectDevicesSeen(e, vars, admin)
	expectAdminAccessSeen(ctx, adminPod, builder.WorkloadContainer, vars, true, "the admin-access pod")
	expectUndisturbed(ctx, holder, before)

	ginkgo.By("the ordinary holder goes: a new ordinary claim for every device of the node gets them all, though the admin claim still has them")
	deletePod(ctx, holder)
	deleteClaim(ctx, b, held)
	nextPod, next, nextVars := runOn(ctx, b, node, builder.AllDevices())
	gomega.Expect(observe.AllocatedDevices(next)).To(gomega.ConsistOf(observe.AllocatedDevices(admin)),
		"an admin-access claim never counts as holding a device")
	gomega.Expect(observe.AdminAccessResults(next)).To(gomega.HaveEach(false))
	expectAdminAccessSeen(ctx, nextPod, builder.WorkloadContainer, nextVars, false, "the new ordinary pod")
	expectUndisturbed(ctx, adminPod, adminBefore)
}

func adminDaemonSetWhileAllInUse(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	nodes := deviceNodes(ctx)
	var holders []*corev1.Pod
	var before []podSnapshot
	for _, n := range nodes {
		claim, err := b.CreateClaim(ctx, b.Claim(builder.AllDevices()))
		framework.ExpectNoError(err)
		pod := builder.OnNode(b.Pod(builder.UsingClaim(claim)), n)
		builder.ToleratingAllTaints(&pod.Spec)
		pod, err = b.CreatePod(ctx, pod)
		framework.ExpectNoError(err)
		expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, expectRunning(ctx, b, pod), false, "ordinary pod on "+n)
		gomega.Expect(allocatedClaim(ctx, b, claim.Name).Status.Allocation.Devices.Results).To(gomega.HaveLen(devicesOn(e, n)),
			"the ordinary claim holds every device of %s", n)
		holders, before = append(holders, pod), append(before, snapshot(ctx, pod))
	}

	labelForAdmin(ctx, f.Namespace.Name)
	tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess(), builder.AllDevices()))
	framework.ExpectNoError(err)
	ds := createDaemonSet(ctx, b, "admin-monitor", tmpl, nodes...)
	want := int32(len(nodes))
	gomega.Eventually(ctx, func(ctx context.Context) (appsv1.DaemonSetStatus, error) {
		d, err := e.Client.AppsV1().DaemonSets(ds.Namespace).Get(ctx, ds.Name, metav1.GetOptions{})
		if err != nil {
			return appsv1.DaemonSetStatus{}, err
		}
		return d.Status, nil
	}).WithTimeout(podStartTimeout).Should(gomega.And(
		gomega.HaveField("DesiredNumberScheduled", want),
		gomega.HaveField("NumberAvailable", want),
		gomega.HaveField("NumberUnavailable", int32(0))), "the DaemonSet reports a pod available on every node")
	pods, err := e.Client.CoreV1().Pods(f.Namespace.Name).List(ctx, metav1.ListOptions{LabelSelector: "app=admin-monitor"})
	framework.ExpectNoError(err)
	gomega.Expect(pods.Items).To(gomega.HaveLen(int(want)))
	for i := range pods.Items {
		pod := &pods.Items[i]
		vars := expectRunning(ctx, b, pod)
		expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, vars, true, fmt.Sprintf("DaemonSet pod %s on %s", pod.Name, pod.Spec.NodeName))
		claim := podClaim(ctx, b, pod)
		gomega.Expect(observe.AdminAccessResults(claim)).To(gomega.And(gomega.HaveLen(devicesOn(e, pod.Spec.NodeName)), gomega.HaveEach(true)))
	}
	expectAllUndisturbed(ctx, holders, before)
}

// explicitFalseIsOrdinary: every implementation reads a request's admin
// access as ptr.Deref(adminAccess, false), so an explicit false meets the
// in-use check as an unset field does ("Device in use",
// release.CauseInUse), and writes adminAccess into a result only for
// admin access, so the stored result has none
// (release.Release.OrdinaryResultAdminAccess). An allocator that took the
// field's presence for admin access would give the held device, with
// adminAccess: true. The allocators group runs this under every other
// implementation, where authz's explicit-false spec runs only on the
// cluster's default one.
func explicitFalseIsOrdinary(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	node := devicesNode(ctx)
	holder, held, _ := holdEveryDevice(ctx, b, node)
	before := snapshot(ctx, holder)

	// Labelled, so that a result an allocator wrote with adminAccess: true
	// is stored and read below rather than refused by kube-apiserver's
	// status check, which would leave the pod waiting for another reason;
	// that false needs no label is authz's spec.
	labelForAdmin(ctx, f.Namespace.Name)
	claim, err := b.CreateClaim(ctx, b.Claim(builder.NoAdminAccess()))
	framework.ExpectNoError(err)
	// Without the stored false this spec would check an unset field.
	gomega.Expect(observe.RequestsAdminAccessFields(claim.Spec.Devices)).To(gomega.Equal([]string{"false"}), "claim %s's requests[].adminAccess as stored", claim.Name)
	pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(claim)), node))
	framework.ExpectNoError(err)

	ginkgo.By("while every device of the node is in use, the adminAccess: false claim is refused them all")
	if got, _ := allocatedOrRefused(ctx, b, pod, claim.Name); got != nil {
		framework.Failf("claim %s (adminAccess: false) was allocated %v with results' adminAccess %v (%s allocator) while claim %s holds every device of %s: false is no admin access, so it must wait",
			claim.Name, observe.AllocatedDevices(got), observe.ResultsAdminAccessFields(got), e.Allocator(), held.Name, node)
	}
	if nodesReachable(e) {
		expectAllocatorLoggedOn(ctx, pod, nodeDevices(e, node), true, release.CauseInUse, "adminAccess: false meets the in-use check as an ordinary request, on every device the holder has")
	}
	expectHeldThroughRetry(ctx, b, "every device is held and adminAccess: false is no admin access", []*corev1.Pod{pod}, claim.Name)
	expectUndisturbed(ctx, holder, before)

	ginkgo.By("the holder goes: the waiting claim gets a device, its result stored without admin access")
	deletePod(ctx, holder)
	deleteClaim(ctx, b, held)
	vars := expectRunning(ctx, b, pod)
	allocated := allocatedClaim(ctx, b, claim.Name)
	gomega.Expect(observe.ResultsAdminAccessFields(allocated)).To(gomega.Equal([]string{e.Rel.OrdinaryResultAdminAccess()}),
		"status.allocation.devices.results[].adminAccess of claim %s (adminAccess: false) as stored on Kubernetes %s (%s allocator)", allocated.Name, e.Rel.Minor, e.Allocator())
	expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, vars, false, "the pod of the adminAccess: false claim")
}

// ordinaryGetsAdminsDevicesAfterStart: kube-scheduler's tracker of the
// devices in use (allocateddevices.go) learns the claims allocated before
// it started from its informer's first list (onAdd), where it learns those
// allocated while it runs from their updates (onUpdate); every start,
// restart and upgrade takes the first path. Both must leave admin-access
// results out and count ordinary ones. So a new process meets an
// admin-access claim of every device of the node and an ordinary one of
// one device, both allocated before it started: an ordinary claim for
// every device waits for the held one, and gets them all, those the admin
// claim has included, once its holder is gone.
func ordinaryGetsAdminsDevicesAfterStart(ctx context.Context, f *framework.Framework) {
	// The new process is the node image's kube-scheduler.
	requireNodeAccess(ctx)
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	node := devicesNode(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	adminPod, admin, _ := runOn(ctx, b, node, builder.AllDevices(), builder.AdminAccess())
	adminBefore := snapshot(ctx, adminPod)
	holder, held, _ := runOn(ctx, b, node)

	ginkgo.By("a new kube-scheduler process starts, of the flags that allocated both claims")
	fresh := startFreshScheduler(ctx)
	// The spec's pods from here on are the new process's.
	b.SchedulerName = fresh.name()
	fb := b
	claim, err := fb.CreateClaim(ctx, fb.Claim(builder.AllDevices()))
	framework.ExpectNoError(err)
	pod, err := fb.CreatePod(ctx, builder.OnNode(fb.Pod(builder.UsingClaim(claim)), node))
	framework.ExpectNoError(err)
	expectUnschedulable(ctx, fb, fmt.Sprintf("kube-scheduler %s, started after claim %s was allocated %v, must count that device as in use", fresh.name(), held.Name, observe.AllocatedDevices(held)),
		waitingPod{pod, claim.Name})

	ginkgo.By("the ordinary holder goes: the new process gives the ordinary claim every device, though the admin-access claim still has them")
	deletePod(ctx, holder)
	deleteClaim(ctx, b, held)
	vars := expectRunning(ctx, fb, pod)
	got := allocatedClaim(ctx, fb, claim.Name)
	gomega.Expect(observe.AllocatedDevices(got)).To(gomega.ConsistOf(observe.AllocatedDevices(admin)),
		"kube-scheduler %s met claim %s's admin-access results when it started: they hold no device", fresh.name(), admin.Name)
	gomega.Expect(observe.AdminAccessResults(got)).To(gomega.HaveEach(false))
	expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, vars, false, "the ordinary pod of the new process")
	expectUndisturbed(ctx, adminPod, adminBefore)
	// The new process is the release's implementation the spec names;
	// 1.33 has one, whose lines name none.
	if len(e.Rel.Allocators) > 1 {
		seen := observe.AllocatorsInLogFor(schedulerLogOf(ctx, fresh.name(), pod.CreationTimestamp), f.Namespace.Name)
		gomega.Expect(seen).To(gomega.And(gomega.HaveKey(e.Allocator()), gomega.HaveLen(1)),
			"kube-scheduler %s's \"Starting allocation\" lines for pods in %s, by implementation: the release table says %s", fresh.name(), f.Namespace.Name, e.Allocator())
	}
}

// startFreshScheduler starts a second process of the kube-scheduler the
// running spec's pods name (the cluster's, or the allocator scheduler of
// underScheduler), under a name of its own, and removes it however the
// spec ends.
func startFreshScheduler(ctx context.Context) allocatorScheduler {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	fresh := allocatorScheduler{allocator: "cluster", asCluster: true, fresh: true}
	for _, s := range allocatorSchedulers(e.Rel) {
		if s.name() == specScheduler {
			fresh = s
			fresh.fresh = true
		}
	}
	ginkgo.DeferCleanup(inEnv(func(ctx context.Context) {
		if err := fresh.stop(ctx, e); err != nil {
			framework.Logf("removing kube-scheduler %s: %v", fresh.name(), err)
		}
	}))
	framework.ExpectNoError(fresh.start(ctx, e), "starting kube-scheduler %s (%s)", fresh.name(), fresh.what())
	fresh.awaitReady(ctx)
	return fresh
}

// holdEveryDevice runs an ordinary pod whose claim asks for every device
// of node, and checks that it got them all.
func holdEveryDevice(ctx context.Context, b *builder.Builder, node string) (*corev1.Pod, *resourceapi.ResourceClaim, map[string]string) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	pod, claim, vars := runOn(ctx, b, node, builder.AllDevices())
	gomega.Expect(claim.Status.Allocation.Devices.Results).To(gomega.HaveLen(devicesOn(e, node)), "the ordinary claim holds every device of %s", node)
	return pod, claim, vars
}
