// SPDX-License-Identifier: Apache-2.0

package release

// Kubernetes 1.35, read in the v1.35.4 module and its
// k8s.io/dynamic-resource-allocation v0.35.4, and re-read at v1.35.8, the
// patch kind publishes, which the offline build pins too: no fact below
// changed and each declared defect is still present (1.35.8 fixes a
// kube-scheduler panic on an allocationMode All claim of a device with
// counters, #138989, which no spec here asks for).
func init() {
	register(Release{
		Minor: "1.35", Version: "1.35.8",
		Published:         "kindest/node:v1.35.8@sha256:07b2536e30b803ed61d1677a79df6115f798ce64c80f9e22f6ed45afd09323c0",
		Served:            []string{"v1"},
		ClaimQuotaVersion: "v1",
		GateState:         Beta,
		AdminLabel:        labelBeta, StaleLabel: labelAlpha,
		KubeletFailCgroupV1: true,
		// DRAResourceClaimDeviceStatus is on, DRADeviceBindingConditions alpha and off.
		OnByDefault: []Feature{FeatureAdminAccess, FeaturePrioritizedList},
		// stable still supports nothing, so it never serves admin access
		// and no move reaches it.
		DefaultAllocator: "incubating",
		Allocators: []Allocator{
			{Name: "stable"},
			{Name: "incubating", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints}},
			{Name: "experimental", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity}},
		},
		// DRAConsumableCapacity is alpha and off.
		FeatureMoves: []FeatureMove{{Allocator: "experimental", Gates: map[string]bool{string(FeatureConsumableCapacity): true}}},
		Unreachable:  map[string]string{"stable": "it supports no feature, and admin access is one (allocator_stable.go, SupportedFeatures)"},
		Sets: []ClusterSet{alphaSet("1.35", "experimental", "",
			"DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaintRules", "DRADeviceTaints", "DRAExtendedResource", "DRAPartitionableDevices")},
		Metrics:   countingSchedulerCreates(withSource(metricsLabelled)),
		Immutable: Immutability{ClaimSpec: SpecPrintJSON, TemplateSpec: SpecPrintJSON, Allocation: SpecPrintJSON},
		// With FEATURES=alpha (or the move to experimental): partitionable
		// devices and consumable capacity are alpha here.
		Defects: []DefectAt{
			{Case: DefectAdminConsumesCounters, Allocators: []string{"stable", "incubating", "experimental"}, SeenAt: []string{"1.35.4"}},
			{Case: DefectAdminConsumesCapacity, Allocators: []string{"experimental"}, SeenAt: []string{"1.35.4"}},
			// Wherever kube-scheduler runs without the gate (gate-switching).
			{Case: DefectGateOffFalseIsAdmin, Allocators: []string{"incubating", "experimental"}, SeenAt: []string{"1.35.8"}},
		},
	})
}
