// SPDX-License-Identifier: Apache-2.0

package release

// Kubernetes 1.33, read in the v1.33.13 module and its
// k8s.io/dynamic-resource-allocation v0.33.13.
func init() {
	register(Release{
		Minor: "1.33", Version: "1.33.13",
		// kind v0.33.0 publishes no 1.33 image: the node image is always built.
		// 1.33 serves no resource.k8s.io/v1; v1beta1 and v1beta2 are off by default.
		Served:            []string{"v1beta1", "v1beta2"},
		ClaimQuotaVersion: "v1beta1",
		RuntimeConfig:     map[string]string{"resource.k8s.io/v1beta1": "true", "resource.k8s.io/v1beta2": "true"},
		ExtraGates:        map[string]bool{"DynamicResourceAllocation": true},
		GateState:         Alpha,
		AdminLabel:        labelAlpha, StaleLabel: labelBeta,
		// DRAAdminAccess is alpha: on only because the suite's profiles switch it on.
		OnByDefault: []Feature{FeatureAdminAccess},
		// The structured package has one implementation and no list of
		// supported features.
		DefaultAllocator: "structured (one implementation)",
		Allocators: []Allocator{{Name: "structured (one implementation)", Supports: []Feature{
			FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints}}},
		CountersWithDevices: true,
		EvictionEventOnce:   true,
		Metrics:             metricsUnlabelled,
		Immutable:           Immutability{ClaimSpec: SpecPrintGo, TemplateSpec: SpecPrintGo, Allocation: SpecPrintGo},
		Defects: []DefectAt{
			{Case: DefectDeviceTwiceInClaim, Allocators: []string{"structured (one implementation)"}, SeenAt: []string{"1.33.13"}},
			// Wherever kube-scheduler runs without the gate (gate-switching).
			{Case: DefectGateOffFalseIsAdmin, Allocators: []string{"structured (one implementation)"}, SeenAt: []string{"1.33.13"}},
		},
	})
}
