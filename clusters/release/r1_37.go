// SPDX-License-Identifier: Apache-2.0

package release

// Kubernetes 1.37, read in the v1.37.2 module and its
// k8s.io/dynamic-resource-allocation v0.37.2: the gate is still GA and
// locked (removal planned for 1.39), the label key and denial text are
// 1.36's, v1 is the only resource.k8s.io version on by default; metric
// names changed.
func init() {
	// DRAFractionalCapacityRange needs DRAConsumableCapacity, so both go.
	toStable := FeatureMove{Allocator: "stable", Gates: map[string]bool{string(FeatureConsumableCapacity): false,
		string(FeatureFractionalCapacityRange): false, string(FeatureBindingConditions): false}}
	register(Release{
		Minor: "1.37", Version: "1.37.2",
		// kind v0.33.0's default image (pkg/apis/config/defaults/image.go in its module).
		Published:         "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5",
		Served:            []string{"v1"},
		ClaimQuotaVersion: "v1",
		GateState:         GALocked,
		AdminLabel:        labelBeta, StaleLabel: labelAlpha,
		KubeletFailCgroupV1: true,
		KubeadmV1Beta4:      true,
		// DRAFractionalCapacityRange is beta and on at emulation version 1.37.
		OnByDefault: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
			FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange},
		// incubating adds the fractional capacity range, experimental four
		// alpha features; v1.37.2's AllocatorFeatures passes list-type
		// attributes, so a move reaches experimental.
		DefaultAllocator: "incubating",
		Allocators: []Allocator{
			{Name: "stable", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints}},
			{Name: "incubating", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange}},
			{Name: "experimental", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity, FeatureFractionalCapacityRange,
				FeatureListTypeAttributes, FeatureOptionalNodeOperations, FeatureDerivedAttributes, FeatureCompatibilityGroups}},
		},
		FeatureMoves: []FeatureMove{toStable, {Allocator: "experimental", Gates: map[string]bool{string(FeatureListTypeAttributes): true}}},
		Sets: []ClusterSet{stableSet(toStable), alphaSet("1.37", "experimental", "",
			"DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAListTypeAttributes", "DRANodeAllocatableResources",
			"DRAPartitionableDevicesType", "DRAResourcePoolStatus")},
		ExtendedResources: true,
		Metrics:           metricsDRA,
		// A claim's spec is validated declaratively (DeclarativeValidationBeta,
		// on by default): its immutability error carries no value, and so does
		// the allocation's NoModify; templates keep the hand-written check.
		Immutable: Immutability{ClaimSpec: SpecPrintNull, TemplateSpec: SpecPrintJSON, Allocation: SpecPrintNull},
		Defects: []DefectAt{
			{Case: DefectAdminConsumesCounters, Allocators: []string{"stable", "incubating", "experimental"}, SeenAt: []string{"1.37.2"}},
			{Case: DefectAdminConsumesCapacity, Allocators: []string{"incubating", "experimental"}, SeenAt: []string{"1.37.2"}},
		},
	})
}
