// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"reflect"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func slice(driver, node, pool string, devices ...resourceapi.Device) resourceapi.ResourceSlice {
	s := resourceapi.ResourceSlice{Spec: resourceapi.ResourceSliceSpec{Driver: driver, Pool: resourceapi.ResourcePool{Name: pool}, Devices: devices}}
	if node != "" {
		s.Spec.NodeName = ptr.To(node)
	}
	return s
}

func device(name, model string) resourceapi.Device {
	return resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To(model)}}}
}

func class(exprs ...string) *resourceapi.DeviceClass {
	dc := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}
	for _, e := range exprs {
		dc.Spec.Selectors = append(dc.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: e}})
	}
	return dc
}

// The class's selectors decide which of the driver's devices the specs
// claim; another driver's slices and a slice of no node never count. A
// node the driver publishes on keeps its place with no device selected.
func TestSelectDevices(t *testing.T) {
	slices := []resourceapi.ResourceSlice{
		slice("gpu.example.com", "node-b", "pool-b", device("gpu-1", "a100"), device("gpu-0", "h100")),
		slice("gpu.example.com", "node-a", "pool-a", device("gpu-0", "a100")),
		slice("gpu.example.com", "node-c", "pool-c", device("gpu-0", "h100")),
		slice("other.example.com", "node-a", "pool-o", device("x", "a100")),
		slice("gpu.example.com", "", "network", device("net-0", "a100")),
	}
	got, published, err := selectDevices(context.Background(), class(`device.driver == "gpu.example.com"`, `device.attributes["gpu.example.com"].model == "a100"`), slices, "gpu.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if published != 4 {
		t.Errorf("published %d, want 4 (node-local devices of the driver)", published)
	}
	a100 := map[string]string{"model": "a100"}
	want := map[string][]Device{
		"node-a": {{Driver: "gpu.example.com", Pool: "pool-a", Name: "gpu-0", Attributes: a100}},
		"node-b": {{Driver: "gpu.example.com", Pool: "pool-b", Name: "gpu-1", Attributes: a100}},
		"node-c": nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("selected %v, want %v", got, want)
	}
	v := VendorDriver{Devices: map[string][]Device{"node-a": {{Pool: "p", Name: "1"}}, "node-b": {{Pool: "p", Name: "1"}, {Pool: "p", Name: "2"}}, "node-c": nil}}
	if n := v.Nodes(); len(n) != 2 || n[0] != "node-b" || n[1] != "node-a" {
		t.Errorf("Nodes() = %v, want the node with most devices first", n)
	}
	if n := v.PublishedNodes(); !reflect.DeepEqual(n, []string{"node-a", "node-b", "node-c"}) {
		t.Errorf("PublishedNodes() = %v", n)
	}
	if c := v.Counts(); c != "node-b: 2, node-a: 1" {
		t.Errorf("Counts() = %q", c)
	}
	if _, _, err := selectDevices(context.Background(), class(`device.driver ==`), slices, "gpu.example.com"); err == nil || !strings.Contains(err.Error(), "selector 0 does not compile") {
		t.Errorf("a broken selector: %v", err)
	}
}

// ADMIN_CHECK is told each attribute as a string, whatever its kind; a
// slice entry that consumes counters is marked.
func TestSelectDevicesAttributesAndCounters(t *testing.T) {
	d := resourceapi.Device{Name: "gpu-0-mig-1", Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"gpu.example.com/uuid": {StringValue: ptr.To("GPU-0")}, "memory": {IntValue: ptr.To(int64(40))},
		"mig": {BoolValue: ptr.To(true)}, "driverVersion": {VersionValue: ptr.To("1.2.3")}},
		ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: "gpu-0"}}}
	got, _, err := selectDevices(context.Background(), class(), []resourceapi.ResourceSlice{slice("gpu.example.com", "node-a", "pool-a", d)}, "gpu.example.com")
	if err != nil {
		t.Fatal(err)
	}
	want := Device{Driver: "gpu.example.com", Pool: "pool-a", Name: "gpu-0-mig-1", SharesCounters: true,
		Attributes: map[string]string{"gpu.example.com/uuid": "GPU-0", "memory": "40", "mig": "true", "driverVersion": "1.2.3"}}
	if len(got["node-a"]) != 1 || !reflect.DeepEqual(got["node-a"][0], want) {
		t.Errorf("selected %v, want %v", got["node-a"], want)
	}
	v := VendorDriver{Devices: got}
	if d, ok := v.Device("gpu.example.com", "pool-a", "gpu-0-mig-1"); !ok || d.Attributes["memory"] != "40" {
		t.Errorf("Device() = %v, %t", d, ok)
	}
	if _, ok := v.Device("other.example.com", "pool-a", "gpu-0-mig-1"); ok {
		t.Error("Device() found another driver's device")
	}
}
