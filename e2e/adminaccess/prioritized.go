// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/expect"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// A prioritized list (KEP-4816, firstAvailable) beside admin access. A
// subrequest has no adminAccess field, so a claim that mixes them carries
// admin access in an exact request of its own; kube-apiserver must authorize
// that request at its own index, and the allocator must satisfy the list in
// its order and the admin request with admin access.
//
// Serial: the list's second subrequest takes any free device of the node.
var _ = framework.Describe("Admin access beside a prioritized list", ginkgo.Label("prioritized"), framework.WithSerial(), func() {
	f := newFramework("prioritized")
	itEach(f, nil, prioritizedPromises, nil)
})

// prioritizedPromises are the group's specs as bodies, so that the
// allocators group runs them again under each other implementation with
// the prioritized list; they use the bundled driver's own devices.
var prioritizedPromises = []featurePromise{
	{text: "authorizes and allocates an admin-access request beside a firstAvailable list", kep: "admin access is authorized and allocated per request, beside a prioritized list", run: adminBesideFirstAvailable},
}

func adminBesideFirstAvailable(ctx context.Context, f *framework.Framework, _ *featureDriver, seen func(context.Context)) {
	e := envOf(ctx)
	require(ctx, release.NeedPrioritizedList, nil)
	b := newBuilder(ctx, f)
	node := anyWorker(ctx)
	// sub-0 asks for a device no node has, so the list must fall to sub-1.
	list := [][]builder.RequestOption{{builder.DeviceIndex(e.Driver.Devices + 7)}, {builder.NotDeviceIndex(0)}}
	admin := builder.Request(builder.AdminAccess(), builder.DeviceIndex(0))

	ginkgo.By("without the namespace label the claim is denied at spec.devices.requests[1].adminAccess")
	_, err := b.CreateClaim(ctx, b.ClaimFirstAvailable(list, admin))
	gomega.Expect(err).To(expect.MatchForbiddenAt(e.Rel.AdminAccessFieldPath(1), e.Rel.AdminAccessDenial()))

	ginkgo.By("with the label it is stored, and allocated: the list's second subrequest, and device 0 with admin access")
	labelForAdmin(ctx, f.Namespace.Name)
	created, err := b.CreateClaim(ctx, b.ClaimFirstAvailable(list, admin))
	framework.ExpectNoError(err)
	requests := []string{builder.RequestNameAt(0), builder.RequestNameAt(1)}
	pod, err := b.CreatePod(ctx, builder.OnNode(b.ContainerPerRequest(builder.UsingClaim(created), requests...), node))
	framework.ExpectNoError(err)
	vars := expectContainersRunning(ctx, b, pod)
	allocated := allocatedClaim(ctx, b, created.Name)
	sub := requests[0] + "/" + builder.SubRequestNameAt(1)
	gomega.Expect(resultsByRequest(allocated)).To(gomega.Equal(map[string]bool{sub: false, requests[1]: true}),
		"status.allocation.devices.results[].request and adminAccess of claim %s", allocated.Name)
	for _, r := range allocated.Status.Allocation.Devices.Results {
		if r.Request == requests[1] {
			gomega.Expect(r.Device).To(gomega.Equal(contract.DeviceName(0)), "the admin-access request's device")
		} else {
			gomega.Expect(r.Device).NotTo(gomega.Equal(contract.DeviceName(0)), "the list's sub-1 excludes device 0")
		}
	}
	gomega.Expect(vars[requests[0]]).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"), "container of the prioritized list")
	gomega.Expect(vars[requests[1]]).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"), "container of the admin-access request")
	gomega.Expect(vars[requests[1]]).To(gomega.HaveKeyWithValue(contract.DeviceEnv(contract.DeviceName(0)), string(allocated.UID)))
	if seen != nil {
		seen(ctx)
	}
}
