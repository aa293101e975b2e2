// SPDX-License-Identifier: Apache-2.0

package adminaccess

// kube-scheduler without DRAAdminAccess, for the shapes of claim the
// group's first spec (schedulerOff: one exact request for one device)
// never puts in front of it: an admin-access request after an ordinary
// one, an admin-access request for all devices (the monitoring shape,
// met in a rollback), an ordinary prioritized list, and a request that
// says adminAccess: false. The allocator's gate check is one line per
// request (validateDeviceRequest in every implementation), reached for
// each request and subrequest of each claim; these specs pin it to the
// request that asks, and away from those that do not.

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	gtypes "github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
)

// gateOffShapes are the specs, each a sentence and a body that runs with
// the spec's pods in front of a kube-scheduler without the gate.
var gateOffShapes = []struct {
	name, text, kep string
	run             func(ctx context.Context, f *framework.Framework)
}{
	{name: "shapes", text: "refuses an admin-access request after an ordinary one, and one for all devices, with its error for the request that asks",
		kep: "a scheduler without the gate refuses admin access in every shape of claim, for the request that asks, and allocates ordinary ones", run: gateOffRefusesEveryShape},
	{name: "list", text: "allocates an ordinary claim whose request is a prioritized list",
		kep: "a scheduler without the gate refuses admin access in every shape of claim, for the request that asks, and allocates ordinary ones", run: gateOffAllocatesFirstAvailable},
	{name: "false", text: "allocates a claim whose request says adminAccess: false as an ordinary one",
		kep: "adminAccess unset or false asks for no admin access and needs no label", run: gateOffAllocatesExplicitFalse},
}

// underGateOffScheduler starts, for the running spec, a kube-scheduler of
// its own: the cluster's binary and flags with the gate off, under a name
// of the spec's (several such specs run at once), removed however the spec
// ends; the spec's pods name it (newBuilder).
func underGateOffScheduler(ctx context.Context, name string) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	off := allocatorScheduler{allocator: "gate-off-" + name, adminAccess: ptr.To(false)}
	ginkgo.DeferCleanup(inEnv(func(ctx context.Context) {
		if err := off.stop(ctx, e); err != nil {
			framework.Logf("removing kube-scheduler %s: %v", off.name(), err)
		}
	}))
	framework.ExpectNoError(off.start(ctx, e), "starting kube-scheduler %s (%s)", off.name(), off.what())
	off.awaitReady(ctx)
	specScheduler = off.name()
	ginkgo.DeferCleanup(func() { specScheduler = "" })
}

// gateOffRefusesEveryShape: each claim waits with the allocator's error
// naming the request that asks for admin access, never an earlier one.
func gateOffRefusesEveryShape(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	labelForAdmin(ctx, f.Namespace.Name)
	var refused []string
	for _, sh := range []struct {
		what     string
		requests [][]builder.RequestOption
		asks     int // the request the error must name
	}{
		{"an admin-access request after an ordinary one", [][]builder.RequestOption{{}, {builder.AdminAccess()}}, 1},
		{"an admin-access request for every device", [][]builder.RequestOption{{builder.AllDevices(), builder.AdminAccess()}}, 0},
		{"an ordinary request for every device, then an admin-access one", [][]builder.RequestOption{{builder.AllDevices()}, {builder.AdminAccess()}}, 1},
	} {
		ginkgo.By(sh.what)
		claim, err := b.CreateClaim(ctx, b.ClaimOf(sh.requests...))
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		want := e.Rel.SchedulerGateOffMessage(f.Namespace.Name, claim.Name, builder.RequestNameAt(sh.asks))
		expectPodEvent(ctx, pod, allocateTimeout, failedScheduling(want),
			"kube-scheduler without the gate refuses claim %s (%s) for its request %s", claim.Name, sh.what, builder.RequestNameAt(sh.asks))
		refused = append(refused, claim.Name)
	}
	expectStaysUnallocated(ctx, b, "a scheduler without the gate never allocates admin access", refused...)
}

// gateOffAllocatesFirstAvailable: a subrequest has no adminAccess field,
// so the gate check passes every one of them (deviceSubRequestAccessor's
// hasAdminAccess is false); the list falls to its second subrequest.
func gateOffAllocatesFirstAvailable(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	require(ctx, release.NeedPrioritizedList, nil)
	b := newBuilder(ctx, f)
	list := [][]builder.RequestOption{{builder.DeviceIndex(e.Driver.Devices + 7)}, {}}
	claim, err := b.CreateClaim(ctx, b.ClaimFirstAvailable(list))
	framework.ExpectNoError(err)
	pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
	framework.ExpectNoError(err)
	// Where the scheduler refused, the pod stays Pending and its last
	// events, which expectRunning prints, carry the refusal.
	expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, expectRunning(ctx, b, pod), false, "the pod of an ordinary prioritized list")
	allocated := allocatedClaim(ctx, b, claim.Name)
	gomega.Expect(resultsByRequest(allocated)).To(gomega.Equal(map[string]bool{builder.RequestName + "/" + builder.SubRequestNameAt(1): false}),
		"status.allocation.devices.results[].request and adminAccess of claim %s", allocated.Name)
}

