// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
)

// "Requests asking for adminAccess contribute to the quota": the quota
// evaluator (pkg/quota/v1/evaluator/core/resource_claims.go, the same on
// every release here) never reads adminAccess. It charges a request's
// count against <class>.deviceclass.resource.k8s.io/devices, and for
// allocationMode All the most results an allocation can hold,
// AllocationResultsMaxSize (32), whatever the node has: the shapes
// monitoring uses (a DaemonSet's claim for All, a tool for several devices)
// are charged like any other. Admission charges at create against
// status.hard; the quota controller recounts with the same evaluator. No
// claim here gets a pod, so no device is touched: the group runs beside
// others, and with any driver.
var _ = framework.Describe("Admin access quota", ginkgo.Label("allocation"), func() {
	f := newAnyDriverFramework("quota")

	it("counts admin-access requests toward the device class's ResourceQuota exactly like ordinary ones", kep("requests asking for adminAccess contribute to the quota"), func(ctx context.Context) {
		e := envOf(ctx)
		b, q := classQuota(ctx, f, "one-device")
		q.limit(ctx, 1)

		ginkgo.By("an admin-access claim takes the one device the quota allows")
		first, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		// An apiserver with the gate off would drop the field and count an
		// ordinary claim: the stored claim must still ask for admin access.
		gomega.Expect(observe.RequestsAdminAccess(first)).To(gomega.BeTrue(), "claim %s was stored without adminAccess (kube-apiserver dropped the field: is its gate off?)", first.Name)
		_, err = b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		q.expectExceeded(err, "a second admin-access claim", 1, 1, 1)
		_, err = b.CreateClaim(ctx, b.Claim())
		q.expectExceeded(err, "an ordinary claim after an admin-access one", 1, 1, 1)

		// So far the count is admission's; the quota controller's own
		// count must agree while the admin-access claim exists.
		ginkgo.By("kube-controller-manager recounts the quota: the admin-access claim is counted there too")
		q.expectRecounted(ctx, 1, "claim "+first.Name)

		ginkgo.By("an ordinary claim takes it instead: now an admin-access claim is refused")
		framework.ExpectNoError(e.DRA.ResourceClaims(first.Namespace).Delete(ctx, first.Name, metav1.DeleteOptions{}))
		released := gomega.HaveField("Used", gomega.HaveKeyWithValue(q.key, quantityOf(0)))
		poll, recounts := q.status, 0
		if e.Rel.ClaimQuotaMayMissDeletes() {
			// This release's quota controller may miss the deletion until its
			// five-minute resync: have it recount instead, as it does whenever
			// a quota's hard limits change, while the claim is still counted.
			poll = func(ctx context.Context) (corev1.ResourceQuotaStatus, error) {
				st, err := q.status(ctx)
				if ok, _ := released.Match(st); err != nil || ok {
					return st, err
				}
				recounts++
				return st, q.recount(ctx, recounts)
			}
		}
		gomega.Eventually(ctx, poll).WithTimeout(allocateTimeout).WithPolling(time.Second).Should(released, "the deleted claim is released")
		framework.Logf("quota %s: the deleted claim released after %d recount(s)", q.name, recounts)
		_, err = b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err, "an ordinary claim within the quota")
		_, err = b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		q.expectExceeded(err, "an admin-access claim after an ordinary one", 1, 1, 1)
	})

	it("charges admin-access requests for count > 1 and allocationMode All like ordinary ones, at admission and in the controller's recount", kep("admin-access requests for several devices or for all of them contribute to the quota as ordinary ones do"), func(ctx context.Context) {
		b, q := classQuota(ctx, f, "devices")
		all := int64(resourceapi.AllocationResultsMaxSize)

		q.limit(ctx, 2)
		ginkgo.By("count 3 is charged 3: with 2 allowed, the admin-access claim is refused as the ordinary one is")
		for _, admin := range []bool{true, false} {
			_, err := b.CreateClaim(ctx, b.Claim(adminIf(admin, builder.Count(3))...))
			q.expectExceeded(err, fmt.Sprintf("a claim for 3 devices (adminAccess %t)", admin), 3, 0, 2)
		}

		q.limit(ctx, 3)
		ginkgo.By("with 3 allowed the admin-access claim for 3 is stored, and uses all 3")
		three, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.Count(3)))
		framework.ExpectNoError(err, "an admin-access claim for 3 devices within a quota of 3")
		gomega.Expect(observe.RequestsAdminAccess(three)).To(gomega.BeTrue(), "claim %s was stored without adminAccess (kube-apiserver dropped the field: is its gate off?)", three.Name)
		q.expectUsed(ctx, 3, "admission charged the admin-access claim for 3")

		ginkgo.By(fmt.Sprintf("allocationMode All is charged %d, whatever the node has: refused while 3 are used of 3", all))
		_, err = b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.AllDevices()))
		q.expectExceeded(err, "an admin-access claim for all devices", all, 3, 3)

		q.limit(ctx, 3+all)
		ginkgo.By(fmt.Sprintf("with %d allowed it is stored; then not one more device fits, admin or ordinary", 3+all))
		everything, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess(), builder.AllDevices()))
		framework.ExpectNoError(err, "an admin-access claim for all devices within a quota of %d", 3+all)
		gomega.Expect(observe.RequestsAdminAccess(everything)).To(gomega.BeTrue(), "claim %s's adminAccess as stored", everything.Name)
		q.expectUsed(ctx, 3+all, "admission charged the admin-access claim for all devices")
		for _, admin := range []bool{false, true} {
			_, err := b.CreateClaim(ctx, b.Claim(adminIf(admin)...))
			q.expectExceeded(err, fmt.Sprintf("a claim for 1 device (adminAccess %t)", admin), 1, 3+all, 3+all)
		}

		// So far every number is admission's; the controller's own count
		// of the claims that exist must agree.
		ginkgo.By("kube-controller-manager recounts the quota: both admin-access claims are charged there the same")
		q.expectRecounted(ctx, 3+all, fmt.Sprintf("claims %s (count 3) and %s (All)", three.Name, everything.Name))
	})
})

