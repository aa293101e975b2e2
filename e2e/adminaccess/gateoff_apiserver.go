// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// The specs of kube-apiserver as the only component with DRAAdminAccess, and
// as the only one without it (the move helpers are in gatemoves.go).

var _ = framework.Describe("With DRAAdminAccess on in kube-apiserver only", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("api-only")
	inProfile(f, "apiserver-only")

	it("stores admin-access claims and templates that no other component acts on; ordinary pods still run", ginkgo.Label("skew"), kep("every component checks the gate: an apiserver alone cannot grant admin access"), func(ctx context.Context) {
		e := envOf(ctx)
		requireGateSwitching(ctx)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "kube-apiserver (gate on) keeps the field")
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(tmpl.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess).To(gomega.HaveValue(gomega.BeTrue()))

		ginkgo.By("kube-controller-manager: the template's pod gets no claim, and is told why")
		fromTemplate, err := b.CreatePod(ctx, b.Pod(builder.FromTemplate(tmpl)))
		framework.ExpectNoError(err)
		expectPodEvent(ctx, fromTemplate, allocateTimeout, controllerGateOffEvent(e.Rel, tmpl))

		ginkgo.By("kube-scheduler: the claim's pod is not scheduled, with the allocator's admin-access error")
		withClaim, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		want := e.Rel.SchedulerGateOffMessage(f.Namespace.Name, claim.Name, builder.RequestName)
		expectPodEvent(ctx, withClaim, allocateTimeout, failedScheduling(want))
		expectStaysUnallocated(ctx, b, "a scheduler without the gate never allocates admin access", claim.Name)
		gomega.Expect(claimsIn(ctx, b)).To(gomega.HaveLen(1), "only the claim made by hand exists")
		for _, p := range []*corev1.Pod{fromTemplate, withClaim} {
			gomega.Expect(snapshot(ctx, p).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", p.Name)
		}

		ginkgo.By("an ordinary claim is allocated and its pod runs")
		_, _, vars := runOn(ctx, b, anyWorker(ctx))
		gomega.Expect(vars).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"))
	})
})

