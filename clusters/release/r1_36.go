// SPDX-License-Identifier: Apache-2.0

package release

// Kubernetes 1.36, read in the v1.36.3 module and its
// k8s.io/dynamic-resource-allocation v0.36.3, and re-read at v1.36.4, the
// patch kind publishes, which the offline build pins too: no fact below
// changed, no cited line moved, each declared defect is still present
// (1.36.4 keys the allocators' counter caches by driver and pool).
func init() {
	// DRADeviceBindingConditions off is enough to drop DeviceBindingAndStatus.
	toStable := FeatureMove{Allocator: "stable", Gates: map[string]bool{
		string(FeatureConsumableCapacity): false, string(FeatureBindingConditions): false}}
	register(Release{
		Minor: "1.36", Version: "1.36.4",
		Published:         "kindest/node:v1.36.4@sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed",
		Served:            []string{"v1"},
		ClaimQuotaVersion: "v1",
		GateState:         GALocked,
		AdminLabel:        labelBeta, StaleLabel: labelAlpha,
		KubeletFailCgroupV1: true,
		KubeadmV1Beta4:      true,
		// Every DRA gate but the alpha DRAListTypeAttributes is beta or GA and on.
		OnByDefault: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
			FeatureBindingConditions, FeatureConsumableCapacity},
		// stable has 1.35's incubating set, incubating adds binding
		// conditions and consumable capacity, experimental list-type
		// attributes. Experimental is not reachable: kube-scheduler never
		// passes DRAListTypeAttributes to the allocator.
		DefaultAllocator: "incubating",
		Allocators: []Allocator{
			{Name: "stable", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints}},
			{Name: "incubating", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity}},
			{Name: "experimental", Supports: []Feature{FeatureAdminAccess, FeaturePrioritizedList, FeaturePartitionableDevices, FeatureDeviceTaints,
				FeatureBindingConditions, FeatureConsumableCapacity, FeatureListTypeAttributes}},
		},
		FeatureMoves: []FeatureMove{toStable},
		Unreachable:  map[string]string{"experimental": "kube-scheduler never passes DRAListTypeAttributes to the allocator (AllocatorFeatures in plugins/dynamicresources), so no gate selects it"},
		Sets: []ClusterSet{stableSet(toStable), alphaSet("1.36", "incubating", "it passes no alpha feature to the allocator",
			"DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAResourcePoolStatus")},
		// v1.36.3's AllocatorFeatures has no ListTypeAttributes.
		SchedulerIgnores:  []Feature{FeatureListTypeAttributes},
		ExtendedResources: true,
		Metrics:           countingSchedulerCreates(forgettingDeleted(withSource(metricsLabelled))),
		Immutable:         Immutability{ClaimSpec: SpecPrintJSON, TemplateSpec: SpecPrintJSON, Allocation: SpecPrintJSON},
		Defects: []DefectAt{
			{Case: DefectAdminConsumesCounters, Allocators: []string{"stable", "incubating", "experimental"}, SeenAt: []string{"1.36.3"}},
			{Case: DefectAdminConsumesCapacity, Allocators: []string{"incubating", "experimental"}, SeenAt: []string{"1.36.3"}},
		},
	})
}