// quantityOf is n as kube-apiserver hands a quota's quantity back (parsed).
func quantityOf(n int64) resource.Quantity { return resource.MustParse(strconv.FormatInt(n, 10)) }

// adminIf adds admin access to opts when admin is true.
func adminIf(admin bool, opts ...builder.RequestOption) []builder.RequestOption {
	if admin {
		return append(opts, builder.AdminAccess())
	}
	return opts
}

// deviceQuota is one ResourceQuota on a class's devices.
type deviceQuota struct {
	namespace, name string
	key             corev1.ResourceName
	// b builds the claims that ask admission what it enforces (limit).
	b *builder.Builder
}

// classQuota is a builder for the spec's namespace, labelled for admin
// access, and the quota called name on the class's devices there
// (<class>.deviceclass.resource.k8s.io/devices on every release here); the
// quota is made by its first limit.
func classQuota(ctx context.Context, f *framework.Framework, name string) (*builder.Builder, deviceQuota) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	b := newBuilder(ctx, f)
	labelForAdmin(ctx, f.Namespace.Name)
	return b, deviceQuota{namespace: f.Namespace.Name, name: name, key: corev1.ResourceName(e.Driver.DeviceClass + corev1.ResourceClaimsPerClass), b: b}
}

func (q deviceQuota) status(ctx context.Context) (corev1.ResourceQuotaStatus, error) {
	e := envOf(ctx)
	got, err := e.Client.CoreV1().ResourceQuotas(q.namespace).Get(ctx, q.name, metav1.GetOptions{})
	if err != nil {
		return corev1.ResourceQuotaStatus{}, err
	}
	return got.Status, nil
}

// limit creates the quota or changes its limit, and waits until
// kube-controller-manager put the limit into status.hard: admission
// compares against status, not spec.
func (q deviceQuota) limit(ctx context.Context, n int64) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	hard := corev1.ResourceList{q.key: quantityOf(n)}
	_, err := e.Client.CoreV1().ResourceQuotas(q.namespace).Get(ctx, q.name, metav1.GetOptions{})
	created := apierrors.IsNotFound(err)
	switch {
	case created:
		_, err = e.Client.CoreV1().ResourceQuotas(q.namespace).Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: q.name},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		}, metav1.CreateOptions{})
	case err == nil:
		patch := fmt.Sprintf(`{"spec":{"hard":{%q:"%d"}}}`, q.key, n)
		_, err = e.Client.CoreV1().ResourceQuotas(q.namespace).Patch(ctx, q.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	framework.ExpectNoError(err, "setting quota %s to %s=%d", q.name, q.key, n)
	var st corev1.ResourceQuotaStatus
	gomega.Eventually(ctx, func(ctx context.Context) (corev1.ResourceQuotaStatus, error) {
		var err error
		st, err = q.status(ctx)
		return st, err
	}).WithTimeout(allocateTimeout).Should(gomega.And(
		gomega.HaveField("Hard", gomega.HaveKeyWithValue(q.key, quantityOf(n))),
		gomega.HaveField("Used", gomega.HaveKey(q.key))),
		"kube-controller-manager puts quota %s's limit %s=%d into its status", q.name, q.key, n)
	// Admission reads quotas from kube-apiserver's own informer, which may
	// still hold the status from before for a moment after the one just
	// read (seen once: a claim for 3 refused, "limited: 2", right after
	// status.hard said 3). A dry-run create is admitted or refused by
	// the quota as a real one would be and stores nothing: once one for
	// exactly the room left is admitted, admission enforces the new limit.
	// The specs only raise a limit, which a stale view refuses; with no room
	// left there is nothing to ask. A quota just created is the other way
	// round: the stale view is no quota at all, which admits anything (seen
	// once: a claim for 3 admitted right after status.hard said 2), so a
	// dry run for one device more than the room left must be refused first.
	used := st.Used[q.key]
	room := n - used.Value()
	if more := max(room, 0) + 1; created && more <= resourceapi.AllocationResultsMaxSize {
		over := q.b.Claim(builder.Count(more))
		over.Name = "quota-probe-over"
		refused := q.exceeded(more, used.Value(), n)
		gomega.Eventually(ctx, func(ctx context.Context) error {
			_, err := e.DRA.ResourceClaims(q.namespace).Create(ctx, over, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			switch {
			case err == nil:
				return fmt.Errorf("a claim for %d device(s) was admitted", more)
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), refused):
				return nil
			}
			return err
		}).WithTimeout(allocateTimeout).Should(gomega.Succeed(),
			"kube-apiserver's quota admission refuses a claim for %d device(s), one more than new quota %s's limit %d leaves (dry run)", more, q.name, n)
	}
	if room <= 0 {
		return
	}
	probe := q.b.Claim(builder.Count(room))
	probe.Name = "quota-probe"
	gomega.Eventually(ctx, func(ctx context.Context) error {
		_, err := e.DRA.ResourceClaims(q.namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}).WithTimeout(allocateTimeout).Should(gomega.Succeed(),
		"kube-apiserver's quota admission admits a claim for the %d device(s) left under quota %s's new limit %d (dry run)", room, q.name, n)
}

