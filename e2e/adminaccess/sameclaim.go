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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Admin access reaches devices that other claims hold, not one that a
// request of its own claim takes: within a claim no device is used twice,
// with or without admin access (kubernetes/kubernetes#131269; a device twice
// in one claim makes an invalid CDI spec). From 1.34 every implementation
// tracks the devices it picks for the claim being allocated
// (allocatingDeviceForClaim) and passes over such a device for an
// admin-access request with "Device in use in same claim"; an ordinary
// request meets a device an admin-access request of the claim took as any
// device in use ("Device in use"). Each implementation makes both checks in
// two places: its candidate loop (allocateOne), which is all an ExactCount
// request meets before allocateDevice, and allocateDevice, which is the
// only one an allocationMode All request meets (its devices are known, so
// allocateOne hands each straight to allocateDevice, must=true). 1.33's
// allocator skips both checks for admin access and records no device an
// admin-access request picks, so it gives the device twice in every shape
// below: the release table declares that.
//
// Five shapes on one node, for any driver (a request for all of the
// node's devices needs no attribute to aim at one): two admin-access
// requests; an ordinary request for all devices, then an admin-access
// one; an admin-access request, then an ordinary one for all devices; and
// an ordinary or an admin-access request, then an admin-access one for all
// devices, which only allocateDevice's check refuses.
func oneDevicePerClaim(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	node := devicesNode(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	allocator := e.Allocator()
	defect, declared := e.Rel.KnownDefect(release.DefectDeviceTwiceInClaim, allocator)
	var twice []string // where the defect is declared: what each claim got

	// start creates the claim and a pod using it on the node.
	start := func(requests ...[]builder.RequestOption) (*resourceapi.ResourceClaim, *corev1.Pod) {
		ginkgo.GinkgoHelper()
		claim, err := b.CreateClaim(ctx, b.ClaimOf(requests...))
		framework.ExpectNoError(err)
		pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(claim)), node))
		framework.ExpectNoError(err)
		return claim, pod
	}

	ginkgo.By("two admin-access requests of one claim get two devices")
	if n := devicesOn(e, node); n < 2 {
		framework.Failf("node %s has %d device(s) of class %s: two admin-access requests of one claim need two", node, n, b.Class)
	}
	claim, pod := start(builder.Request(builder.AdminAccess()), builder.Request(builder.AdminAccess()))
	got := expectAdminAllocated(ctx, b, pod, claim.Name)
	gomega.Expect(resultsByRequest(got)).To(gomega.Equal(map[string]bool{builder.RequestNameAt(0): true, builder.RequestNameAt(1): true}),
		"status.allocation.devices.results[].request and adminAccess of claim %s", claim.Name)
	if declared {
		gomega.Expect(devicesTwice(got)).NotTo(gomega.BeEmpty(), "%s is declared for Kubernetes %s: claim %s's two admin-access requests should share one device, got %v", defect.Issue, e.Rel.Minor, claim.Name, resultsGiven(got))
		twice = append(twice, fmt.Sprintf("claim %s: %s", claim.Name, strings.Join(resultsGiven(got), ", ")))
	} else {
		gomega.Expect(devicesTwice(got)).To(gomega.BeEmpty(), "claim %s's two admin-access requests must get two devices (%s allocator), got %v", claim.Name, allocator, resultsGiven(got))
	}
	deletePod(ctx, pod)
	// Its claim goes too: an admin-access allocation holds no device, but an
	// allocator that wrongly counted it as in use would refuse the shapes
	// below for that reason, which, where kube-scheduler's log is out of
	// reach, would read the same as the refusal they check.
	deleteClaim(ctx, b, got)

	// A request for every device needs every device free of other claims:
	// kube-controller-manager releases the spec before's only after its
	// pods are gone (seen on 1.33: all four still held 2 s into this one).
	expectDevicesFree(ctx, b.DriverName, node)

	// A refused claim holds nothing, so its pod waits while the next shape
	// runs, and one window then watches all refused claims stay so; a claim
	// given a device twice (the declared defect) goes before the next.
	var refused []string
	var waiting []*corev1.Pod
	for _, sh := range []struct {
		what     string
		requests [][]builder.RequestOption
		cause    string // what the allocator logs for the later request
		one      int    // the request for one device: where 1.33 gives the device twice, its device is the one
	}{
		{"an admin-access request is refused every device an ordinary request of the same claim takes",
			[][]builder.RequestOption{{builder.AllDevices()}, {builder.AdminAccess()}}, release.CauseInUseInClaim, 1},
		{"an ordinary request for every device is refused the one an admin-access request of the same claim took",
			[][]builder.RequestOption{{builder.AdminAccess()}, {builder.AllDevices()}}, release.CauseInUse, 0},
		{"an admin-access request for every device is refused the one an ordinary request of the same claim took",
			[][]builder.RequestOption{{}, {builder.AllDevices(), builder.AdminAccess()}}, release.CauseInUseInClaim, 0},
		{"an admin-access request for every device is refused the one another admin-access request of the same claim took",
			[][]builder.RequestOption{{builder.AdminAccess()}, {builder.AllDevices(), builder.AdminAccess()}}, release.CauseInUseInClaim, 0},
	} {
		ginkgo.By(sh.what)
		claim, pod := start(sh.requests...)
		got, refusal := allocatedOrRefused(ctx, b, pod, claim.Name)
		switch {
		case declared && got != nil:
			// The defect exactly: the request for every device got all
			// of them, and the one device the other request got is the
			// only one named twice.
			all, one := builder.RequestNameAt(1-sh.one), builder.RequestNameAt(sh.one)
			gomega.Expect(devicesOf(got, all)).To(gomega.HaveLen(devicesOn(e, node)), "%s is declared for Kubernetes %s: claim %s's request %s for every device of %s should get all %d, got %v",
				defect.Issue, e.Rel.Minor, claim.Name, all, node, devicesOn(e, node), resultsGiven(got))
			gomega.Expect(devicesTwice(got)).To(gomega.Equal(devicesOf(got, one)), "%s is declared for Kubernetes %s: claim %s should get for both requests the device of request %s and no other twice, got %v",
				defect.Issue, e.Rel.Minor, claim.Name, one, resultsGiven(got))
			twice = append(twice, fmt.Sprintf("claim %s: %s", claim.Name, strings.Join(resultsGiven(got), ", ")))
			deletePod(ctx, pod)
			deleteClaim(ctx, b, got)
		case declared:
			framework.Failf("%s; kube-scheduler refused pod %s: %s", defect.NotReproduced(e.Rel.Minor, allocator), pod.Name, refusal)
		case got != nil:
			framework.Failf("claim %s was allocated devices %v for two of its requests (%s allocator): %v; %s",
				claim.Name, devicesTwice(got), allocator, resultsGiven(got), sh.what)
		default:
			if nodesReachable(e) {
				// Where the earlier request took every device, the later
				// one is refused each of them; else the one it took, which
				// the claim, unallocated, does not name.
				expectAllocatorLoggedOn(ctx, pod, nodeDevices(e, node), sh.one == 1, sh.cause, sh.what)
			}
			refused, waiting = append(refused, claim.Name), append(waiting, pod)
		}
	}
	if len(refused) > 0 {
		expectHeldThroughRetry(ctx, b, "within one claim no device is allocated twice", waiting, refused...)
	}
	for _, p := range waiting {
		deletePod(ctx, p)
	}
	if declared {
		stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
			"kube-scheduler's %s allocator gave %s: %s", allocator, release.CauseDeviceTwice, strings.Join(twice, "; "))))
	}
}

