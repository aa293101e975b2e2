// SPDX-License-Identifier: Apache-2.0

package release

import (
	"fmt"
	"slices"
	"strings"
)

// Admin access does not live alone: kube-scheduler's structured allocator
// (k8s.io/dynamic-resource-allocation/structured) is three implementations,
// stable, incubating and experimental, each with its own copy of the
// admin-access code, and NewAllocator takes the first, in that order, whose
// supported features cover every DRA feature the scheduler runs with
// (allocator.go, availableAllocators). Which one a spec met is part of its
// verdict, so the table says, per release, which features each supports and
// which the scheduler has on by default.

// Feature is a DRA feature the allocator distinguishes, named as the
// kube-scheduler feature gate that turns it on.
type Feature string

const (
	FeatureAdminAccess          Feature = Gate
	FeaturePrioritizedList      Feature = "DRAPrioritizedList"
	FeaturePartitionableDevices Feature = "DRAPartitionableDevices"
	FeatureDeviceTaints         Feature = "DRADeviceTaints"
	FeatureConsumableCapacity   Feature = "DRAConsumableCapacity"
	// FeatureBindingConditions is, from 1.35, the allocator's
	// DeviceBindingAndStatus, on when DRADeviceBindingConditions and
	// DRAResourceClaimDeviceStatus both are (AllocatorFeatures in
	// pkg/scheduler/framework/plugins/dynamicresources); 1.34 has it as two
	// features, this and FeatureDeviceStatus.
	FeatureBindingConditions Feature = "DRADeviceBindingConditions"
	FeatureDeviceStatus      Feature = "DRAResourceClaimDeviceStatus"
	// The features of 1.36 and 1.37 that only experimental (or, for the
	// fractional range, incubating of 1.37) supports.
	FeatureListTypeAttributes      Feature = "DRAListTypeAttributes"
	FeatureFractionalCapacityRange Feature = "DRAFractionalCapacityRange"
	FeatureOptionalNodeOperations  Feature = "DRAOptionalNodeOperations"
	FeatureDerivedAttributes       Feature = "DRADerivedAttributes"
	FeatureCompatibilityGroups     Feature = "DRADeviceCompatibilityGroups"
)

// Allocator is one implementation of the structured allocator.
type Allocator struct {
	Name     string
	Supports []Feature
}

// FeatureSet is the DRA features kube-scheduler runs with.
type FeatureSet struct {
	// Name says where the set comes from ("release defaults").
	Name     string
	Features []Feature
	// SchedulerGates are the gates kube-scheduler's --feature-gates names
	// beyond the profile's to run this set (none for the defaults).
	SchedulerGates map[string]bool `json:",omitempty"`
}

// FeatureMove is a DRA feature set the suite moves kube-scheduler to, besides
// the release's defaults, so that the core promises meet another allocator
// implementation: the gates that select it, and the implementation they do.
// Only kube-scheduler reads these gates for allocation; the other components
// keep theirs, as a cluster whose scheduler alone runs another set would.
type FeatureMove struct {
	Allocator string
	Gates     map[string]bool
}

// AllocatorVModule is kube-scheduler's --vmodule on every cluster the suite
// makes, for the structured allocator's files (allocator_stable.go and its
// siblings; 1.33's one implementation is allocator.go): at level 5 each
// logs "Starting allocation", so a spec sees which implementation
// allocated; at level 7 it also says why it passed over each device (the
// known-defect verdicts read their cause there, Defect.Cause). On a
// two-node cluster with a handful of devices that is some 30 lines per
// scheduling attempt.
const AllocatorVModule = "allocator*=7"

// DefaultFeatureSet is the name of a release's own defaults.
const DefaultFeatureSet = "release defaults"

// Has says whether the set turns f on.
func (s FeatureSet) Has(f Feature) bool { return slices.Contains(s.Features, f) }

// String lists the set's name and features.
func (s FeatureSet) String() string {
	fs := make([]string, len(s.Features))
	for i, f := range s.Features {
		fs[i] = string(f)
	}
	return fmt.Sprintf("%s (%s)", s.Name, strings.Join(fs, ", "))
}

// DefaultFeatures is the feature set kube-scheduler has with no DRA gate set
// but those the suite always sets (ExtraGates) and DRAAdminAccess on.
func (r Release) DefaultFeatures() FeatureSet {
	if r.FeatureSetName != "" {
		return FeatureSet{Name: "FEATURES=" + r.FeatureSetName, Features: r.OnByDefault}
	}
	return FeatureSet{Name: DefaultFeatureSet, Features: r.OnByDefault}
}

// FeatureSets are the sets the suite runs the core promises with on this
// release: the defaults first, then one per FeatureMove, each with the
// features its gates leave on (a gate named true adds its feature, false
// takes it away).
func (r Release) FeatureSets() []FeatureSet {
	out := []FeatureSet{r.DefaultFeatures()}
	for _, m := range r.FeatureMoves {
		fs := slices.Clone(r.OnByDefault)
		gates := make([]string, 0, len(m.Gates))
		for g := range m.Gates {
			gates = append(gates, g)
		}
		slices.Sort(gates)
		named := make([]string, len(gates))
		for i, g := range gates {
			fs = slices.DeleteFunc(fs, func(f Feature) bool { return f == Feature(g) })
			if m.Gates[g] {
				fs = append(fs, Feature(g))
			}
			named[i] = fmt.Sprintf("%s=%t", g, m.Gates[g])
		}
		out = append(out, FeatureSet{Name: "kube-scheduler with " + strings.Join(named, ","), Features: fs, SchedulerGates: m.Gates})
	}
	return out
}

// MovableGates are the gates any of the release's moves names: a move back
// to the defaults takes each out of kube-scheduler's flag.
func (r Release) MovableGates() []string {
	var out []string
	for _, m := range r.FeatureMoves {
		for g := range m.Gates {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}

// AllocatorFor is the implementation kube-scheduler uses with the feature
// set: the first whose supported features cover it.
func (r Release) AllocatorFor(s FeatureSet) (string, error) {
	for _, a := range r.Allocators {
		covered := true
		for _, f := range s.Features {
			covered = covered && slices.Contains(a.Supports, f)
		}
		if covered {
			return a.Name, nil
		}
	}
	return "", fmt.Errorf("no allocator of Kubernetes %s supports the feature set %s", r.Minor, s)
}
