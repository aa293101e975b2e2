// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"reflect"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// claim is an allocated claim; each result is driver/pool/device, with
// "+admin" for admin access.
func claim(ns, name string, results ...string) resourceapi.ResourceClaim {
	c := resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{}}}
	for _, r := range results {
		r, admin := strings.CutSuffix(r, "+admin")
		parts := strings.Split(r, "/")
		res := resourceapi.DeviceRequestAllocationResult{Request: "req-0", Driver: parts[0], Pool: parts[1], Device: parts[2]}
		if admin {
			res.AdminAccess = ptr.To(true)
		}
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, res)
	}
	return c
}

func gpus(pool string, names ...string) []Device {
	var out []Device
	for _, n := range names {
		out = append(out, Device{Driver: "gpu.example.com", Pool: pool, Name: n})
	}
	return out
}

// A device is in use where an ordinary result names its driver, pool and
// name; admin access, an unallocated claim, another driver's or another
// pool's device of the same name leave it free.
func TestDevicesInUse(t *testing.T) {
	devices := map[string][]Device{"node-a": gpus("node-a", "gpu-0", "gpu-1"), "node-b": gpus("node-b", "gpu-0"), "node-c": nil}
	unallocated := claim("ns", "pending")
	unallocated.Status.Allocation = nil
	claims := []resourceapi.ResourceClaim{
		claim("team", "train", "gpu.example.com/node-a/gpu-1", "gpu.example.com/node-a/gpu-0"),
		claim("monitoring", "watch", "gpu.example.com/node-b/gpu-0+admin"),
		claim("other", "nic", "nic.example.com/node-b/gpu-0", "gpu.example.com/elsewhere/gpu-0"),
		unallocated,
	}
	got := devicesInUse(devices, claims)
	want := map[string][]DeviceUse{"node-a": {{"gpu-0", "team/train"}, {"gpu-1", "team/train"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("devicesInUse = %v, want %v", got, want)
	}
	v := VendorDriver{Devices: devices, InUse: got}
	if free := v.FreeNodes(); !reflect.DeepEqual(free, []string{"node-b"}) {
		t.Errorf("FreeNodes() = %v, want node-b (node-c has no device of the class)", free)
	}
	if err := refuseAllInUse("gpu", devices, got); err != nil {
		t.Errorf("node-b is free: %v", err)
	}
	if devicesInUse(devices, nil) != nil {
		t.Error("no claims, yet devices in use")
	}
}

// With every node busy the run is refused in one line naming the claims.
func TestRefuseAllInUse(t *testing.T) {
	devices := map[string][]Device{"node-a": gpus("node-a", "gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4"), "node-b": gpus("node-b", "gpu-0")}
	inUse := devicesInUse(devices, []resourceapi.ResourceClaim{
		claim("team", "big", "gpu.example.com/node-a/gpu-0", "gpu.example.com/node-a/gpu-1", "gpu.example.com/node-a/gpu-2", "gpu.example.com/node-a/gpu-3"),
		claim("team", "small", "gpu.example.com/node-b/gpu-0"),
	})
	err := refuseAllInUse("gpu", devices, inUse)
	want := "DEVICE_CLASS=gpu: on every node some of the class's devices are in use (node-a: gpu-0 by team/big, gpu-1 by team/big, gpu-2 by team/big, 1 more; node-b: gpu-0 by team/small)"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal %v, want one line starting %q", err, want)
	}
}

// A class that selects devices drawing on shared counters is refused in
// one line naming them; one without is not.
func TestRefuseSharedCounters(t *testing.T) {
	devices := map[string][]Device{"node-b": gpus("node-b", "gpu-0"), "node-a": gpus("node-a", "gpu-0", "gpu-0-mig-1", "gpu-0-mig-2")}
	if err := refuseSharedCounters("gpu", devices); err != nil {
		t.Errorf("no counters: %v", err)
	}
	for _, i := range []int{1, 2} {
		devices["node-a"][i].SharesCounters = true
	}
	err := refuseSharedCounters("gpu", devices)
	if err == nil || !strings.HasPrefix(err.Error(), "DEVICE_CLASS=gpu selects devices that consume shared counters (node-a: gpu-0-mig-1, gpu-0-mig-2): ") {
		t.Errorf("refusal: %v", err)
	}
}
