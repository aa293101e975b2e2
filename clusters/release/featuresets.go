// SPDX-License-Identifier: Apache-2.0

package release

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A cluster's DRA feature set (make e2e FEATURES=...) is the other DRA gates
// every component runs with besides DRAAdminAccess: the release's defaults,
// or a set that makes kube-scheduler use another allocator implementation
// for the whole run. FeatureMove moves kube-scheduler alone inside one spec
// group; a cluster set is the cluster every spec of the run meets, so each
// component that reads a gate gets it (kube-apiserver drops the fields of a
// gate that is off, the kubelet prepares what the scheduler allocated).

// ClusterSet is one named DRA feature set a cluster is created with.
type ClusterSet struct {
	// Name is what FEATURES takes ("stable", "alpha").
	Name string
	// Description says what the set is for, for `e2e-cluster features`
	// and the report.
	Description string
	// Gates are set in kube-apiserver, kube-controller-manager,
	// kube-scheduler and the kubelets.
	Gates map[string]bool
	// RuntimeConfig are the resource.k8s.io versions the set's gates need
	// (DeviceTaintRule, ResourcePoolStatusRequest are v1alpha3).
	RuntimeConfig map[string]string
	// Allocator is the implementation the set selects, as the release's
	// file states it; a test holds it to the rule.
	Allocator string
}

// DefaultSet is the name FEATURES gives the release's own defaults.
const DefaultSet = "defaults"

// v1alpha3 serves DeviceTaintRule (DRADeviceTaintRules, and on 1.34
// DRADeviceTaints) and, from 1.36, ResourcePoolStatusRequest
// (DRAResourcePoolStatus): pkg/registry/resource/rest/storage_resource.go.
var v1alpha3 = map[string]string{"resource.k8s.io/v1alpha3": "true"}

// alphaSet is every DRA alpha gate of the release (pkg/features/
// kube_features.go at the pinned patch) that depends on nothing outside DRA:
// DRAWorkloadResourceClaims needs GenericWorkload and DRAOptionalNodeOperations
// NodeDeclaredFeatures, which are not DRA features and would bring their own
// APIs, so they stay off.
func alphaSet(minor, allocator, why string, gates ...string) ClusterSet {
	m := map[string]bool{}
	for _, g := range gates {
		m[g] = true
	}
	selects := "kube-scheduler uses the " + allocator + " allocator"
	if why != "" {
		selects = "kube-scheduler still uses " + allocator + ": " + why
	}
	return ClusterSet{Name: "alpha", Gates: m, RuntimeConfig: v1alpha3, Allocator: allocator,
		Description: fmt.Sprintf("every DRA alpha gate of %s on, with resource.k8s.io/v1alpha3 (%s)", minor, selects)}
}

// stableSet is a FeatureMove's gates in every component.
func stableSet(m FeatureMove) ClusterSet {
	return ClusterSet{Name: "stable", Gates: m.Gates, Allocator: m.Allocator,
		Description: "consumable capacity and binding conditions off, so that kube-scheduler uses the stable allocator"}
}

// SetNames lists the feature sets FEATURES takes on this release.
func (r Release) SetNames() []string {
	out := []string{DefaultSet}
	for _, s := range r.Sets {
		out = append(out, s.Name)
	}
	return out
}

// Set is the cluster set of that name ("" or DefaultSet: none).
func (r Release) Set(name string) (ClusterSet, error) {
	if name == "" || name == DefaultSet {
		return ClusterSet{Name: DefaultSet, Description: "the release's own DRA defaults"}, nil
	}
	for _, s := range r.Sets {
		if s.Name == name {
			return s, nil
		}
	}
	return ClusterSet{}, fmt.Errorf("unknown feature set %q for Kubernetes %s: FEATURES takes %s", name, r.Minor, strings.Join(r.SetNames(), ", "))
}

// WithFeatures is the release as a cluster of that feature set runs it: the
// set's gates join ExtraGates (so every component gets them), its API
// versions join RuntimeConfig and Served, and the scheduler's features, the
// extended-resource flag and the default set's name follow. A cluster set
// replaces the allocators group's moves (they move from the defaults); the
// group then checks the set's own allocator.
func (r Release) WithFeatures(name string) (Release, error) {
	s, err := r.Set(name)
	if err != nil || s.Name == DefaultSet {
		return r, err
	}
	r.FeatureSetName = s.Name
	r.ExtraGates = maps.Clone(r.ExtraGates)
	if r.ExtraGates == nil {
		r.ExtraGates = map[string]bool{}
	}
	maps.Copy(r.ExtraGates, s.Gates)
	r.RuntimeConfig = maps.Clone(r.RuntimeConfig)
	if r.RuntimeConfig == nil {
		r.RuntimeConfig = map[string]string{}
	}
	maps.Copy(r.RuntimeConfig, s.RuntimeConfig)
	for gv := range s.RuntimeConfig {
		if v, ok := strings.CutPrefix(gv, "resource.k8s.io/"); ok && !slices.Contains(r.Served, v) {
			// Discovery still prefers the GA version: keep it last.
			r.Served = append([]string{v}, r.Served...)
		}
	}
	features := slices.Clone(r.OnByDefault)
	for g, on := range s.Gates {
		f := Feature(g)
		if !r.schedulerPasses(f) {
			continue
		}
		features = slices.DeleteFunc(features, func(x Feature) bool { return x == f })
		if on {
			features = append(features, f)
		}
	}
	slices.Sort(features[1:]) // admin access first, as in the table
	r.OnByDefault = features
	if v, ok := s.Gates["DRAExtendedResource"]; ok {
		r.ExtendedResources = v
	}
	r.FeatureMoves = nil
	return r, nil
}

// schedulerPasses says whether kube-scheduler hands the feature to the
// allocator (AllocatorFeatures in plugins/dynamicresources): any feature an
// implementation supports, but those SchedulerIgnores names.
func (r Release) schedulerPasses(f Feature) bool {
	if slices.Contains(r.SchedulerIgnores, f) {
		return false
	}
	for _, a := range r.Allocators {
		if slices.Contains(a.Supports, f) {
			return true
		}
	}
	return false
}

// Resolve is Get and WithFeatures: the release a run of FEATURES=features
// on K8S_VERSION=name meets.
func Resolve(name, features string) (Release, error) {
	r, err := Get(name)
	if err != nil {
		return r, err
	}
	return r.WithFeatures(features)
}
