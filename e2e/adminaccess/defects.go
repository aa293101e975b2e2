// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// allocatedOrKnownDefect waits for the claim of pod to be allocated: the
// promise. Where the release table declares the defect case c for this
// release and allocator, the promise must instead fail as declared, for the
// declared cause and no other: the scheduler refuses the pod
// (FailedScheduling, "cannot allocate all claims"), its allocator logs the
// defect's cause (Defect.Cause, "Insufficient counters" or "Device capacity
// not enough") for the pod and device, the device the admin-access request
// asks for (as observe.AllocatedDevices names it, pool/device), and once
// free(ctx) has taken away what the defect wrongly counts against the claim,
// the same claim is allocated. The spec then ends with the known-defect
// verdict, naming the cause seen, after seen (when given) has checked what
// it checks of the spec's allocations. Any other outcome fails the spec: a
// promise that held where the defect is declared (the table is stale), or a
// refusal the allocator gave another reason for (a device in use, a
// selector), with the lines it logged for the pod.
func allocatedOrKnownDefect(ctx context.Context, b *builder.Builder, pod *corev1.Pod, claimName, device string, c release.DefectCase, free func(context.Context), seen func(context.Context)) *resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	allocator := e.Allocator()
	defect, declared := e.Rel.KnownDefect(c, allocator)
	claim, refused := allocatedOrRefused(ctx, b, pod, claimName)
	switch {
	case claim != nil && declared:
		framework.Failf("%s; claim %s was allocated: %v", defect.NotReproduced(e.Rel.Minor, allocator), claimName, claim.Status.Allocation.Devices.Results)
	case claim != nil:
		return claim
	case !declared:
		framework.Failf("claim %s should be allocated (no upstream defect is declared for Kubernetes %s with the %s allocator), but kube-scheduler refused pod %s: %s; %s",
			claimName, e.Rel.Minor, allocator, pod.Name, refused, allocatorSaid(ctx, pod))
	}

	// The defect as declared: the refusal is for its cause, on the device
	// asked for, and for what free takes away.
	cause := expectRefusedFor(ctx, pod, device, defect)
	framework.Logf("%s: kube-scheduler refused pod %s: %s; its allocator: %s", defect.Issue, pod.Name, refused, cause)
	free(ctx)
	claim = allocatedClaim(ctx, b, claimName)
	framework.Logf("%s: once freed, claim %s was allocated: %v", defect.Issue, claimName, claim.Status.Allocation.Devices.Results)
	if seen != nil {
		seen(ctx)
	}
	stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
		"pod %s was refused (%s), kube-scheduler's %s allocator passed over device %s with %q, and claim %s was allocated only once the ordinary claims were gone",
		pod.Name, refused, allocator, device, defect.Cause, claimName)))
	return nil
}

// expectAdminAllocated waits for the admin-access claim of pod to be
// allocated, where no defect can excuse a refusal; a refusal fails the spec
// at once with what kube-scheduler's allocator logged for the pod (a device
// in use, a selector), not after a pod's start-up timeout.
func expectAdminAllocated(ctx context.Context, b *builder.Builder, pod *corev1.Pod, claimName string) *resourceapi.ResourceClaim {
	ginkgo.GinkgoHelper()
	claim, refused := allocatedOrRefused(ctx, b, pod, claimName)
	if claim == nil {
		framework.Failf("admin-access claim %s should be allocated, but kube-scheduler refused pod %s: %s; %s", claimName, pod.Name, refused, allocatorSaid(ctx, pod))
	}
	return claim
}

// allocatedOrRefused waits, bounded, until the claim of pod is allocated
// (the claim) or kube-scheduler refuses the pod (the FailedScheduling event
// that says it cannot allocate the claims).
func allocatedOrRefused(ctx context.Context, b *builder.Builder, pod *corev1.Pod, claimName string) (*resourceapi.ResourceClaim, string) {
	ginkgo.GinkgoHelper()
	return allocatedOrRefusedWith(ctx, b, pod, claimName, failedScheduling(release.CannotAllocate))
}

