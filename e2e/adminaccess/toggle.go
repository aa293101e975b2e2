// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Turning the gate off and on again in every component (the move helpers are
// in gatemoves.go).

var _ = framework.Describe("Turning DRAAdminAccess off and on again", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), ginkgo.Label("toggle"), func() {
	f := newFramework("toggle")

	it("keeps admin-access pods running across off and on, and schedules the pods kept Pending once it is back", kep("disabling and re-enabling the feature never breaks running workloads (rollout and rollback)"), func(ctx context.Context) {
		e := envOf(ctx)
		requireGateSwitching(ctx)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		running, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		gomega.Expect(expectRunning(ctx, b, running)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		before := snapshot(ctx, running)

		ginkgo.DeferCleanup(inEnv(func(ctx context.Context) { moveTo(ctx, e.Prof.Name) }), ginkgo.NodeTimeout(restoreTimeout))
		moveToProfile(ctx, controlPlaneOff())
		expectUndisturbed(ctx, running, before)

		ginkgo.By("while off: new admin-access claims lose the field, and template pods wait")
		fresh, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(fresh)).To(gomega.BeFalse())
		// The template was stored while the gate was on and keeps its field.
		waiting, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, waiting, allocateTimeout, controllerGateOffEvent(e.Rel, tmpl))
		gomega.Expect(snapshot(ctx, waiting).Phase).To(gomega.Equal(corev1.PodPending))

		ginkgo.By("back on: the waiting pod gets its claim and runs; the first pod never noticed")
		moveTo(ctx, e.Prof.Name)
		gomega.Expect(expectRunning(ctx, b, waiting)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"))
		expectUndisturbed(ctx, running, before)
	})
})
