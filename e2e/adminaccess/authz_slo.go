// SPDX-License-Identifier: Apache-2.0

package adminaccess

// The SLO's sweep: every kind of unauthorized attempt at admin access, in
// every label state, by each kind of user, counted; and the denial and
// the extra namespace the authz group's specs share with it.

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/expect"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// unauthorizedSweep makes at least sloAttempts unauthorized attempts and
// fails unless kube-apiserver denied each with the exact denial (or, for
// a write of the claim itself, stored it without its allocation).
func unauthorizedSweep(ctx context.Context, f *framework.Framework) {
	e := envOf(ctx)
	second := createNamespace(ctx, f, "authz-sweep")
	users := map[string]func(ns string) *builder.Builder{
		"cluster-admin": func(ns string) *builder.Builder { b := newBuilder(ctx, f); b.Namespace = ns; return b },
	}
	nsAdmin := namespaceAdmin(ctx, f)
	users["namespace-admin"] = func(ns string) *builder.Builder {
		if ns != f.Namespace.Name {
			return nil // that user has rights in the spec's namespace only
		}
		b := *nsAdmin
		return &b
	}
	labelStates := []struct {
		key   string
		value *string
	}{
		{e.Rel.AdminLabel, nil}, {e.Rel.AdminLabel, str("True")}, {e.Rel.AdminLabel, str("TRUE")},
		{e.Rel.AdminLabel, str("yes")}, {e.Rel.AdminLabel, str("1")}, {e.Rel.AdminLabel, str("")},
		{e.Rel.AdminLabel, str("false")}, {e.Rel.AdminLabel, str("t")}, {e.Rel.StaleLabel, str("true")},
	}
	shapes := map[string][]builder.RequestOption{
		"one device":  {builder.AdminAccess()},
		"two devices": {builder.AdminAccess(), builder.Count(2)},
		"all devices": {builder.AdminAccess(), builder.AllDevices()},
		"one indexed": {builder.AdminAccess(), builder.DeviceIndex(1)},
	}
	// A status update that newly grants admin access, as kube-scheduler
	// writes one, is tried in every label state too (as cluster-admin:
	// the namespace admin may not write claim status at all). Each
	// attempt grants another device of another node, so that a check
	// that looked at one device or pool only would let some through.
	nodes := workers(ctx)
	grants := 0
	grant := func() sweepGrant {
		g := sweepGrant{driver: e.Driver.DriverName, pool: nodes[grants%len(nodes)], device: contract.DeviceName(grants % contract.PlainDevices)}
		grants++
		return g
	}
	statusClaims := map[string]*resourceapi.ResourceClaim{}
	// The claims a PUT of the claim itself tries to give an allocation.
	putClaims := map[string]*resourceapi.ResourceClaim{}
	for _, ns := range []string{f.Namespace.Name, second} {
		b := users["cluster-admin"](ns)
		c, err := b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err)
		statusClaims[ns] = c
		c, err = b.CreateClaim(ctx, b.Claim())
		framework.ExpectNoError(err)
		putClaims[ns] = c
	}
	// Every call made counts as attempted, and as denied only when
	// kube-apiserver refused it with the exact denial; an attempt that
	// was not is kept with what it got, and the sweep goes on, so that
	// the count and the report say how many of the attempts made were
	// denied, not a constant of the loops.
	var attempted, denied int
	var notDenied []string
	try := func(what string, err error, want gomega.OmegaMatcher) {
		attempted++
		if ok, merr := want.Match(err); ok && merr == nil {
			denied++
			return
		}
		notDenied = append(notDenied, fmt.Sprintf("%s: %v", what, err))
	}
	// A write of the claim itself that carries an allocation with
	// admin access, a create or a PUT: kube-apiserver resets the status
	// of a create (PrepareForCreate) and keeps the stored one on an
	// update (PrepareForUpdate), and nothing behind either checks a
	// status, while the namespace admin may make both. Such a write
	// succeeds and must store no allocation; it counts as denied only
	// then.
	keptOut := func(what string, got *resourceapi.ResourceClaim, err error, b *builder.Builder) {
		attempted++
		var stored *resourceapi.ResourceClaim
		if err == nil {
			stored, err = b.GetClaim(ctx, got.Name)
		}
		switch {
		case err != nil:
			notDenied = append(notDenied, fmt.Sprintf("%s: %v (kube-apiserver takes such a write and drops its status)", what, err))
		case got.Status.Allocation != nil || stored.Status.Allocation != nil:
			notDenied = append(notDenied, fmt.Sprintf("%s: stored with status.allocation %v", what, resultsGiven(stored)))
		default:
			denied++
		}
	}
	statusDenial := expect.MatchForbiddenAt(e.Rel.AdminAccessStatusFieldPath(0), e.Rel.AdminAccessDenial())
	for _, ns := range []string{f.Namespace.Name, second} {
		for _, state := range labelStates {
			// Each state alone: clear both keys, then set the one under test.
			setNamespaceLabel(ctx, ns, e.Rel.AdminLabel, nil)
			setNamespaceLabel(ctx, ns, e.Rel.StaleLabel, nil)
			if state.value != nil {
				setNamespaceLabel(ctx, ns, state.key, state.value)
			}
			g := grant()
			try(fmt.Sprintf("status update granting admin access to %s to claim %s in %s with %s=%v", g, statusClaims[ns].Name, ns, state.key, ptrString(state.value)),
				patchAllocation(ctx, statusClaims[ns], g.patch()), statusDenial)
			for userName, as := range users {
				b := as(ns)
				if b == nil {
					continue
				}
				in := fmt.Sprintf("in %s with %s=%v as %s", ns, state.key, ptrString(state.value), userName)
				g := grant()
				made := b.Claim()
				// Each builder here is made anew, so its names repeat;
				// these creates succeed, so each needs its own.
				made.Name = fmt.Sprintf("with-status-%d", grants)
				made.Status.Allocation = g.allocation()
				got, err := b.CreateClaim(ctx, made)
				keptOut(fmt.Sprintf("create of an ordinary claim whose status grants admin access to %s, %s", g, in), got, err, b)
				g = grant()
				current, err := b.GetClaim(ctx, putClaims[ns].Name)
				framework.ExpectNoError(err)
				current.Status.Allocation = g.allocation()
				got, err = b.DRA.ResourceClaims(ns).Update(ctx, current, metav1.UpdateOptions{})
				keptOut(fmt.Sprintf("PUT of claim %s whose status grants admin access to %s, %s", current.Name, g, in), got, err, b)
				for shapeName, opts := range shapes {
					what := fmt.Sprintf("%s in %s with %s=%v as %s", shapeName, ns, state.key, ptrString(state.value), userName)
					_, err := b.CreateClaim(ctx, b.Claim(opts...))
					try("claim, "+what, err, denial(e.Rel))
					_, err = b.CreateTemplate(ctx, b.Template(opts...))
					try("template, "+what, err, denial(e.Rel))
				}
			}
		}
	}
	ginkgo.AddReportEntry("unauthorized attempts denied", fmt.Sprintf("%d of %d", denied, attempted))
	framework.Logf("%d of %d unauthorized admin-access attempts were denied with the exact error", denied, attempted)
	gomega.Expect(notDenied).To(gomega.BeEmpty(), "%d of %d unauthorized attempts were not denied with %s at its field path (a create or a PUT of the claim itself: not stored without its allocation); the first: %v", len(notDenied), attempted, e.Rel.AdminAccessDenial(), notDenied[:min(len(notDenied), 5)])
	gomega.Expect(denied).To(gomega.Equal(attempted), "denied of attempted")
	gomega.Expect(attempted).To(gomega.BeNumerically(">=", sloAttempts), "the SLO is measured over at least %d attempts", sloAttempts)
	for _, claims := range []map[string]*resourceapi.ResourceClaim{statusClaims, putClaims} {
		for ns, c := range claims {
			stored, err := users["cluster-admin"](ns).GetClaim(ctx, c.Name)
			framework.ExpectNoError(err)
			gomega.Expect(stored.Status.Allocation).To(gomega.BeNil(), "no denied write of claim %s's status may be stored", c.Name)
		}
	}
}

