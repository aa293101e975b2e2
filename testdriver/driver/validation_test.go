// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"fmt"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcev1 "k8s.io/kubernetes/pkg/apis/resource/v1"
	"k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// validate is kube-apiserver's own validation of one of the node's slices
// (the module's, at the pinned release, 1.35), as the publishing controller
// writes it: the pool's slice count, and the node's name on every slice of
// a node's pool.
func validate(t *testing.T, sl resourceslice.Slice, slices int) error {
	t.Helper()
	v1 := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1-slice"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:         name,
			Pool:           resourceapi.ResourcePool{Name: "node-1", ResourceSliceCount: int64(slices)},
			NodeName:       ptr.To("node-1"),
			Devices:        sl.Devices,
			SharedCounters: sl.SharedCounters,
		},
	}
	var internal resource.ResourceSlice
	if err := resourcev1.Convert_v1_ResourceSlice_To_resource_ResourceSlice(v1, &internal, nil); err != nil {
		t.Fatalf("converting: %v", err)
	}
	return validation.ValidateResourceSlice(&internal).ToAggregate()
}

// Every layout's slices must pass kube-apiserver's own validation (the
// module's, at the pinned release): a slice it refused would leave a feature
// group with no devices and a confusing wait instead of an error.
func TestEveryLayoutPassesTheAPIServersValidation(t *testing.T) {
	for _, layout := range contract.Layouts {
		d := newDriver(t)
		d.Layout = layout
		slices := d.Resources().Pools["node-1"].Slices
		for i, sl := range slices {
			if err := validate(t, sl, len(slices)); err != nil {
				t.Errorf("%s slice %d: kube-apiserver would refuse it: %v", layout, i, err)
			}
		}
	}
}

// consumedSetsInSlice is 1.34's rule for counters, which the pinned module
// no longer has: kube-apiserver at v1.34.4 gathers the counter sets of the
// slice itself (pkg/apis/resource/validation/validation.go:670) and refuses
// a device that consumes a set or counter the slice does not define (lines
// 782-793, "must reference a counterSet defined in the ResourceSlice
// sharedCounters").
func consumedSetsInSlice(sl resourceslice.Slice) error {
	sets := map[string]resourceapi.CounterSet{}
	for _, s := range sl.SharedCounters {
		sets[s.Name] = s
	}
	for _, dev := range sl.Devices {
		for _, c := range dev.ConsumesCounters {
			set, ok := sets[c.CounterSet]
			if !ok {
				return fmt.Errorf("device %s: counterSet %q: must reference a counterSet defined in the ResourceSlice sharedCounters", dev.Name, c.CounterSet)
			}
			for counter := range c.Counters {
				if _, ok := set.Counters[counter]; !ok {
					return fmt.Errorf("device %s: counter %q: must reference a counter defined in the ResourceSlice sharedCounters", dev.Name, counter)
				}
			}
		}
	}
	return nil
}

// No shape of the partitionable layout passes both releases: 1.34 wants the
// counter set beside the devices that consume it, 1.35 refuses a slice with
// both. So the driver publishes the shape it is told (the release table's
// CountersWithDevices), and each shape is refused by the other release.
func TestEachReleasesCounterShapeIsRefusedByTheOther(t *testing.T) {
	d := newDriver(t)
	d.Layout = contract.LayoutPartitionable
	d.CountersWithDevices = true
	slices := d.Resources().Pools["node-1"].Slices
	for i, sl := range slices {
		if err := consumedSetsInSlice(sl); err != nil {
			t.Errorf("1.34 shape, slice %d: 1.34's kube-apiserver would refuse it: %v", i, err)
		}
	}
	if err := validate(t, slices[0], len(slices)); err == nil || !strings.Contains(err.Error(), "only one of `sharedCounters` or `devices` is allowed") {
		t.Errorf("1.34 shape: 1.35's kube-apiserver must refuse a slice with both counters and devices, got %v", err)
	}

	d.CountersWithDevices = false
	refused := 0
	for _, sl := range d.Resources().Pools["node-1"].Slices {
		if err := consumedSetsInSlice(sl); err != nil {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("1.35 shape: 1.34's kube-apiserver refuses the devices' slice (its counter set is in the other), %d of its slices refused", refused)
	}
}
