// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/expect"
	"github.com/kep5018/adminaccess-conformance/e2e/observe"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// Authorization happens at create only: kube-apiserver checks the namespace
// label when a claim or template is made, and never again for its spec
// ("AuthorizedForAdmin isn't needed here because the spec is immutable",
// pkg/registry/resource/resourceclaim/strategy.go). That is safe only while
// the spec cannot change: an update that set adminAccess would hand admin
// access to anyone who may update a claim, in any namespace. Every release
// here refuses any change of a claim's or template's spec
// (ValidateResourceClaimUpdate, ValidateResourceClaimTemplateUpdate:
// ValidateImmutableField at "spec"), and a status update writes the stored
// spec back over whatever it carries (the status strategy's
// PrepareForUpdate). No device is held (admin access takes none): the
// group runs beside others.
var _ = framework.Describe("Admin access fixed at creation", ginkgo.Label("authz"), func() {
	f := newAnyDriverFramework("immutable")

	it("refuses an update that sets, flips or drops adminAccess in a claim or template, labelled namespace or not", kep("adminAccess cannot be set, flipped or dropped after creation: claim and template specs are immutable"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		unlabelled := b.Namespace

		ginkgo.By("in a namespace without the label: an ordinary claim and template cannot be updated to ask for admin access")
		claim, err := b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err)
		expectClaimSpecKept(ctx, b, claim, ptr.To(true))
		tmpl, err := b.CreateTemplate(ctx, b.Template())
		framework.ExpectNoError(err)
		expectTemplateSpecKept(ctx, b, tmpl, ptr.To(true))

		ginkgo.By("nor through the status subresource: kube-apiserver keeps the stored spec")
		// A merge patch of the status subresource (patchAllocation says why
		// not UpdateStatus); its requests list replaces the stored one
		// whole. The request is spelled for the served version (v1beta1 has
		// no exactly), and strict field validation refuses a field the
		// version lacks instead of dropping it, which would keep the spec
		// unset whatever the strategy did.
		request := map[string]any{"deviceClassName": b.Class, "allocationMode": "ExactCount", "count": 1, "adminAccess": true}
		if e.ResourceAPI != "v1beta1" {
			request = map[string]any{"exactly": request}
		}
		request["name"] = builder.RequestNameAt(0)
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": []any{request}}}})
		patched, err := e.Dynamic.Resource(resourceGVR(e.ResourceAPI, "resourceclaims")).Namespace(unlabelled).
			Patch(ctx, claim.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: metav1.FieldValidationStrict}, "status")
		framework.ExpectNoError(err, "a status patch of claim %s that carries a changed spec", claim.Name)
		gomega.Expect(unstructuredAdminAccess(patched.Object)).To(gomega.BeNil(), "claim %s's requests[0] adminAccess in the status patch's reply", claim.Name)
		stored, err := b.GetClaim(ctx, claim.Name)
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccessFields(stored.Spec.Devices)).To(gomega.Equal([]string{"unset"}), "claim %s's requests[].adminAccess as stored after the status patch", claim.Name)

		ginkgo.By("in a namespace with the label: an admin-access claim and template cannot be flipped to false or lose the field")
		labelForAdmin(ctx, unlabelled)
		adminClaim, err := b.CreateClaim(ctx, b.Claim(builder.AdminAccess()))
		framework.ExpectNoError(err)
		gomega.Expect(observe.RequestsAdminAccess(adminClaim)).To(gomega.BeTrue(), "claim %s as stored", adminClaim.Name)
		adminTmpl, err := b.CreateTemplate(ctx, b.Template(builder.AdminAccess()))
		framework.ExpectNoError(err)
		for _, v := range []*bool{ptr.To(false), nil} {
			expectClaimSpecKept(ctx, b, adminClaim, v)
			expectTemplateSpecKept(ctx, b, adminTmpl, v)
		}
		ginkgo.By("and the label does not make an ordinary claim's field settable either")
		expectClaimSpecKept(ctx, b, claim, ptr.To(true))
	})

	// A grant is never checked again (the authz group's spec of the label removed) because it cannot
	// change: kube-apiserver's authorization of a status update returns
	// early when the stored allocation already grants admin access
	// (AuthorizedForAdminStatus: "since status.Allocation is immutable"),
	// so once the label is gone nothing but the immutability of
	// status.allocation stops a status update from re-granting admin access
	// to another device, or rewriting the grant in any other way. Each
	// rewrite is tried as cluster-admin, who may write any claim's status.
	it("refuses every rewrite of a granted admin-access allocation once the label is gone: another device, adminAccess false, no results", kep("a granted allocation cannot be rewritten: status.allocation is immutable once set"), func(ctx context.Context) {
		e := envOf(ctx)
		b := newBuilder(ctx, f)
		claim, pod, before := runGrantedAdminPod(ctx, b)
		granted := allocatedClaim(ctx, b, claim.Name)
		gomega.Expect(observe.AdminAccessResults(granted)).To(gomega.Equal([]bool{true}), "claim %s's allocation as granted", claim.Name)
		grant := granted.Status.Allocation.Devices.Results[0]
		grantedJSON := allocationJSON(granted)

		ginkgo.By("the label goes, and a status update tries to rewrite the grant")
		setNamespaceLabel(ctx, f.Namespace.Name, e.Rel.AdminLabel, nil)
		pool, device := anotherDevice(e, grant.Pool, grant.Device)
		result := func(pool, device string, admin bool) map[string]any {
			return map[string]any{"request": grant.Request, "driver": grant.Driver, "pool": pool, "device": device, "adminAccess": admin}
		}
		rewrites := []struct {
			what    string
			results []map[string]any
			// shows is what the new allocation, printed as JSON with Go
			// field names, holds that the granted one does not.
			shows string
		}{
			{fmt.Sprintf("admin access to another device (%s instead of %s)", poolDevice(pool, device), poolDevice(grant.Pool, grant.Device)),
				[]map[string]any{result(pool, device, true)}, fmt.Sprintf(`"Device":%q`, device)},
			{"adminAccess flipped to false", []map[string]any{result(grant.Pool, grant.Device, false)}, `"AdminAccess":false`},
			// No results: the patch's null removes the list.
			{"every result dropped", nil, `"Results":null`},
		}
		for _, r := range rewrites {
			// The refusal in a name of its own: the read below reuses err.
			refused := patchAllocation(ctx, claim, r.results...)
			what := fmt.Sprintf("a status update of claim %s's allocation: %s", claim.Name, r.what)
			gomega.Expect(refused).To(expect.MatchInvalidAt("status.allocation"), "the promise: %s is refused", what)
			stored, err := b.GetClaim(ctx, claim.Name)
			framework.ExpectNoError(err)
			gomega.Expect(allocationJSON(stored)).To(gomega.Equal(grantedJSON), "the promise: claim %s's status.allocation as stored after %s", claim.Name, what)
			refusal := e.Rel.ImmutableAllocation(r.shows)
			gomega.Expect(refused).To(expect.MatchInvalidMessage("ResourceClaim", claim.Name, "status.allocation", refusal.Value, refusal.Exact, refusal.Detail, refusal.Validator),
				"the promise held (refused at status.allocation, stored as granted); the message is not the one Kubernetes %s's validator prints, for %s", e.Rel.Minor, what)
		}
		ginkgo.By("the pod keeps its devices, with admin access, as granted")
		expectUndisturbed(ctx, pod, before)
	})
})

