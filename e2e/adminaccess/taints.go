package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// Device taints (KEP-5055) with admin access. Admin access reaches devices
// that ordinary claims hold, but the API exempts it from nothing else: a
// taint with effect NoSchedule or NoExecute keeps every request from the
// device unless the request tolerates it (resource.k8s.io/v1 DeviceTaint:
// "the taint must be tolerated by a claim to allocate the device"). A
// monitoring DaemonSet must therefore tolerate what it is meant to see.
//
// The devices are a second instance of the bundled driver (featureDriver,
// layout tainted: one device tainted NoSchedule, one NoExecute, both by the
// driver itself in its slice).
var _ = framework.Describe("Admin access on tainted devices", ginkgo.Label("taints"), ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
	f := newFramework("taints")
	itEach(f, newFeatureDriver(contract.LayoutTainted, release.NeedDeviceTaints), taintPromises, nil)
})

// taintPromises are the group's specs as bodies, so that the allocators
// group runs them again under each other implementation with device
// taints. The eviction comes last: it changes what the instance publishes,
// and the group removes the instance after it.
var taintPromises = []featurePromise{
	{text: "keeps an admin-access request from a device tainted " + contract.TaintedDevices[0].Effect + " unless the request tolerates the taint", kep: "admin access is not exempt from device taints", run: tolerationNeeded(0)},
	{text: "keeps an admin-access request from a device tainted " + contract.TaintedDevices[1].Effect + " unless the request tolerates the taint", kep: "admin access is not exempt from device taints", run: tolerationNeeded(1)},
	{text: "evicts an admin-access pod that does not tolerate a NoExecute taint added later, and keeps one that does", kep: "admin access is not exempt from device taints", run: evictedUnlessTolerated},
}

// tolerationNeeded is the body for tainted device i.
func tolerationNeeded(i int) func(context.Context, *framework.Framework, *featureDriver, func(context.Context)) {
	dev := contract.TaintedDevices[i]
	return func(ctx context.Context, f *framework.Framework, tainted *featureDriver, seen func(context.Context)) {
		b := tainted.builder(ctx, f)
		node := anyWorker(ctx)
		labelForAdmin(ctx, f.Namespace.Name)

		ginkgo.By("an admin-access claim without a toleration is not allocated")
		refused, err := b.CreateClaim(ctx, b.Claim(builder.DeviceIndex(i), builder.AdminAccess()))
		framework.ExpectNoError(err)
		waiting, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(refused)), node))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, waiting, allocateTimeout, failedScheduling(release.CannotAllocate),
			"kube-scheduler should refuse pod %s: device %s is tainted %s=%s:%s and the admin-access request does not tolerate it",
			waiting.Name, dev.Name, contract.TaintKey, contract.TaintValue, dev.Effect)
		c, err := b.GetClaim(ctx, refused.Name)
		framework.ExpectNoError(err)
		gomega.Expect(c.Status.Allocation).To(gomega.BeNil(), "claim %s must stay unallocated", refused.Name)
		deletePod(ctx, waiting)

		ginkgo.By("the same request tolerating the taint gets the device with admin access")
		tolerating := []builder.RequestOption{builder.DeviceIndex(i), builder.AdminAccess(), builder.Tolerating(contract.TaintKey, dev.Effect)}
		if defect, declared := toleranceLost(dev.Effect); declared {
			// The pod may be gone before it runs: the claim is read as
			// soon as it is allocated, before the eviction ends in its
			// release.
			claim, err := b.CreateClaim(ctx, b.Claim(tolerating...))
			framework.ExpectNoError(err)
			pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(claim)), node))
			framework.ExpectNoError(err)
			admin := allocatedClaim(ctx, b, claim.Name)
			gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.Equal([]string{poolDevice(node, dev.Name)}))
			gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
			evictedAsDeclared(ctx, pod, admin, defect, seen)
			return
		}
		pod, admin, vars := runOn(ctx, b, node, tolerating...)
		gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.Equal([]string{poolDevice(node, dev.Name)}))
		gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		// A tolerated NoExecute taint leaves the pod where it is:
		// kube-controller-manager's device-taint eviction skips it.
		expectUndisturbed(ctx, pod, snapshot(ctx, pod))
		if seen != nil {
			seen(ctx)
		}
	}
}

