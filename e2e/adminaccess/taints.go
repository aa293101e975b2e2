// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
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
		e := envOf(ctx)
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
		// Watched over a window, not read once: a scheduler that refuses
		// the first attempt and allocates on a retry breaks the promise too.
		expectStaysUnallocated(ctx, b, fmt.Sprintf("claim %s must stay unallocated: device %s is tainted %s=%s:%s and its admin-access request does not tolerate it",
			refused.Name, dev.Name, contract.TaintKey, contract.TaintValue, dev.Effect), refused.Name)
		deletePod(ctx, waiting)

		ginkgo.By("the same request tolerating the taint gets the device with admin access")
		tolerating := []builder.RequestOption{builder.DeviceIndex(i), builder.AdminAccess(), builder.Tolerating(contract.TaintKey, dev.Effect)}
		if defect, declared := toleranceLost(e, dev.Effect); declared {
			// The pod may be gone before it runs: the claim is read as
			// soon as it is allocated, before the eviction ends in its
			// release.
			claim, err := b.CreateClaim(ctx, b.Claim(tolerating...))
			framework.ExpectNoError(err)
			pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(claim)), node))
			framework.ExpectNoError(err)
			marks := watchEviction(ctx, pod)
			admin := allocatedClaim(ctx, b, claim.Name)
			gomega.Expect(observe.AllocatedDevices(admin)).To(gomega.Equal([]string{poolDevice(node, dev.Name)}))
			gomega.Expect(observe.AdminAccessResults(admin)).To(gomega.Equal([]bool{true}), "status.allocation.devices.results[].adminAccess")
			evictedAsDeclared(ctx, marks, admin, defect, seen)
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
	e := envOf(ctx)
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
	evictedMarks, keptMarks := watchEviction(ctx, evicted), watchEviction(ctx, kept)

	ginkgo.By("the driver adds a NoExecute taint to " + dev.Name + ", which both admin-access claims have")
	framework.ExpectNoError(deploy.SetTaints(ctx, e.Client, *tainted.opts, contract.AddedTaints{dev.Name: "NoExecute"}))
	expectEvicted(ctx, evictedMarks,
		"kube-controller-manager should evict pod %s: its admin-access request tolerates %s only with effect %s", evicted.Name, contract.TaintKey, dev.Effect)
	if defect, declared := toleranceLost(e, "NoExecute"); declared {
		evictedAsDeclared(ctx, keptMarks, keptClaim, defect, seen)
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

// evictedState is what an evictionWatch says of a pod kube-controller-manager's
// device taint eviction deleted: its status got the eviction's
// DisruptionTarget condition, and the pod is gone.
const evictedState = "DisruptionTarget " + release.DeviceTaintEvictionCondition + " (" + release.DeviceTaintEvictionConditionMessage + "), deleted"

// evictionWatch follows one pod from its creation for the mark
// kube-controller-manager's device taint eviction leaves: the
// DisruptionTarget condition it writes into the pod's status just before it
// deletes the pod. That condition, not the controller's event, is the
// evidence on every release: 1.33's and 1.34's controller put the event on
// the first pod they evict only (release.Release.EvictionEventOnce). The
// pods' grace period is a second, so only a watch from the pod's creation
// sees the condition for sure.
type evictionWatch struct {
	pod *corev1.Pod

	mu      sync.Mutex
	reason  string // the DisruptionTarget condition's reason and message, once seen
	deleted bool
	err     string
}

// watchEviction starts following pod, as created (its resourceVersion), for
// the rest of the spec.
func watchEviction(ctx context.Context, pod *corev1.Pod) *evictionWatch {
	ginkgo.GinkgoHelper()
	w, err := envOf(ctx).Client.CoreV1().Pods(pod.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + pod.Name, ResourceVersion: pod.ResourceVersion})
	framework.ExpectNoError(err, "watching pod %s", pod.Name)
	ginkgo.DeferCleanup(w.Stop)
	e := &evictionWatch{pod: pod}
	go func() {
		for ev := range w.ResultChan() {
			e.mu.Lock()
			switch p, ok := ev.Object.(*corev1.Pod); {
			case ev.Type == watch.Error:
				e.err = fmt.Sprintf("the watch of pod %s failed: %v", pod.Name, apierrors.FromObject(ev.Object))
			case ok && p.UID == pod.UID:
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
						e.reason = c.Reason + " (" + c.Message + ")"
					}
				}
				e.deleted = e.deleted || ev.Type == watch.Deleted
			}
			e.mu.Unlock()
		}
	}()
	return e
}

