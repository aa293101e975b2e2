// SPDX-License-Identifier: Apache-2.0

package metrics

import (
	"fmt"
	"sort"
	"strings"
)

// FeatureEnabled is the family every Kubernetes component exports with the
// value of each of its feature gates (name, stage; 1 on, 0 off).
const FeatureEnabled = "kubernetes_feature_enabled"

// DRAGates is the DRA gates a component reports in f, as --feature-gates
// would set them ("DRAAdminAccess=true,DRADeviceTaints=false,…", sorted):
// what the provenance of a run names where the component's flags cannot be
// read, but its metrics can (kube-apiserver's, through the API). Empty when
// f has no such family.
func (f Families) DRAGates() string {
	fam, ok := f[FeatureEnabled]
	if !ok {
		return ""
	}
	var out []string
	for _, m := range fam.Metric {
		name := labelsOf(m)["name"]
		if strings.HasPrefix(name, "DRA") || name == "DynamicResourceAllocation" {
			out = append(out, fmt.Sprintf("%s=%t", name, value(m) == 1))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