func evictedUnlessTolerated(ctx context.Context, f *framework.Framework, tainted *featureDriver, seen func(context.Context)) {
	b := tainted.builder(ctx, f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	// Device 0 is tainted NoSchedule from the start: both requests
	// tolerate that, only the second also NoExecute (kube-controller-
	// manager's eviction counts only a toleration that names NoExecute).
	dev := contract.TaintedDevices[0]
	noSchedule := builder.Tolerating(contract.TaintKey, dev.Effect)
	evicted, _, _ := runOn(ctx, b, node, builder.DeviceIndex(0), builder.AdminAccess(), noSchedule)
	kept, keptClaim, _ := runOn(ctx, b, node, builder.DeviceIndex(0), builder.AdminAccess(), noSchedule, builder.Tolerating(contract.TaintKey, "NoExecute"))
	before := snapshot(ctx, kept)

	ginkgo.By("the driver adds a NoExecute taint to " + dev.Name + ", which both admin-access claims have")
	framework.ExpectNoError(deploy.SetTaints(ctx, env.Client, *tainted.opts, contract.AddedTaints{dev.Name: "NoExecute"}))
	expectPodEvent(ctx, evicted, podStartTimeout, evictionEvent,
		"kube-controller-manager should evict pod %s: its admin-access request tolerates %s only with effect %s", evicted.Name, contract.TaintKey, dev.Effect)
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := env.Client.CoreV1().Pods(evicted.Namespace).Get(ctx, evicted.Name, metav1.GetOptions{})
		return err
	}).WithTimeout(podStartTimeout).Should(gomega.Satisfy(apierrors.IsNotFound), "evicted pod %s is deleted", evicted.Name)
	if defect, declared := toleranceLost("NoExecute"); declared {
		evictedAsDeclared(ctx, kept, keptClaim, defect, seen)
		return
	}
	expectUndisturbed(ctx, kept, before)
	if seen != nil {
		seen(ctx)
	}
}

// evictionEvent is what kube-controller-manager's device taint eviction
// says of a pod it deletes.
const evictionEvent = "Normal " + release.DeviceTaintEvictionReason + ": " + release.DeviceTaintEvictionMessage

// toleranceLost says whether the release table declares, for the allocator
// kube-scheduler uses, that a request's toleration of a taint with this
// effect is lost to the eviction: kubernetes/kubernetes#134434, a NoExecute
// toleration on 1.34.
func toleranceLost(effect string) (release.Defect, bool) {
	if effect != "NoExecute" {
		return release.Defect{}, false
	}
	return env.Rel.KnownDefect(release.DefectNoExecuteToleranceLost, env.Allocator())
}

// evictedAsDeclared is the tolerated NoExecute taint where the release table
// declares kubernetes/kubernetes#134434: the pod whose admin-access claim
// tolerates the taint is marked for deletion all the same, for the declared
// cause, read in the claim as allocated: its results carry none of its
// request's tolerations, and those are all kube-controller-manager's
// eviction reads. The spec then ends with the verdict. Results that carry
// the tolerations, or a pod left alone, mean the row is stale and fail it.
func evictedAsDeclared(ctx context.Context, pod *corev1.Pod, claim *resourceapi.ResourceClaim, defect release.Defect, seen func(context.Context)) {
	ginkgo.GinkgoHelper()
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(r.Tolerations) > 0 {
			framework.Failf("%s; claim %s's result for %s/%s carries the request's tolerations %v", defect.NotReproduced(env.Rel.Minor, env.Allocator()), claim.Name, r.Pool, r.Device, r.Tolerations)
		}
	}
	expectPodEvent(ctx, pod, podStartTimeout, evictionEvent,
		"%s is declared for Kubernetes %s: kube-controller-manager should mark pod %s for deletion though its admin-access request tolerates the NoExecute taint (else: %s)",
		defect.Issue, env.Rel.Minor, pod.Name, defect.NotReproduced(env.Rel.Minor, env.Allocator()))
	if seen != nil {
		seen(ctx)
	}
	stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
		"pod %s, whose admin-access claim %s tolerates the NoExecute taint, was marked for deletion (%s): its allocation has %s",
		pod.Name, claim.Name, evictionEvent, release.CauseTolerationsLost)))
}
