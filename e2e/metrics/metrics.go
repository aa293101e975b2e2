// SPDX-License-Identifier: Apache-2.0

// Package metrics reads the control plane's Prometheus metrics the way an
// operator would: from the components' secure ports, with a ServiceAccount
// token bound to system:monitoring, parsed with the Prometheus text parser.
package metrics

import (
	"fmt"
	"io"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are one scrape's metric families by name.
type Families map[string]*dto.MetricFamily

// Parse reads the Prometheus text format.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return Families(fams), nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// Sum adds up the samples of a family whose labels include every given
// label; a family that is absent (never incremented) sums to 0.
func (f Families) Sum(name string, labels map[string]string) float64 {
	fam, ok := f[name]
	if !ok {
		return 0
	}
	total := 0.0
	for _, m := range fam.Metric {
		if includes(labelsOf(m), labels) {
			total += value(m)
		}
	}
	return total
}

// Has says whether the family exists in the scrape.
func (f Families) Has(name string) bool { _, ok := f[name]; return ok }

// Series returns every sample of a family keyed by its labels rendered as
// "k=v,k=v" (sorted), leaving out zero-valued series.
func (f Families) Series(name string) map[string]float64 {
	return f.SeriesWith(name, nil)
}

// SeriesWith is Series of the samples whose labels include every given
// label: the part of a gauge one kind of object makes up.
func (f Families) SeriesWith(name string, labels map[string]string) map[string]float64 {
	out := map[string]float64{}
	fam, ok := f[name]
	if !ok {
		return out
	}
	for _, m := range fam.Metric {
		have := labelsOf(m)
		if v := value(m); v != 0 && includes(have, labels) {
			out[Key(have)] += v
		}
	}
	return out
}

func includes(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// Key renders labels as "k=v,k=v", sorted by name.
func Key(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}

// Claim is what the resource_claims gauge looks at in one ResourceClaim.
type Claim struct {
	Allocated        bool
	AdminAccess      bool
	FromTemplate     bool // has the resource.kubernetes.io/pod-claim-name annotation
	ExtendedResource bool
}

// Source values of the resource_claims gauge (1.35+): a claim kube-scheduler
// made for a pod's extended resources (annotation
// resource.kubernetes.io/extended-resource-claim "true"), one
// kube-controller-manager made from a pod's template, or a user's.
const (
	SourceExtendedResource = "extended_resource"
	SourceTemplate         = "resource_claim_template"
	SourceUser             = ""
)

// Source is the claim's source label; the extended-resource annotation
// wins over the template's, as in the collector.
func (c Claim) Source() string {
	switch {
	case c.ExtendedResource:
		return SourceExtendedResource
	case c.FromTemplate:
		return SourceTemplate
	}
	return SourceUser
}

// ExpectedClaimGauge is resource_claims as kube-controller-manager of 1.34+
// computes it from its claim cache (pkg/controller/resourceclaim/controller.go,
// customCollector): one series per (allocated, admin_access[, source]).
func ExpectedClaimGauge(claims []Claim, withSource bool) map[string]float64 {
	out := map[string]float64{}
	for _, c := range claims {
		labels := map[string]string{"allocated": fmt.Sprint(c.Allocated), "admin_access": fmt.Sprint(c.AdminAccess)}
		if withSource {
			labels["source"] = c.Source()
		}
		out[Key(labels)]++
	}
	return out
}
