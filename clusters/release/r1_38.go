// SPDX-License-Identifier: Apache-2.0

package release

// Kubernetes 1.38, before its release: read in the v1.38.0-beta.0 module
// and its staging modules v0.38.0-beta.0, which need Go 1.27 (go 1.27.0 in
// each go.mod; .go-version 1.27.3). Against 1.37.2: DynamicResourceAllocation
// is removed (an unrecognized gate), DRAPartitionableDevices and
// DRADeviceBindingConditions are GA and locked, DRADeviceTaints and
// DRADeviceTaintRules locked (pkg/features/kube_features.go:1352-1404);
// the allocators rotated, stable now supporting 1.37's incubating set and
// incubating and experimental every feature (allocator_*.go:73-86), so
// the defaults select stable. The label, denial text, field paths, served
// versions, immutability refusals and metric names are 1.37's.
func init() {
	register(Release{
		Minor: "1.38", Version: "1.38.0-beta.0", Toolchain: "go1.27.3",
		// kind v0.33.0 publishes none: the node image is built.
		Served:            []string{"v1"},
		ClaimQuotaVersion: "v1",
		// DRAAdminAccess is GA and locked, "remove in 1.39" (:1339).
		GateState:  GALocked,
		AdminLabel: labelBeta, StaleLabel: labelAlpha,
		Locked: []string{"DRADeviceBindingConditions", "DRADeviceTaintRules", "DRADeviceTaints", "DRAExtendedResource",
			"DRAPartitionableDevices", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus"},
		Removed:             []string{"DynamicResourceAllocation"},
		KubeletFailCgroupV1: true,
		KubeadmV1Beta4:      true,
		// Every one is GA; DRAConsumableCapacity and
		// DRAFractionalCapacityRange are not locked (until 1.39).
		OnByDefault: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
			FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange},
		DefaultAllocator: "stable",
		Allocators: []Allocator{
			{Name: "stable", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange}},
			{Name: "incubating", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange,
				FeatureListTypeAttributes, FeatureOptionalNodeOperations, FeatureDerivedAttributes, FeatureCompatibilityGroups}},
			{Name: "experimental", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange,
				FeatureListTypeAttributes, FeatureOptionalNodeOperations, FeatureDerivedAttributes, FeatureCompatibilityGroups}},
		},
		Unreachable: map[string]string{
			"experimental": "incubating supports every feature it does and is tried first (allocator.go:205-247 at v0.38.0-beta.0)",
		},
		// The defaults are stable; DRAListTypeAttributes, with no
		// dependency, selects incubating. 1.37's move to stable would turn
		// the locked DRADeviceBindingConditions off, so there is no
		// "stable" set either.
		FeatureMoves: []FeatureMove{{Allocator: "incubating", Gates: map[string]bool{string(FeatureListTypeAttributes): true}}},
		Sets: []ClusterSet{alphaSet("1.38", "incubating", "",
			"DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAListTypeAttributes", "DRANodeAllocatableResources",
			"DRAPartitionableDevicesType", "DRAResourcePoolStatus")},
		ExtendedResources: true,
		Metrics:           metricsDRA,
		Immutable:         Immutability{ClaimSpec: SpecPrintNull, TemplateSpec: SpecPrintJSON, Allocation: SpecPrintNull},
		// Both cases under every implementation: stable now has consumable
		// capacity (checkAvailableCounters, allocator_stable.go:1447-1456;
		// cmpRequestOverCapacity, :1209-1215 and :1529-1538; the same in
		// incubating and experimental at :1756-1768, :1469-1475, :1819-1828).
		Defects: []DefectAt{
			{Case: DefectAdminConsumesCounters, Allocators: []string{"stable", "incubating", "experimental"}, SeenAt: []string{"1.38.0-beta.0"}},
			{Case: DefectAdminConsumesCapacity, Allocators: []string{"stable", "incubating", "experimental"}, SeenAt: []string{"1.38.0-beta.0"}},
		},
	})
}
