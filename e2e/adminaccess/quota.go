package adminaccess

import (
	"context"
	"fmt"
	"strconv"

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

// Quota for the request shapes monitoring uses: a DaemonSet's claim asks
// for allocationMode All, a tool for several devices at once. The quota
// evaluator (pkg/quota/v1/evaluator/core/resource_claims.go, the same on
// every release here) never reads adminAccess: it charges a request's
// count, and for All the most results an allocation can hold,
// AllocationResultsMaxSize (32), whatever the node has. Admission charges
// at create against status.hard; the quota controller recounts with the
// same evaluator. No claim here gets a pod, so no device is touched and the
// group runs beside others.
var _ = framework.Describe("Admin access quota for every request shape", ginkgo.Label("allocation"), func() {
	f := newFramework("quota")

	ginkgo.It("charges admin-access requests for count > 1 and allocationMode All like ordinary ones, at admission and in the controller's recount", func(ctx context.Context) {
		kep("admin-access requests for several devices or for all of them contribute to the quota as ordinary ones do")
		b := newBuilder(f)
		labelForAdmin(ctx, f.Namespace.Name)
		const quotaName = "devices"
		key := corev1.ResourceName(env.Driver.DeviceClass + corev1.ResourceClaimsPerClass)
		q := quotaOf(f.Namespace.Name, quotaName, key)
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
		framework.ExpectNoError(recountQuota(ctx, f.Namespace.Name, quotaName, 0))
		gomega.Eventually(ctx, q.status).WithTimeout(allocateTimeout).Should(gomega.And(
			gomega.HaveField("Hard", gomega.HaveKeyWithValue(corev1.ResourceName("count/configmaps"), resource.MustParse("100"))),
			gomega.HaveField("Used", gomega.HaveKeyWithValue(key, quantityOf(3+all)))),
			"quota %s's status after kube-controller-manager recounted it (status.hard shows the new limit): %s used=%d for claims %s (count 3) and %s (All)", quotaName, key, 3+all, three.Name, everything.Name)
	})
})

// quantityOf is n as kube-apiserver hands a quota's quantity back (parsed, as
// the quota spec of the allocation group compares them).
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
}

func quotaOf(namespace, name string, key corev1.ResourceName) deviceQuota {
	return deviceQuota{namespace: namespace, name: name, key: key}
}

func (q deviceQuota) status(ctx context.Context) (corev1.ResourceQuotaStatus, error) {
	got, err := env.Client.CoreV1().ResourceQuotas(q.namespace).Get(ctx, q.name, metav1.GetOptions{})
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
	hard := corev1.ResourceList{q.key: quantityOf(n)}
	_, err := env.Client.CoreV1().ResourceQuotas(q.namespace).Get(ctx, q.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = env.Client.CoreV1().ResourceQuotas(q.namespace).Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: q.name},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		}, metav1.CreateOptions{})
	case err == nil:
		patch := fmt.Sprintf(`{"spec":{"hard":{%q:"%d"}}}`, q.key, n)
		_, err = env.Client.CoreV1().ResourceQuotas(q.namespace).Patch(ctx, q.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	framework.ExpectNoError(err, "setting quota %s to %s=%d", q.name, q.key, n)
	gomega.Eventually(ctx, q.status).WithTimeout(allocateTimeout).Should(gomega.And(
		gomega.HaveField("Hard", gomega.HaveKeyWithValue(q.key, quantityOf(n))),
		gomega.HaveField("Used", gomega.HaveKey(q.key))),
		"kube-controller-manager puts quota %s's limit %s=%d into its status", q.name, q.key, n)
}

// expectUsed checks status.used as admission left it.
func (q deviceQuota) expectUsed(ctx context.Context, n int64, why string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(ctx, q.status).WithTimeout(allocateTimeout).Should(
		gomega.HaveField("Used", gomega.HaveKeyWithValue(q.key, quantityOf(n))),
		"quota %s: %s (%s used=%d)", q.name, why, q.key, n)
}

// expectExceeded checks the quota admission's refusal, with the numbers it
// charged (pkg/quota/v1/.../admission: "exceeded quota: ...").
func (q deviceQuota) expectExceeded(err error, what string, requested, used, limited int64) {
	ginkgo.GinkgoHelper()
	want := fmt.Sprintf("exceeded quota: %s, requested: %s=%d, used: %s=%d, limited: %s=%d", q.name, q.key, requested, q.key, used, q.key, limited)
	gomega.Expect(err).To(gomega.HaveOccurred(), "%s must exceed the quota (%s)", what, want)
	gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "%s must be refused as Forbidden by the quota, got %v", what, err)
	gomega.Expect(err.Error()).To(gomega.ContainSubstring(want), what)
}