// jsonValue is v as JSON prints it.
func jsonValue(v *bool) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatBool(*v)
}

// expectClaimSpecKept updates claim's first request to adminAccess v and
// expects kube-apiserver to refuse it as an immutable spec, and the claim
// to be stored as before.
func expectClaimSpecKept(ctx context.Context, b *builder.Builder, claim *resourceapi.ResourceClaim, v *bool) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	current, err := b.GetClaim(ctx, claim.Name)
	framework.ExpectNoError(err)
	before := observe.RequestsAdminAccessFields(current.Spec.Devices)
	changed := current.DeepCopy()
	changed.Spec.Devices.Requests[0].Exactly.AdminAccess = v
	_, refused := e.DRA.ResourceClaims(claim.Namespace).Update(ctx, changed, metav1.UpdateOptions{})
	what := fmt.Sprintf("an update of claim %s's requests[0].adminAccess from %s to %s", claim.Name, before[0], observe.AdminAccessField(v))
	expectImmutableSpecRefused(refused, what)
	stored, err := b.GetClaim(ctx, claim.Name)
	framework.ExpectNoError(err)
	gomega.Expect(observe.RequestsAdminAccessFields(stored.Spec.Devices)).To(gomega.Equal(before), "the promise: claim %s as stored after %s", claim.Name, what)
	expectImmutableSpecMessage(e.Rel, refused, "ResourceClaim", claim.Name, v, what)
}

