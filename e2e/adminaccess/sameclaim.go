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
	"github.com/kep5018/adminaccess-conformance/e2e/report"
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
// device in use ("Device in use"). 1.33's allocator skips both checks for
// admin access, and gives the device twice: the release table declares that.
//
// Three shapes, each on devices of its own: two admin-access requests; an
// ordinary request, then an admin-access one for the same device; and the
// other way round.
func oneDevicePerClaim(ctx context.Context, f *framework.Framework) {
	b := newBuilder(f)
	node := anyWorker(ctx)
	labelForAdmin(ctx, f.Namespace.Name)
	allocator := env.Allocator()
	defect, declared := env.Rel.KnownDefect(release.DefectDeviceTwiceInClaim, allocator)
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
	// given is the device each request got, in request order.
	given := func(c *resourceapi.ResourceClaim) []string {
		var out []string
		for _, r := range c.Status.Allocation.Devices.Results {
			out = append(out, r.Request+"="+r.Pool+"/"+r.Device)
		}
		return out
	}

	ginkgo.By("two admin-access requests of one claim get two devices")
	claim, pod := start(builder.Request(builder.AdminAccess()), builder.Request(builder.AdminAccess()))
	got := expectAdminAllocated(ctx, b, pod, claim.Name)
	gomega.Expect(resultsByRequest(got)).To(gomega.Equal(map[string]bool{builder.RequestNameAt(0): true, builder.RequestNameAt(1): true}),
		"status.allocation.devices.results[].request and adminAccess of claim %s", claim.Name)
	devices := map[string]bool{}
	for _, r := range got.Status.Allocation.Devices.Results {
		devices[r.Pool+"/"+r.Device] = true
	}
	if declared {
		gomega.Expect(devices).To(gomega.HaveLen(1), "%s is declared for Kubernetes %s: claim %s's two admin-access requests should share one device, got %v", defect.Issue, env.Rel.Minor, claim.Name, given(got))
		twice = append(twice, fmt.Sprintf("claim %s: %s", claim.Name, strings.Join(given(got), ", ")))
	} else {
		gomega.Expect(devices).To(gomega.HaveLen(2), "claim %s's two admin-access requests must get two devices (%s allocator), got %v", claim.Name, allocator, given(got))
	}
	deletePod(ctx, pod)

	for _, shape := range []struct {
		what     string
		index    int
		requests [][]builder.RequestOption
		cause    string // what the allocator logs for the later request
	}{
		{"an admin-access request is refused the device an ordinary request of the same claim takes", 2,
			[][]builder.RequestOption{{builder.DeviceIndex(2)}, {builder.AdminAccess(), builder.DeviceIndex(2)}}, release.CauseInUseInClaim},
		{"an ordinary request is refused the device an admin-access request of the same claim takes", 1,
			[][]builder.RequestOption{{builder.AdminAccess(), builder.DeviceIndex(1)}, {builder.DeviceIndex(1)}}, release.CauseInUse},
	} {
		ginkgo.By(shape.what)
		device := poolDevice(node, contract.DeviceName(shape.index))
		claim, pod := start(shape.requests...)
		got, refused := allocatedOrRefused(ctx, b, pod, claim.Name)
		switch {
		case declared && got != nil:
			gomega.Expect(given(got)).To(gomega.Equal([]string{builder.RequestNameAt(0) + "=" + device, builder.RequestNameAt(1) + "=" + device}),
				"%s is declared for Kubernetes %s: claim %s should get device %s for both requests", defect.Issue, env.Rel.Minor, claim.Name, device)
			twice = append(twice, fmt.Sprintf("claim %s: %s", claim.Name, strings.Join(given(got), ", ")))
		case declared:
			framework.Failf("%s; kube-scheduler refused pod %s: %s", defect.NotReproduced(env.Rel.Minor, allocator), pod.Name, refused)
		case got != nil:
			framework.Failf("claim %s was allocated device %s for both of its requests (%s allocator): %v; %s",
				claim.Name, device, allocator, given(got), shape.what)
		default:
			if schedulerLogReachable() {
				expectAllocatorLogged(ctx, pod, device, shape.cause, shape.what)
			}
			expectStaysUnallocated(ctx, b, shape.what, claim.Name)
		}
		deletePod(ctx, pod)
	}
	if declared {
		stopWithVerdict(report.KnownDefectEntry, defect.Issue, defect.Verdict(fmt.Sprintf(
			"kube-scheduler's %s allocator gave %s for two requests of one claim: %s", allocator, release.CauseDeviceTwice, strings.Join(twice, "; "))))
	}
}

// schedulerLogReachable says whether kube-scheduler's log is the suite's
// to read, at the allocator's level: on the clusters it makes.
func schedulerLogReachable() bool {
	_, declared := env.Rel.DeclaredSkip(release.NeedNodeAccess, env.Mode())
	return !declared && env.Cluster != nil
}