// allocatorSaid is, for a failure message, why kube-scheduler's allocator
// passed over each device it considered for pod: its lines that name a
// device, less the selector's own (a CEL result, a device of another class
// not selectable), each reason once, the last twelve.
func allocatorSaid(ctx context.Context, pod *corev1.Pod) string {
	e := envOf(ctx)
	// Only for a failure's message: where kube-scheduler's log is out of
	// reach, the message must still say the failure, not that the log is.
	if !nodesReachable(e) {
		return "kube-scheduler's log is out of reach of this run"
	}
	lines := allocatorLinesFor(ctx, pod)
	if len(lines) == 0 {
		return "no allocator line names the pod (does kube-scheduler run with --vmodule=" + release.AllocatorVModule + "?)"
	}
	var said []string
	seen := map[string]bool{}
	for _, l := range lines {
		key := l.Message + " " + l.Device
		if l.Device == "" || l.Message == "CEL result" || l.Message == "Device not selectable" || seen[key] {
			continue
		}
		seen[key] = true
		said = append(said, fmt.Sprintf("%s: %s (%s)", l.Device, l.Message, l.File))
	}
	if len(said) == 0 {
		return "the allocator passed over no device that the request's class selects"
	}
	return "why the allocator passed over each device it considered: " + strings.Join(lastOf(said, 12), "; ")
}

func allocatorLinesFor(ctx context.Context, pod *corev1.Pod) []observe.AllocatorLine {
	return observe.AllocatorLinesFor(schedulerLog(ctx, pod.CreationTimestamp), pod.Namespace+"/"+pod.Name)
}

// expectRefusedFor waits, bounded, for kube-scheduler's allocator to log the
// defect's cause for pod and device (pool/device; the log names the driver
// too), and returns that line. Where it never does, the refusal had another
// reason, and the spec fails with what the allocator did say for the pod.
func expectRefusedFor(ctx context.Context, pod *corev1.Pod, device string, defect release.Defect) string {
	ginkgo.GinkgoHelper()
	// A known defect is a verdict only with its own cause seen, which is in
	// kube-scheduler's log: where that is out of reach (an existing
	// cluster), the spec is the declared skip of node access, never a
	// defect on the events alone, which a regression reads the same in.
	require(ctx, release.NeedNodeAccess, nil)
	return expectAllocatorLogged(ctx, pod, device, defect.Cause, fmt.Sprintf("the declared cause of %s: "+
		"the refusal is not that defect (a regression such as admin access refused on a device in use reads the same in the events)", defect.Issue))
}

// expectAllocatorLoggedOn is expectAllocatorLogged for devices of one node
// (pool/device): for each of them where every one must have been passed
// over for cause (each, a request that meets every device of the node in
// use), else for at least one, so that a line about a device elsewhere
// never stands for the node's.
func expectAllocatorLoggedOn(ctx context.Context, pod *corev1.Pod, devices []string, each bool, cause, why string) {
	ginkgo.GinkgoHelper()
	if each {
		for _, d := range devices {
			expectAllocatorLogged(ctx, pod, d, cause, why)
		}
		return
	}
	gomega.Eventually(ctx, func(ctx context.Context) []string {
		var on []string
		for _, l := range allocatorLinesFor(ctx, pod) {
			for _, d := range devices {
				if l.Message == cause && strings.HasSuffix(l.Device, "/"+d) {
					on = append(on, d)
				}
			}
		}
		return on
	}).WithTimeout(logTimeout).ShouldNot(gomega.BeEmpty(), func() string {
		return fmt.Sprintf("kube-scheduler refused pod %s/%s, but its allocator never logged %q for a device of %v (%s); %s",
			pod.Namespace, pod.Name, cause, devices, why, allocatorSaid(ctx, pod))
	})
}

// expectAllocatorLogged waits, bounded, for kube-scheduler's allocator to
// log cause for pod and device (pool/device; "" for any device), and
// returns that line; where it never does, the spec fails with why and what
// the allocator did say.
func expectAllocatorLogged(ctx context.Context, pod *corev1.Pod, device, cause, why string) string {
	ginkgo.GinkgoHelper()
	var found string
	gomega.Eventually(ctx, func(ctx context.Context) bool {
		for _, l := range allocatorLinesFor(ctx, pod) {
			if l.Message == cause && (device == "" && l.Device != "" || device != "" && strings.HasSuffix(l.Device, "/"+device)) {
				found = l.Text
				return true
			}
		}
		return false
	}).WithTimeout(logTimeout).Should(gomega.BeTrue(), func() string {
		which := "device " + device
		if device == "" {
			which = "any device"
		}
		return fmt.Sprintf("kube-scheduler refused pod %s/%s, but its allocator never logged %q for %s (%s); %s",
			pod.Namespace, pod.Name, cause, which, why, allocatorSaid(ctx, pod))
	})
	return found
}