// devicesOf lists pool/device of each result of request in an allocated claim.
func devicesOf(c *resourceapi.ResourceClaim, request string) []string {
	var out []string
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.Request == request {
			out = append(out, r.Pool+"/"+r.Device)
		}
	}
	return out
}

// nodeDevices names the node's devices of the class, pool/device.
func nodeDevices(e *testenv.Env, node string) []string {
	var out []string
	if e.Vendor == nil {
		for i := 0; i < e.Driver.Devices; i++ {
			out = append(out, poolDevice(contract.SlotPool(node, specSlot), contract.DeviceName(i)))
		}
		return out
	}
	for _, d := range e.Vendor.Devices[node] {
		out = append(out, d.Pool+"/"+d.Name)
	}
	return out
}

// expectDevicesFree waits, bounded, until no claim holds a device of node
// other than with admin access.
func expectDevicesFree(ctx context.Context, driver, node string) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	mine := map[string]bool{}
	for _, d := range nodeDevices(e, node) {
		mine[d] = true
	}
	gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
		list, err := e.DRA.ResourceClaims("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var held []string
		for _, c := range list.Items {
			if c.Status.Allocation == nil {
				continue
			}
			for _, r := range c.Status.Allocation.Devices.Results {
				if d := r.Pool + "/" + r.Device; r.Driver == driver && mine[d] && (r.AdminAccess == nil || !*r.AdminAccess) {
					held = append(held, c.Namespace+"/"+c.Name+": "+d)
				}
			}
		}
		return held, nil
	}).WithTimeout(allocateTimeout).Should(gomega.BeEmpty(), "devices of node %s held by claims of earlier specs, which this spec needs free", node)
}