// expectTemplateSpecKept is expectClaimSpecKept for a template.
func expectTemplateSpecKept(ctx context.Context, b *builder.Builder, tmpl *resourceapi.ResourceClaimTemplate, v *bool) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	templates := e.DRA.ResourceClaimTemplates(tmpl.Namespace)
	current, err := templates.Get(ctx, tmpl.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	before := observe.RequestsAdminAccessFields(current.Spec.Spec.Devices)
	changed := current.DeepCopy()
	changed.Spec.Spec.Devices.Requests[0].Exactly.AdminAccess = v
	_, refused := templates.Update(ctx, changed, metav1.UpdateOptions{})
	what := fmt.Sprintf("an update of template %s's requests[0].adminAccess from %s to %s", tmpl.Name, before[0], observe.AdminAccessField(v))
	expectImmutableSpecRefused(refused, what)
	stored, err := templates.Get(ctx, tmpl.Name, metav1.GetOptions{})
	framework.ExpectNoError(err)
	gomega.Expect(observe.RequestsAdminAccessFields(stored.Spec.Spec.Devices)).To(gomega.Equal(before), "the promise: template %s as stored after %s", tmpl.Name, what)
	expectImmutableSpecMessage(e.Rel, refused, "ResourceClaimTemplate", tmpl.Name, v, what)
}

// A refusal of a changed spec is asserted in two parts, so that a failure
// says which broke: the promise, whichever validator keeps it (422
// Invalid, one cause, FieldValueInvalid at "spec", and the object stored
// as before, which the callers check between the two), and then the
// message as the release's validator prints it.

// expectImmutableSpecRefused asserts the promise's refusal.
func expectImmutableSpecRefused(err error, what string) {
	ginkgo.GinkgoHelper()
	gomega.Expect(err).To(expect.MatchInvalidAt("spec"), "the promise: %s is refused as a change of an immutable spec", what)
}

// expectImmutableSpecMessage asserts the message of a refused change of a
// spec of kind whose first request now says adminAccess v:
// `<Kind>.resource.k8s.io "<name>" is invalid: spec: Invalid value:
// <value>: field is immutable`, the value per
// release.Release.ImmutableSpecValue (the new adminAccess where it prints
// JSON; exactly null where v1.37.2's declarative check wrote it).
func expectImmutableSpecMessage(rel release.Release, err error, kind, name string, v *bool, what string) {
	ginkgo.GinkgoHelper()
	value, exact := rel.ImmutableSpecValue(kind, jsonValue(v))
	gomega.Expect(err).To(expect.MatchInvalidMessage(kind, name, "spec", value, exact, "field is immutable", rel.ImmutableSpecValidator(kind)),
		"the promise held (refused at spec, stored as before); the message is not the one Kubernetes %s's validator prints, for %s", rel.Minor, what)
}

// unstructuredAdminAccess is requests[0]'s adminAccess of a claim as the
// API returned it, at any served version (nil: unset).
func unstructuredAdminAccess(obj map[string]any) any {
	requests, _, _ := unstructured.NestedSlice(obj, "spec", "devices", "requests")
	if len(requests) == 0 {
		return nil
	}
	req, _ := requests[0].(map[string]any)
	if exactly, ok := req["exactly"].(map[string]any); ok {
		return exactly["adminAccess"]
	}
	return req["adminAccess"]
}

// allocationJSON is a claim's status.allocation as JSON, to compare a
// stored allocation whole with another and print both when they differ.
func allocationJSON(c *resourceapi.ResourceClaim) string {
	ginkgo.GinkgoHelper()
	out, err := json.Marshal(c.Status.Allocation)
	framework.ExpectNoError(err)
	return string(out)
}

// anotherDevice is a device of the class other than pool/device: one the
// user's driver publishes, or another of the bundled driver's on the same
// node. Nothing checks that a rewritten result names a real device (the
// rewrite must be refused before that), but a real one makes the rewrite
// the one a scheduler with a stale view would write.
func anotherDevice(e *testenv.Env, pool, device string) (string, string) {
	ginkgo.GinkgoHelper()
	if e.Vendor == nil {
		for i := range e.Driver.Devices {
			if d := contract.DeviceName(i); d != device {
				return pool, d
			}
		}
	} else {
		nodes := slices.Sorted(maps.Keys(e.Vendor.Devices))
		for _, n := range nodes {
			for _, d := range e.Vendor.Devices[n] {
				if d.Pool != pool || d.Name != device {
					return d.Pool, d.Name
				}
			}
		}
	}
	framework.Failf("the driver publishes no device of the class but %s", poolDevice(pool, device))
	return "", ""
}