// recount changes a limit of the quota that no claim touches
// (count/configmaps, to 100+n for recount n; each n once per quota):
// kube-controller-manager recounts every resource of a quota whose hard
// limits changed.
func (q deviceQuota) recount(ctx context.Context, n int) error {
	e := envOf(ctx)
	patch := fmt.Sprintf(`{"spec":{"hard":{"count/configmaps":"%d"}}}`, 100+n)
	_, err := e.Client.CoreV1().ResourceQuotas(q.namespace).Patch(ctx, q.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// expectRecounted has kube-controller-manager recount the quota (recount
// 0) and waits for its count: n devices used, for what.
//
// A recount reads the controller's informers, and one asked for right
// after a claim's creation can run before the informer has the claim (seen
// under load: the recount 30 ms after the All claim counted 3, not 35), and
// nothing makes the controller count again until its five-minute resync. So
// once a recount is seen (status.hard shows the limit asked for) with
// another count, another is asked for: the count that passes is still the
// controller's own, and a controller that miscounts admin-access claims
// miscounts them in every recount.
func (q deviceQuota) expectRecounted(ctx context.Context, n int64, what string) {
	ginkgo.GinkgoHelper()
	recounts := 0
	framework.ExpectNoError(q.recount(ctx, recounts))
	gomega.Eventually(ctx, func(ctx context.Context) error {
		st, err := q.status(ctx)
		if err != nil {
			return err
		}
		asked := quantityOf(100 + int64(recounts))
		if hard := st.Hard["count/configmaps"]; hard.Cmp(asked) != 0 {
			return fmt.Errorf("recount %d not seen yet: status.hard count/configmaps=%s, asked for %s", recounts, hard.String(), asked.String())
		}
		used := st.Used[q.key]
		if used.Cmp(quantityOf(n)) == 0 {
			return nil
		}
		recounts++
		if err := q.recount(ctx, recounts); err != nil {
			return err
		}
		return fmt.Errorf("recount %d counted %s=%s, want %d; asked for recount %d", recounts-1, q.key, used.String(), n, recounts)
	}).WithTimeout(allocateTimeout).WithPolling(time.Second).Should(gomega.Succeed(),
		"quota %s's status after kube-controller-manager recounted it (status.hard shows the limit asked for): %s used=%d for %s", q.name, q.key, n, what)
	framework.Logf("quota %s: kube-controller-manager's count agreed after %d recount(s)", q.name, recounts+1)
}

// expectUsed checks status.used as admission left it.
func (q deviceQuota) expectUsed(ctx context.Context, n int64, why string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, q.status).WithTimeout(allocateTimeout).Should(
		gomega.HaveField("Used", gomega.HaveKeyWithValue(q.key, quantityOf(n))),
		"quota %s: %s (%s used=%d)", q.name, why, q.key, n)
}

// exceeded is kube-apiserver's text for a claim this quota refuses, with
// the numbers it charged (pkg/quota/v1/.../admission: "exceeded quota: ...").
func (q deviceQuota) exceeded(requested, used, limited int64) string {
	return fmt.Sprintf("exceeded quota: %s, requested: %s=%d, used: %s=%d, limited: %s=%d", q.name, q.key, requested, q.key, used, q.key, limited)
}

// expectExceeded checks the quota admission's refusal, with those numbers.
func (q deviceQuota) expectExceeded(err error, what string, requested, used, limited int64) {
	ginkgo.GinkgoHelper()
	want := q.exceeded(requested, used, limited)
	gomega.Expect(err).To(gomega.HaveOccurred(), "%s must exceed the quota (%s)", what, want)
	gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "%s must be refused as Forbidden by the quota, got %v", what, err)
	gomega.Expect(err.Error()).To(gomega.ContainSubstring(want), what)
}
