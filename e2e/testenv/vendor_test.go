package testenv

import (
	"context"
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
// claim; another driver's slices and a slice of no node never count.
func TestSelectDevices(t *testing.T) {
	slices := []resourceapi.ResourceSlice{
		slice("gpu.example.com", "node-b", "pool-b", device("gpu-1", "a100"), device("gpu-0", "h100")),
		slice("gpu.example.com", "node-a", "pool-a", device("gpu-0", "a100")),
		slice("other.example.com", "node-a", "pool-o", device("x", "a100")),
		slice("gpu.example.com", "", "network", device("net-0", "a100")),
	}
	got, published, err := selectDevices(context.Background(), class(`device.driver == "gpu.example.com"`, `device.attributes["gpu.example.com"].model == "a100"`), slices, "gpu.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if published != 3 {
		t.Errorf("published %d, want 3 (node-local devices of the driver)", published)
	}
	want := map[string][]Device{"node-a": {{"pool-a", "gpu-0"}}, "node-b": {{"pool-b", "gpu-1"}}}
	if len(got) != len(want) || got["node-a"][0] != want["node-a"][0] || len(got["node-b"]) != 1 || got["node-b"][0] != want["node-b"][0] {
		t.Errorf("selected %v, want %v", got, want)
	}
	v := VendorDriver{Devices: map[string][]Device{"node-a": {{"p", "1"}}, "node-b": {{"p", "1"}, {"p", "2"}}, "node-c": nil}}
	if n := v.Nodes(); len(n) != 2 || n[0] != "node-b" || n[1] != "node-a" {
		t.Errorf("Nodes() = %v, want the node with most devices first", n)
	}
	if c := v.Counts(); c != "node-b: 2, node-a: 1" {
		t.Errorf("Counts() = %q", c)
	}
	if _, _, err := selectDevices(context.Background(), class(`device.driver ==`), slices, "gpu.example.com"); err == nil || !strings.Contains(err.Error(), "selector 0 does not compile") {
		t.Errorf("a broken selector: %v", err)
	}
}