// sweepGrant is one device that an unauthorized write tries to give a
// claim's request with admin access.
type sweepGrant struct{ driver, pool, device string }

func (g sweepGrant) String() string { return g.pool + "/" + g.device }

// patch is the grant as a status patch's result.
func (g sweepGrant) patch() map[string]any {
	return map[string]any{"request": builder.RequestName, "driver": g.driver, "pool": g.pool, "device": g.device, "adminAccess": true}
}

// allocation is the grant as a claim's status.allocation.
func (g sweepGrant) allocation() *resourceapi.AllocationResult {
	return &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
		Request: builder.RequestName, Driver: g.driver, Pool: g.pool, Device: g.device, AdminAccess: ptr.To(true)}}}}
}

// sloAttempts is the fewest unauthorized attempts the SLO spec must make
// for its count to stand for "100% denied".
const sloAttempts = 200

func ptrString(p *string) string {
	if p == nil {
		return "(absent)"
	}
	return fmt.Sprintf("%q", *p)
}

// denial is the release's exact Forbidden cause for request 0.
func denial(rel release.Release) gomega.OmegaMatcher {
	return expect.MatchForbiddenAt(rel.AdminAccessFieldPath(0), rel.AdminAccessDenial())
}

// createNamespace makes an extra namespace that the framework deletes with the spec's.
func createNamespace(ctx context.Context, f *framework.Framework, base string) string {
	ginkgo.GinkgoHelper()
	ns, err := f.CreateNamespace(ctx, base, nil)
	framework.ExpectNoError(err)
	return ns.Name
}