// gateOffAllocatesExplicitFalse: false asks for no admin access (the API:
// "disabled if this field is unset or set to false"), so the scheduler
// without the gate allocates it as an unset field. Upstream's allocators
// read the field's presence there (release.DefectGateOffFalseIsAdmin):
// where the table declares that, the spec reports the defect only on its
// own cause, kube-scheduler's error for this request of this claim, in its
// log and its event, with the false stored; any other refusal fails.
func gateOffAllocatesExplicitFalse(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	allocator := e.Allocator()
	defect, declared := e.Rel.KnownDefect(release.DefectGateOffFalseIsAdmin, allocator)
	// No label: false needs none, so only a gate check that read false as
	// asking could refuse it.
	claim, err := b.CreateClaim(ctx, b.Claim(builder.NoAdminAccess()))
	framework.ExpectNoError(err)
	// kube-apiserver has the gate: it keeps the field as sent, so the
	// scheduler meets a false, not an unset field.
	gomega.Expect(observe.RequestsAdminAccessFields(claim.Spec.Devices)).To(gomega.Equal([]string{"false"}), "claim %s's requests[].adminAccess as stored", claim.Name)
	pod, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
	framework.ExpectNoError(err)
	want := e.Rel.SchedulerGateOffMessage(f.Namespace.Name, claim.Name, builder.RequestName)
	got, refusal := allocatedOrRefusedWith(ctx, b, pod, claim.Name, failedScheduling(want))
	switch {
	case declared && got != nil:
		framework.Failf("%s; claim %s (adminAccess: false) was allocated %v", defect.NotReproduced(e.Rel.Minor, allocator), claim.Name, resultsGiven(got))
	case declared:
		logged := expectSchedulerError(ctx, pod, want)
		expectStaysUnallocated(ctx, b, "the declared defect: kube-scheduler without the gate refuses adminAccess: false", claim.Name)
		stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
			"kube-scheduler without %s (%s allocator) refused claim %s, whose request %s says adminAccess: false: event %q; log %q",
			release.Gate, allocator, claim.Name, builder.RequestName, refusal, logged)))
	case got == nil:
		framework.Failf("kube-scheduler without %s refused claim %s, whose request says adminAccess: false, as asking for admin access (%s allocator): %s",
			release.Gate, claim.Name, allocator, refusal)
	}
	vars := expectRunning(ctx, b, pod)
	expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, vars, false, "the pod of the adminAccess: false claim")
	gomega.Expect(observe.ResultsAdminAccessFields(got)).To(gomega.Equal([]string{e.Rel.OrdinaryResultAdminAccess()}),
		"status.allocation.devices.results[].adminAccess of claim %s (adminAccess: false) on Kubernetes %s (%s allocator)", got.Name, e.Rel.Minor, allocator)
}

// allocatedOrRefusedWith is allocatedOrRefused for a refusal the caller
// names (a FailedScheduling event matching refusal).
func allocatedOrRefusedWith(ctx context.Context, b *builder.Builder, pod *corev1.Pod, claimName string, refusal gtypes.GomegaMatcher) (got *resourceapi.ResourceClaim, refused string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, func(ctx context.Context) error {
		c, err := b.GetClaim(ctx, claimName)
		if err != nil {
			return err
		}
		if c.Status.Allocation != nil {
			got = c
			return nil
		}
		for _, ev := range podEvents(ctx, pod) {
			if ok, _ := refusal.Match(ev); ok {
				refused = ev
				return nil
			}
		}
		return fmt.Errorf("claim %s is neither allocated nor refused; pod %s's events: %v", claimName, pod.Name, lastOf(podEvents(ctx, pod), 3))
	}).WithTimeout(allocateTimeout).Should(gomega.Succeed())
	return got, refused
}

// expectSchedulerError waits, bounded, for kube-scheduler's log line of
// its error for pod that says message, and returns it.
func expectSchedulerError(ctx context.Context, pod *corev1.Pod, message string) string {
	ginkgo.GinkgoHelper()
	var found string
	who := fmt.Sprintf("pod=%q", pod.Namespace+"/"+pod.Name)
	gomega.Eventually(ctx, func(ctx context.Context) bool {
		for _, l := range strings.Split(schedulerLog(ctx, pod.CreationTimestamp), "\n") {
			if strings.Contains(l, schedulerErrorLine) && strings.Contains(l, who) && strings.Contains(l, message) {
				found = l
				return true
			}
		}
		return false
	}).WithTimeout(logTimeout).Should(gomega.BeTrue(), "kube-scheduler's log has %q for %s saying %q", schedulerErrorLine, who, message)
	return found
}

// schedulerErrorLine is how kube-scheduler logs an error status of a pod's
// scheduling attempt (handleSchedulingFailure, schedule_one.go, 1.33-1.38).
const schedulerErrorLine = "Error scheduling pod; retrying"