// state is what the watch has seen, in evictedState's words where it is that.
func (e *evictionWatch) state() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != "" {
		return e.err
	}
	reason, deleted := "no DisruptionTarget condition", "not deleted"
	if e.reason != "" {
		reason = "DisruptionTarget " + e.reason
	}
	if e.deleted {
		deleted = "deleted"
	}
	return reason + ", " + deleted
}

// expectEvicted waits until the watched pod was marked and deleted by the
// device taint eviction; the failure shows what was seen and the pod's
// events. Where the release puts the eviction's event on every pod it
// deletes, that event is asserted too.
func expectEvicted(ctx context.Context, e *evictionWatch, description ...any) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, func(ctx context.Context) string {
		if s := e.state(); s != evictedState {
			return fmt.Sprintf("%s; its events: %v", s, podEvents(ctx, e.pod))
		}
		return evictedState
	}).WithTimeout(podStartTimeout).Should(gomega.Equal(evictedState), description...)
	if !envOf(ctx).Rel.EvictionEventOnce {
		// Recorded through the controller's event broadcaster, so it may
		// reach the API after the pod is gone.
		expectPodEvent(ctx, e.pod, podStartTimeout, evictionEvent, description...)
	}
}

// toleranceLost says whether the release table declares, for the allocator
// kube-scheduler uses, that a request's toleration of a taint with this
// effect is lost to the eviction: kubernetes/kubernetes#134434, a NoExecute
// toleration on 1.34.
func toleranceLost(e *testenv.Env, effect string) (release.Defect, bool) {
	if effect != "NoExecute" {
		return release.Defect{}, false
	}
	return e.Rel.KnownDefect(release.DefectNoExecuteToleranceLost, e.Allocator())
}

// evictedAsDeclared is the tolerated NoExecute taint where the release table
// declares kubernetes/kubernetes#134434: the pod whose admin-access claim
// tolerates the taint is marked for deletion all the same, for the declared
// cause, read in the claim as allocated: its results carry none of its
// request's tolerations, and those are all kube-controller-manager's
// eviction reads. The spec then ends with the verdict. Results that carry
// the tolerations, or a pod left alone, mean the row is stale and fail it.
func evictedAsDeclared(ctx context.Context, marks *evictionWatch, claim *resourceapi.ResourceClaim, defect release.Defect, seen func(context.Context)) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	pod := marks.pod
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(r.Tolerations) > 0 {
			framework.Failf("%s; claim %s's result for %s/%s carries the request's tolerations %v", defect.NotReproduced(e.Rel.Minor, e.Allocator()), claim.Name, r.Pool, r.Device, r.Tolerations)
		}
	}
	expectEvicted(ctx, marks,
		"%s is declared for Kubernetes %s: kube-controller-manager should mark pod %s for deletion though its admin-access request tolerates the NoExecute taint (else: %s)",
		defect.Issue, e.Rel.Minor, pod.Name, defect.NotReproduced(e.Rel.Minor, e.Allocator()))
	if seen != nil {
		seen(ctx)
	}
	stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
		"pod %s, whose admin-access claim %s tolerates the NoExecute taint, was evicted (%s): its allocation has %s",
		pod.Name, claim.Name, evictedState, release.CauseTolerationsLost)))
}
