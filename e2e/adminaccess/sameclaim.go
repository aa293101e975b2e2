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

	// The two refusals are started together, on devices of their own, so
	// that one window watches both claims stay unallocated.
	type shape struct {
		what  string
		index int
		cause string // what the allocator logs for the later request
		claim *resourceapi.ResourceClaim
		pod   *corev1.Pod
	}
	shapes := []*shape{
		{what: "an admin-access request is refused the device an ordinary request of the same claim takes", index: 2, cause: release.CauseInUseInClaim},
		{what: "an ordinary request is refused the device an admin-access request of the same claim takes", index: 1, cause: release.CauseInUse},
	}
	for i, sh := range shapes {
		ordinary, admin := builder.Request(builder.DeviceIndex(sh.index)), builder.Request(builder.AdminAccess(), builder.DeviceIndex(sh.index))
		if i == 0 {
			sh.claim, sh.pod = start(ordinary, admin)
		} else {
			sh.claim, sh.pod = start(admin, ordinary)
		}
	}
	var refusedClaims []string
	for _, sh := range shapes {
		ginkgo.By(sh.what)
		device := poolDevice(node, contract.DeviceName(sh.index))
		got, refused := allocatedOrRefused(ctx, b, sh.pod, sh.claim.Name)
		switch {
		case declared && got != nil:
			gomega.Expect(given(got)).To(gomega.Equal([]string{builder.RequestNameAt(0) + "=" + device, builder.RequestNameAt(1) + "=" + device}),
				"%s is declared for Kubernetes %s: claim %s should get device %s for both requests", defect.Issue, env.Rel.Minor, sh.claim.Name, device)
			twice = append(twice, fmt.Sprintf("claim %s: %s", sh.claim.Name, strings.Join(given(got), ", ")))
		case declared:
			framework.Failf("%s; kube-scheduler refused pod %s: %s", defect.NotReproduced(env.Rel.Minor, allocator), sh.pod.Name, refused)
		case got != nil:
			framework.Failf("claim %s was allocated device %s for both of its requests (%s allocator): %v; %s",
				sh.claim.Name, device, allocator, given(got), sh.what)
		default:
			if schedulerLogReachable() {
				expectAllocatorLogged(ctx, sh.pod, device, sh.cause, sh.what)
			}
			refusedClaims = append(refusedClaims, sh.claim.Name)
		}
	}
	if len(refusedClaims) > 0 {
		expectStaysUnallocated(ctx, b, "within one claim no device is allocated twice", refusedClaims...)
	}
	for _, sh := range shapes {
		deletePod(ctx, sh.pod)
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
