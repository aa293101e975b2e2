// SPDX-License-Identifier: Apache-2.0

package release

// Kubernetes 1.34, read in the v1.34.4 module and its
// k8s.io/dynamic-resource-allocation v0.34.4, and re-read at v1.34.11, the
// patch kind publishes, which the offline build pins too: every file a fact
// below cites is the same there, and each declared defect is still present.
func init() {
	register(Release{
		Minor: "1.34", Version: "1.34.11",
		Published:         "kindest/node:v1.34.11@sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d",
		Served:            []string{"v1"},
		ClaimQuotaVersion: "v1",
		GateState:         Beta,
		AdminLabel:        labelBeta, StaleLabel: labelAlpha,
		OnByDefault: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeatureDeviceStatus},
		// stable supports nothing; experimental has binding conditions and
		// device status apart. DRAResourceClaimDeviceStatus is beta and on,
		// so the scheduler's default set selects experimental.
		DefaultAllocator: "experimental",
		Allocators: []Allocator{
			{Name: "stable"},
			{Name: "incubating", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints}},
			{Name: "experimental", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureDeviceStatus, FeatureConsumableCapacity}},
		},
		// Stable is not reachable: it supports no feature, and admin access is one.
		FeatureMoves: []FeatureMove{{Allocator: "incubating", Gates: map[string]bool{string(FeatureDeviceStatus): false}}},
		Unreachable:  map[string]string{"stable": "it supports no feature, and admin access is one (allocator_stable.go, SupportedFeatures)"},
		Sets: []ClusterSet{alphaSet("1.34", "experimental", "",
			"DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaints", "DRAExtendedResource", "DRAPartitionableDevices")},
		// Published in 1.35's shape, the partitionable driver's device
		// slices were refused and its pools stayed incomplete.
		CountersWithDevices: true,
		EvictionEventOnce:   true,
		Metrics:             metricsLabelled,
		Immutable:           Immutability{ClaimSpec: SpecPrintJSON, TemplateSpec: SpecPrintJSON, Allocation: SpecPrintJSON},
		// Each with FEATURES=alpha: partitionable devices, consumable
		// capacity, device taints and extended resources are alpha here.
		Defects: []DefectAt{
			{Case: DefectAdminConsumesCounters, Allocators: []string{"stable", "incubating", "experimental"}},
			{Case: DefectAdminConsumesCapacity, Allocators: []string{"experimental"}},
			{Case: DefectNoExecuteToleranceLost, Allocators: []string{"incubating", "experimental"}},
			{Case: DefectImplicitExtendedResourceIgnored, Allocators: []string{"incubating", "experimental"}},
			// Wherever kube-scheduler runs without the gate (gate-switching).
			{Case: DefectGateOffFalseIsAdmin, Allocators: []string{"incubating", "experimental"}},
		},
	})
}