var _ = framework.Describe("With DRAAdminAccess off in kube-apiserver only", ginkgo.Ordered, framework.WithSerial(), framework.WithDisruptive(), func() {
	f := newFramework("api-off")

	it("drops adminAccess from new claims and templates, and keeps it on those that had it, also in the allocation of an existing admin-access claim", ginkgo.Label("skew"), kep("an apiserver without the gate drops the field from new objects and keeps it on existing ones"), func(ctx context.Context) {
		e := envOf(ctx)
		ginkgo.AddReportEntry(report.ProfileEntry, "apiserver-off", ginkgo.ReportEntryVisibilityNever)
		requireGateSwitching(ctx)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		node := anyWorker(ctx)
		holder, held, _ := runOn(ctx, b, node, builder.DeviceIndex(3))
		holderBefore := snapshot(ctx, holder)
		existing, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err)
		existingTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err)
		ginkgo.DeferCleanup(inEnv(func(ctx context.Context) { moveTo(ctx, e.Prof.Name) }), ginkgo.NodeTimeout(restoreTimeout))
		moveTo(ctx, "apiserver-off")

		ginkgo.By("a new admin-access claim loses the field without an error")
		fresh, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "the release drops the field silently")
		gomega.Expect(observe.RequestsAdminAccess(fresh)).To(gomega.BeFalse(), "stored without adminAccess")
		pod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(fresh)), node))
		framework.ExpectNoError(err)
		waiting := []waitingPod{{pod, fresh.Name}}

		ginkgo.By("a new admin-access template loses the field the same way")
		freshTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "the release drops the field silently")
		gomega.Expect(observe.RequestsAdminAccessFields(freshTmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "template %s's requests[].adminAccess as stored", freshTmpl.Name)

		ginkgo.By("the field goes before any label is looked at: in a namespace without the label both are stored, without it")
		bare, err := f.CreateNamespace(ctx, "api-off-unlabelled", nil)
		framework.ExpectNoError(err)
		ub := newBuilder(ctx, f)
		ub.Namespace = bare.Name
		unlabelledClaim, err := ub.CreateClaim(ctx, ub.Claim(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "an admin-access claim in namespace %s, which has no %s label, with kube-apiserver's gate off", bare.Name, e.Rel.AdminLabel)
		gomega.Expect(observe.RequestsAdminAccessFields(unlabelledClaim.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "claim %s's requests[].adminAccess as stored", unlabelledClaim.Name)
		unlabelledTmpl, err := ub.CreateTemplate(ctx, ub.Template(builder.AdminAccess(), builder.DeviceIndex(3)))
		framework.ExpectNoError(err, "an admin-access template in namespace %s, which has no %s label, with kube-apiserver's gate off", bare.Name, e.Rel.AdminLabel)
		gomega.Expect(observe.RequestsAdminAccessFields(unlabelledTmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "template %s's requests[].adminAccess as stored", unlabelledTmpl.Name)

		ginkgo.By("pods from either template get ordinary claims: the old template keeps the field, but the claim made from it is a new object")
		for _, tmpl := range []*resourceapi.ResourceClaimTemplate{freshTmpl, existingTmpl} {
			p, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.FromTemplate(tmpl)), node))
			framework.ExpectNoError(err)
			podsWithClaims(ctx, []*corev1.Pod{p})
			made := podClaimName(ctx, p)
			claim, err := b.GetClaim(ctx, made)
			framework.ExpectNoError(err)
			gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeFalse(), "claim %s made from template %s is stored without adminAccess", made, tmpl.Name)
			waiting = append(waiting, waitingPod{p, made})
		}

		ginkgo.By("none of these ordinary claims gets the device in use, and their pods wait")
		expectUnschedulable(ctx, b, fmt.Sprintf("as ordinary claims they cannot have the device %s holds", holder.Name), waiting...)

		// kube-scheduler, its gate on, allocates the claim that asked while
		// the gate was on; kube-apiserver keeps adminAccess in the status it
		// writes because the stored claim already uses the field
		// (dropDisabledDRAAdminAccess(Status)Fields, 1.33 to 1.35: nothing
		// is dropped from a claim whose spec or status has it).
		ginkgo.By("the admin-access claim made before is allocated with admin access: the device in use, adminAccess true in its status")
		existingPod, err := b.CreatePod(ctx, builder.OnNode(b.Pod(builder.UsingClaim(existing)), node))
		framework.ExpectNoError(err)
		allocated := expectAdminAllocated(ctx, b, existingPod, existing.Name)
		gomega.Expect(observe.AllocatedDevices(allocated)).To(gomega.Equal(observe.AllocatedDevices(held)), "claim %s gets the device pod %s holds", existing.Name, holder.Name)
		gomega.Expect(observe.AdminAccessResults(allocated)).To(gomega.Equal([]bool{true}),
			"claim %s's status.allocation.devices.results[].adminAccess as kube-apiserver (gate off) stored kube-scheduler's write", existing.Name)
		gomega.Expect(expectRunning(ctx, b, existingPod)).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"), "pod %s's container, from the driver", existingPod.Name)
		expectUndisturbed(ctx, holder, holderBefore)

		ginkgo.By("the objects made before keep the field, also through an update")
		storedTmpl, err := b.DRA.ResourceClaimTemplates(existingTmpl.Namespace).Get(ctx, existingTmpl.Name, metav1.GetOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccessFields(storedTmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"true"}), "template %s, made with the gate on, as stored", storedTmpl.Name)
		stored, err := b.GetClaim(ctx, existing.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(stored)).To(gomega.BeTrue(), "claim %s, stored while the gate was on, must keep adminAccess", stored.Name)
		stored.Labels = map[string]string{"touched": "yes"}
		updated, err := e.DRA.ResourceClaims(stored.Namespace).Update(ctx, stored, metav1.UpdateOptions{})
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(updated)).To(gomega.BeTrue(), "an existing value survives updates")
	})
})
