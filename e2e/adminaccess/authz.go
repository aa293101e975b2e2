// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/expect"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// createAdminObjects tries both kinds of object that can ask for admin access.
func createAdminObjects(ctx context.Context, b *builder.Builder) (claimErr, templateErr error) {
	_, claimErr = b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
	_, templateErr = b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
	return
}

// The parallel specs are handed out in order, and this group's spec about
// removing the label (a pod's whole life twice and a 15 s window, about 45 s)
// is the longest of them: the group goes first and that spec first in it, so
// the other process runs everything else meanwhile. Last in line, it kept the
// other process idle for 20 s.
var _ = framework.Describe("Admin access authorization", ginkgo.Label("authz"), ginkgo.SpecPriority(1), func() {
	f := newAnyDriverFramework("authz")

	it("keeps admin-access claims made before the label was removed working, and denies new ones until it is back", kep("removing the label denies new, keeps existing claims; a granted allocation is never re-checked"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		claim, pod, before := runGrantedAdminPod(ctx, b)

		ginkgo.By("the label goes: new admin-access objects are denied, the running pod and its allocation stay")
		setNamespaceLabel(ctx, f.Namespace.Name, e.Rel.AdminLabel, nil)
		claimErr, templateErr := createAdminObjects(ctx, b)
		gomega.Expect(claimErr).To(denial(e.Rel), "a new claim after the label is gone")
		gomega.Expect(templateErr).To(denial(e.Rel))
		expectUndisturbed(ctx, pod, before)
		stored, err := b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.AdminAccessResults(stored)).To(gomega.Equal([]bool{true}), "the existing allocation keeps admin access")

		// Each of these is a status write of a claim that keeps its admin
		// allocation, in a namespace without the label: kube-apiserver must
		// not check the grant again.
		ginkgo.By("a second pod uses the claim while unlabelled: kube-scheduler reserves the allocated claim for it too, the admin allocation unchanged")
		second, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		expectAdminAccessSeen(ctx, second, builder.WorkloadContainer, expectRunning(ctx, b, second), true, "a second user of the claim")
		shared, err := b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(reservedFor(shared)).To(gomega.ConsistOf(pod.Name, second.Name), "status.reservedFor of claim %s", claim.Name)
		gomega.Expect(observe.AllocatedDevices(shared)).To(gomega.Equal(observe.AllocatedDevices(stored)), "the same allocation")
		gomega.Expect(observe.AdminAccessResults(shared)).To(gomega.Equal([]bool{true}))
		secondBefore := snapshot(ctx, second)

		ginkgo.By("the first pod goes: kube-controller-manager takes it out of reservedFor and the claim stays allocated, with admin access, for the second")
		deletePod(ctx, pod)
		gomega.Eventually(ctx, func(ctx context.Context) ([]string, error) {
			c, err := b.GetClaim(ctx, claim.Name)
			if err != nil {
				return nil, err
			}
			return reservedFor(c), nil
		}).WithTimeout(allocateTimeout).Should(gomega.Equal([]string{second.Name}), "status.reservedFor of claim %s after pod %s is gone", claim.Name, pod.Name)
		kept, err := b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.AllocatedDevices(kept)).To(gomega.Equal(observe.AllocatedDevices(stored)), "claim %s's allocation", claim.Name)
		gomega.Expect(observe.AdminAccessResults(kept)).To(gomega.Equal([]bool{true}))
		expectUndisturbed(ctx, second, secondBefore)

		ginkgo.By("the last pod goes: reservedFor empties and kube-controller-manager deallocates the claim without being refused")
		deletePod(ctx, second)
		expectDeallocated(ctx, b, claim.Name)

		ginkgo.By("while unlabelled, the scheduler may not newly grant admin access to the same claim: the pod waits with the apiserver's denial")
		waiting, err := b.CreatePod(ctx, b.Pod(builder.UsingClaim(claim)))
		framework.ExpectNoError(err)
		refused := e.Rel.AdminAccessStatusFieldPath(0) + ": Forbidden: " + e.Rel.AdminAccessDenial()
		expectPodEvent(ctx, waiting, allocateTimeout, failedScheduling(refused),
			"kube-scheduler's status update is authorized like any other")
		expectStaysUnallocated(ctx, b, "the denied allocation must not be stored", claim.Name)
		gomega.Expect(snapshot(ctx, waiting).Phase).To(gomega.Equal(corev1.PodPending))

		ginkgo.By("the label is back: the waiting pod gets admin access, and the claim's whole life works again")
		labelForAdmin(ctx, f.Namespace.Name)
		expectAdminAccessSeen(ctx, waiting, builder.WorkloadContainer, expectRunning(ctx, b, waiting), true, "the pod that waited for the label")
		stored = allocatedClaim(ctx, b, claim.Name)
		gomega.Expect(observe.AdminAccessResults(stored)).To(gomega.Equal([]bool{true}))
		deletePod(ctx, waiting)
		expectDeallocated(ctx, b, claim.Name)
		deleteClaim(ctx, b, claim)
	})

	// kube-controller-manager makes a template's claim as the pod comes,
	// so a template made while the namespace was labelled is checked again
	// for each pod: once the label is gone its new claims are denied, the
	// claims it made before keep their pods running, and the pod waiting
	// gets its claim once the label is back.
	it("denies new claims from an admin-access template once the label is removed, keeps the one it made running, and makes the claim once the label is back", kep("removing the label denies new, keeps existing claims; a granted allocation is never re-checked"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		labelForAdmin(ctx, f.Namespace.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		first := startFromTemplate(ctx, b, tmpl, 1)[0]
		expectAdminAccessSeen(ctx, first, builder.WorkloadContainer, expectRunning(ctx, b, first), true, "the template's pod while labelled")
		before := snapshot(ctx, first)
		made := podClaim(ctx, b, first)

		ginkgo.By("the label goes: the template's next pod gets no claim, and is told kube-apiserver's denial")
		setNamespaceLabel(ctx, f.Namespace.Name, e.Rel.AdminLabel, nil)
		waiting := startFromTemplate(ctx, b, tmpl, 1)[0]
		expectPodEvent(ctx, waiting, allocateTimeout, claimCreationDenied(e.Rel, tmpl),
			"kube-controller-manager reports kube-apiserver's denial of the claim from template %s on pod %s", tmpl.Name, waiting.Name)
		gomega.Expect(claimsIn(ctx, b)).To(gomega.HaveLen(1), "only claim %s, made while labelled, exists in %s", made.Name, f.Namespace.Name)
		gomega.Expect(snapshot(ctx, waiting).Phase).To(gomega.Equal(corev1.PodPending), "pod %s", waiting.Name)
		expectUndisturbed(ctx, first, before)
		kept, err := b.GetClaim(ctx, made.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.AdminAccessResults(kept)).To(gomega.Equal([]bool{true}), "claim %s keeps its admin allocation", made.Name)

		ginkgo.By("the label is back: the controller's retry makes the waiting pod's claim, with admin access")
		labelForAdmin(ctx, f.Namespace.Name)
		expectAdminAccessSeen(ctx, waiting, builder.WorkloadContainer, expectRunning(ctx, b, waiting), true, "the template's pod that waited for the label")
		gomega.Expect(observe.AdminAccessResults(podClaim(ctx, b, waiting))).To(gomega.Equal([]bool{true}))
	})

	it("denies adminAccess in claims and templates of a namespace without the admin label, and allows it once labelled", kep("admin access only in namespaces labelled by an admin"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		claimErr, templateErr := createAdminObjects(ctx, b)
		gomega.Expect(claimErr).To(denial(e.Rel), "ResourceClaim in an unlabelled namespace")
		gomega.Expect(templateErr).To(denial(e.Rel), "ResourceClaimTemplate in an unlabelled namespace")

		labelForAdmin(ctx, f.Namespace.Name)
		claim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err, "ResourceClaim after labelling %s", e.Rel.AdminLabel)
		gomega.Expect(observe.RequestsAdminAccess(claim)).To(gomega.BeTrue(), "the stored claim keeps adminAccess")
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err, "ResourceClaimTemplate after labelling")
		gomega.Expect(tmpl.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess).To(gomega.HaveValue(gomega.BeTrue()))
	})

	it("accepts an explicit adminAccess: false without the admin label, and allocates without admin access", kep("adminAccess unset or false asks for no admin access and needs no label"), func(ctx context.Context) {
		b := newBuilder(ctx, f)
		claim, err := b.CreateClaim(ctx, b.Claim(builder.NoAdminAccess()))
		framework.ExpectNoError(err, "a ResourceClaim with adminAccess: false in an unlabelled namespace")
		gomega.Expect(observe.RequestsAdminAccessFields(claim.Spec.Devices)).To(gomega.Equal([]string{"false"}), "claim %s's requests[].adminAccess as stored", claim.Name)
		tmpl, err := b.CreateTemplate(ctx, b.Template(builder.NoAdminAccess()))
		framework.ExpectNoError(err, "a ResourceClaimTemplate with adminAccess: false in an unlabelled namespace")
		gomega.Expect(observe.RequestsAdminAccessFields(tmpl.Spec.Spec.Devices)).To(gomega.Equal([]string{"false"}), "template %s's requests[].adminAccess as stored", tmpl.Name)

		ginkgo.By("pods using the claim and the template get ordinary allocations")
		for _, pc := range []builder.PodClaim{builder.UsingClaim(claim), builder.FromTemplate(tmpl)} {
			pod, err := b.CreatePod(ctx, b.Pod(pc))
			framework.ExpectNoError(err)
			expectAdminAccessSeen(ctx, pod, builder.WorkloadContainer, expectRunning(ctx, b, pod), false, "pod "+pod.Name)
			allocated := podClaim(ctx, b, pod)
			gomega.Expect(observe.AdminAccessResults(allocated)).To(gomega.Equal([]bool{false}), "status.allocation.devices.results[].adminAccess of claim %s", allocated.Name)
			gomega.Expect(observe.RequestsAdminAccessFields(allocated.Spec.Devices)).To(gomega.Equal([]string{"false"}), "claim %s's requests[].adminAccess as stored", allocated.Name)
		}
	})

	for _, value := range []string{"True", "yes", "1", ""} {
		it(fmt.Sprintf("does not authorize with the label value %q (only exactly \"true\" does)", value), kep("only the exact label value \"true\" authorizes"), func(ctx context.Context) {
			e := envOf(ctx)
			setNamespaceLabel(ctx, f.Namespace.Name, e.Rel.AdminLabel, str(value))
			claimErr, templateErr := createAdminObjects(ctx, newBuilder(ctx, f))
			gomega.Expect(claimErr).To(denial(e.Rel))
			gomega.Expect(templateErr).To(denial(e.Rel))
		})
	}

	it("does not authorize with the other release's label key alone", kep("the label key of the release authorizes (1.34 renamed it)"), func(ctx context.Context) {
		e := envOf(ctx)
		// 1.33 honours resource.k8s.io/admin-access; 1.34 renamed it to
		// resource.kubernetes.io/admin-access and stopped honouring the old one.
		setNamespaceLabel(ctx, f.Namespace.Name, e.Rel.StaleLabel, str("true"))
		claimErr, templateErr := createAdminObjects(ctx, newBuilder(ctx, f))
		gomega.Expect(claimErr).To(denial(e.Rel), "only %s authorizes on %s", e.Rel.AdminLabel, e.Rel.Minor)
		gomega.Expect(templateErr).To(denial(e.Rel))
	})

	it("gives a namespace admin who cannot change namespaces neither the label nor admin access", kep("users who cannot label namespaces cannot obtain admin access"), func(ctx context.Context) {
		e := envOf(ctx)
		user := namespaceAdmin(ctx, f)
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{e.Rel.AdminLabel: "true"}}})
		_, err := user.Client.CoreV1().Namespaces().Patch(ctx, f.Namespace.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "labelling the namespace must be forbidden to the user, got %v", err)
		claimErr, templateErr := createAdminObjects(ctx, user)
		gomega.Expect(claimErr).To(denial(e.Rel))
		gomega.Expect(templateErr).To(denial(e.Rel))
		// The same user may still make ordinary claims: the denial is about admin access.
		_, err = user.CreateClaim(ctx, user.Claim())
		framework.ExpectNoError(err, "an ordinary claim by the namespace admin")
	})

	it("denies a status update that newly grants adminAccess in a namespace without the label", kep("status updates granting admin access are authorized like creates"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		claim, err := b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err)
		nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		framework.ExpectNoError(err)
		node := nodes.Items[0].Name
		err = patchAllocation(ctx, claim, map[string]any{
			"request": builder.RequestName, "driver": e.Driver.DriverName, "pool": node, "device": contract.DeviceName(0), "adminAccess": true})
		gomega.Expect(err).To(expect.MatchForbiddenAt(e.Rel.AdminAccessStatusFieldPath(0), e.Rel.AdminAccessDenial()))
		stored, err := b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "the denied status must not be stored")
	})

	it("stores no allocation that a create or an update of the claim itself carries, for any user, labelled or not", kep("a create or an update of the claim itself never stores an allocation: admin access is granted only through the status"), func(ctx context.Context) {
		e := envOf(ctx)
		admin := newBuilder(ctx, f)
		users := []struct {
			name string
			b    *builder.Builder
		}{{"cluster-admin", admin}, {"namespace-admin", namespaceAdmin(ctx, f)}}
		nodes := workers(ctx)
		for i, labelled := range []bool{false, true} {
			if labelled {
				labelForAdmin(ctx, f.Namespace.Name)
			}
			for j, u := range users {
				g := sweepGrant{driver: e.Driver.DriverName, pool: nodes[(i+j)%len(nodes)], device: contract.DeviceName((2*i + j) % contract.PlainDevices)}
				what := fmt.Sprintf("as %s, namespace labelled: %t, granting %s", u.name, labelled, g)
				made := u.b.Claim()
				// The two users' builders name their claims alike.
				made.Name = fmt.Sprintf("with-status-%d-%d", i, j)
				made.Status.Allocation = g.allocation()
				created, err := u.b.CreateClaim(ctx, made)
				framework.ExpectNoError(err, "a create of an ordinary claim with a status, %s: kube-apiserver takes it and drops the status", what)
				gomega.Expect(created.Status.Allocation).To(gomega.BeNil(), "claim %s as created %s", created.Name, what)
				stored, err := u.b.GetClaim(ctx, created.Name)
				framework.ExpectNoError(err)
				gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "claim %s as stored after its create %s", stored.Name, what)

				stored.Status.Allocation = g.allocation()
				updated, err := u.b.DRA.ResourceClaims(stored.Namespace).Update(ctx, stored, metav1.UpdateOptions{})
				framework.ExpectNoError(err, "an update of claim %s that adds a status, %s: kube-apiserver takes it and keeps the stored status", stored.Name, what)
				gomega.Expect(updated.Status.Allocation).To(gomega.BeNil(), "claim %s as updated %s", updated.Name, what)
				stored, err = u.b.GetClaim(ctx, created.Name)
				framework.ExpectNoError(err)
				gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "claim %s as stored after its update %s", stored.Name, what)
			}
		}
	})

	it("checks every request of a claim, each at its own field path", kep("admin access only in namespaces labelled by an admin, for every request of a claim or template"), func(ctx context.Context) {
		e := envOf(ctx)
		// Its requests aim at devices by the bundled driver's index attribute.
		requireBundledDriver(ctx)
		b := newBuilder(ctx, f)
		// The admin request aims at device 0, which it may share; the ordinary
		// one keeps off it, so the spec never waits for a device another
		// spec holds, and the two requests never land on one device.
		ordinary := builder.Request(builder.NotDeviceIndex(0))
		admin := builder.Request(builder.AdminAccess(), builder.DeviceIndex(0))
		shapes := []struct {
			name     string
			requests [][]builder.RequestOption
			deniedAt int // the first request asking for admin access
		}{
			{"ordinary, admin", [][]builder.RequestOption{ordinary, admin}, 1},
			{"ordinary, ordinary, admin", [][]builder.RequestOption{ordinary, ordinary, admin}, 2},
			{"ordinary, admin, admin", [][]builder.RequestOption{ordinary, admin, admin}, 1},
		}
		for _, shape := range shapes {
			path := e.Rel.AdminAccessFieldPath(shape.deniedAt)
			_, err := b.CreateClaim(ctx, b.ClaimOf(shape.requests...))
			gomega.Expect(err).To(expect.MatchForbiddenAt(path, e.Rel.AdminAccessDenial()), "ResourceClaim with requests %s", shape.name)
			gomega.Expect(expect.CauseFields(err)).To(gomega.Equal([]string{path}), "one cause, at the first admin request (%s)", shape.name)
			_, err = b.CreateTemplate(ctx, b.TemplateOf(shape.requests...))
			gomega.Expect(err).To(expect.MatchForbiddenAt(path, e.Rel.AdminAccessDenial()), "ResourceClaimTemplate with requests %s", shape.name)
			gomega.Expect(expect.CauseFields(err)).To(gomega.Equal([]string{path}), "template: one cause (%s)", shape.name)
		}

		labelForAdmin(ctx, f.Namespace.Name)
		claim, err := b.CreateClaim(ctx, b.ClaimOf(ordinary, admin))
		framework.ExpectNoError(err, "a mixed claim once the namespace is labelled")
		tmpl, err := b.CreateTemplate(ctx, b.TemplateOf(ordinary, admin))
		framework.ExpectNoError(err, "a mixed template once the namespace is labelled")
		gomega.Expect(tmpl.Spec.Spec.Devices.Requests[1].Exactly.AdminAccess).To(gomega.HaveValue(gomega.BeTrue()))
		requests := []string{builder.RequestNameAt(0), builder.RequestNameAt(1)}
		for _, pod := range []*corev1.Pod{
			b.ContainerPerRequest(builder.UsingClaim(claim), requests...),
			b.ContainerPerRequest(builder.FromTemplate(tmpl), requests...),
		} {
			_, err := b.CreatePod(ctx, pod)
			framework.ExpectNoError(err)
			vars := expectContainersRunning(ctx, b, pod)
			gomega.Expect(vars[requests[0]]).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "false"), "pod %s, container of the ordinary request", pod.Name)
			gomega.Expect(vars[requests[1]]).To(gomega.HaveKeyWithValue(contract.AdminAccessEnv, "true"), "pod %s, container of the admin request", pod.Name)
			allocated := podClaim(ctx, b, pod)
			gomega.Expect(resultsByRequest(allocated)).To(gomega.Equal(map[string]bool{requests[0]: false, requests[1]: true}),
				"status.allocation.devices.results[].adminAccess of claim %s", allocated.Name)
		}
	})

	it("denies a status update whose second result grants adminAccess, at results[1]", kep("status updates granting admin access are authorized like creates, for every result"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		claim, err := b.CreateClaim(ctx, b.ClaimOf(builder.Request(), builder.Request()))
		framework.ExpectNoError(err)
		node := anyWorker(ctx)
		result := func(i int, admin bool) map[string]any {
			return map[string]any{"request": builder.RequestNameAt(i), "driver": e.Driver.DriverName, "pool": node,
				"device": contract.DeviceName(i), "adminAccess": admin}
		}
		err = patchAllocation(ctx, claim, result(0, false), result(1, true))
		path := e.Rel.AdminAccessStatusFieldPath(1)
		gomega.Expect(err).To(expect.MatchForbiddenAt(path, e.Rel.AdminAccessDenial()))
		gomega.Expect(expect.CauseFields(err)).To(gomega.Equal([]string{path}))
		stored, err := b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "the denied status must not be stored")
	})

	it(fmt.Sprintf("denies every one of at least %d unauthorized attempts", sloAttempts), kep("SLO: 100% of unauthorized attempts are denied"), func(ctx context.Context) { unauthorizedSweep(ctx, f) })
})

// reservedFor lists the names of the consumers a claim is reserved for.
func reservedFor(c *resourceapi.ResourceClaim) []string {
	var out []string
	for _, r := range c.Status.ReservedFor {
		out = append(out, r.Name)
	}
	return out
}
