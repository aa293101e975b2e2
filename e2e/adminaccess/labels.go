// SPDX-License-Identifier: Apache-2.0

package adminaccess

import (
	"context"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/labels"
	"github.com/kep5018/adminaccess-conformance/e2e/report"
	"github.com/kep5018/adminaccess-conformance/e2e/requirements"
)

// checkLabelFilter refuses a filter that names a label no spec carries (see labels.Check).
func checkLabelFilter() error { return labels.Check(ginkgo.GinkgoLabelFilter()) }

// requirement is the KEP requirement a spec checks, as it names it among
// its arguments to it: kep(text).
type requirement struct{ requirements.Requirement }

// kep names a spec's KEP requirement by its text, which e2e/requirements
// must list (its unit test reads the text of every call in the spec files).
func kep(text string) requirement {
	r, ok := requirements.Of(text)
	if !ok {
		panic(fmt.Sprintf("e2e: KEP requirement %q is not in e2e/requirements", text))
	}
	return requirement{r}
}

// it registers a spec, as ginkgo.It does, for the one KEP requirement among
// its arguments (kep(...)), so that dashboards and filters find the spec by
// the requirement's ID: the ID is a label (LABELS=KEP5018-AUTHZ-01) and, as
// upstream's framework.WithLabel writes a label, a bracketed tag in the
// spec's name, which is the JUnit test's name. A spec that needs
// DRAAdminAccess also gets the labels and tags upstream's framework gives
// it (adminAccessGate). The body runs with the suite's environment in its
// context (inEnv) and first records the requirement for the report. Every
// spec is registered here, so no spec file lists an ID.
func it(text string, args ...any) bool {
	var req *requirement
	var rest []any
	for _, a := range args {
		if r, ok := a.(requirement); ok {
			if req != nil {
				panic(fmt.Sprintf("e2e: spec %q names two KEP requirements, %s and %s", text, req.ID, r.ID))
			}
			req = &r
			continue
		}
		rest = append(rest, a)
	}
	if req == nil {
		panic(fmt.Sprintf("e2e: spec %q names no KEP requirement (kep(...))", text))
	}
	var body func(context.Context)
	if len(rest) > 0 {
		body, _ = rest[len(rest)-1].(func(context.Context))
	}
	if body == nil {
		panic(fmt.Sprintf("e2e: spec %q: the last argument must be its body, func(context.Context)", text))
	}
	rest[len(rest)-1] = inEnv(func(ctx context.Context) {
		recordKEP(ctx, req.Text)
		body(ctx)
	})
	decorations := []any{text, framework.WithLabel(req.ID)}
	if req.NeedsAdminAccess() {
		decorations = append(decorations, adminAccessGate(plan.Rel)...)
	}
	// The location Ginkgo reports is the caller's, past this function and
	// framework.It.
	return framework.It(append(append(decorations, rest...), ginkgo.Offset(1))...)
}

// recordKEP records the KEP requirement a spec covers, for report.md, and
// takes the skip a set-up node found declared for the spec.
func recordKEP(ctx context.Context, text string) {
	ginkgo.AddReportEntry(report.KEPEntry, text, ginkgo.ReportEntryVisibilityNever)
	takeRequiredSkip(envOf(ctx))
}

// adminAccessGate is what upstream's e2e framework gives a spec that needs
// DRAAdminAccess in rel (labels.AdminAccessGate: "FeatureGate:DRAAdminAccess",
// then "Alpha" and "Feature:OffByDefault" in 1.33, "Beta" in 1.34 and
// 1.35, nothing more from 1.36). framework.WithFeatureGate itself writes
// them where it can: it reads the maturity from the gate registry compiled
// into this binary, k8s.io/kubernetes v1.35.4's, at that version, so it
// speaks for the releases where the gate has 1.35's maturity (beta, on by
// default: 1.34 and 1.35). For the others the same labels are written
// through framework.WithLabel from the release table, as that release's
// own framework and registry write them. Moving the registry's emulation
// version instead would move client-go's feature gates with it, which
// k8s.io/kubernetes/pkg/features wires to the same registry.
func adminAccessGate(rel release.Release) []any {
	if registryMaturity() == rel.GateState {
		return []any{framework.WithFeatureGate(features.DRAAdminAccess)}
	}
	var out []any
	for _, u := range labels.AdminAccessGate(rel) {
		if u.InName {
			out = append(out, framework.WithLabel(u.Label))
		} else {
			out = append(out, ginkgo.Label(u.Label))
		}
	}
	return out
}

// registryMaturity is DRAAdminAccess's maturity in the compiled-in gate
// registry at its own version, in the release table's terms ("" where the
// registry knows no such gate).
func registryMaturity() release.GateState {
	spec, ok := utilfeature.DefaultMutableFeatureGate.GetAll()[features.DRAAdminAccess]
	if !ok {
		return ""
	}
	return maturityOf(spec)
}

// maturityOf is a gate's spec in the release table's terms: "" for one the
// table has no word for (a beta gate off by default, a GA one not locked).
func maturityOf(spec featuregate.FeatureSpec) release.GateState {
	switch {
	case spec.PreRelease == featuregate.Alpha && !spec.Default:
		return release.Alpha
	case spec.PreRelease == featuregate.Beta && spec.Default:
		return release.Beta
	case spec.PreRelease == featuregate.GA && spec.LockToDefault && spec.Default:
		return release.GALocked
	}
	return ""
}
