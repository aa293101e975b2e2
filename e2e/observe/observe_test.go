package observe

import (
	"reflect"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

func TestClaimReaders(t *testing.T) {
	c := &resourceapi.ResourceClaim{}
	c.Spec.Devices.Requests = []resourceapi.DeviceRequest{{Name: "a", Exactly: &resourceapi.ExactDeviceRequest{}}, {Name: "b", Exactly: &resourceapi.ExactDeviceRequest{AdminAccess: ptr.To(true)}}}
	if !RequestsAdminAccess(c) {
		t.Fatal("the second request asks for admin access")
	}
	if AdminAccessResults(c) != nil || AllocatedDevices(c) != nil {
		t.Fatal("no allocation: no results")
	}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "a", Pool: "node-1", Device: "dev-0"},
		{Request: "b", Pool: "node-1", Device: "dev-0", AdminAccess: ptr.To(true)},
	}}}
	if got := AdminAccessResults(c); !reflect.DeepEqual(got, []bool{false, true}) {
		t.Fatalf("AdminAccessResults = %v", got)
	}
	if got := AllocatedDevices(c); !reflect.DeepEqual(got, []string{"node-1/dev-0", "node-1/dev-0"}) {
		t.Fatalf("AllocatedDevices = %v", got)
	}
}

func TestRequestsAdminAccessFieldsSayWhatWasStored(t *testing.T) {
	yes, no := true, false
	devices := resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
		{Name: "a", Exactly: &resourceapi.ExactDeviceRequest{AdminAccess: &yes}},
		{Name: "b", Exactly: &resourceapi.ExactDeviceRequest{AdminAccess: &no}},
		{Name: "c", Exactly: &resourceapi.ExactDeviceRequest{}},
		{Name: "d", FirstAvailable: []resourceapi.DeviceSubRequest{{Name: "x"}}},
	}}
	if got := RequestsAdminAccessFields(devices); strings.Join(got, ",") != "true,false,unset,-" {
		t.Errorf("got %v", got)
	}
}
