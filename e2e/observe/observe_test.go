// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"reflect"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
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

func TestResultsAdminAccessFieldsSayWhatWasStored(t *testing.T) {
	c := &resourceapi.ResourceClaim{}
	if ResultsAdminAccessFields(c) != nil {
		t.Fatal("no allocation: no results")
	}
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Device: "dev-0", AdminAccess: ptr.To(true)}, {Device: "dev-1", AdminAccess: ptr.To(false)}, {Device: "dev-2"},
	}}}
	if got := ResultsAdminAccessFields(c); strings.Join(got, ",") != "true,false,unset" {
		t.Errorf("got %v", got)
	}
}

func TestSharesSayWhatEachResultConsumes(t *testing.T) {
	c := &resourceapi.ResourceClaim{}
	if Shares(c, "memory") != nil {
		t.Fatal("no allocation: no shares")
	}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	c.Status.Allocation.Devices.Results = []resourceapi.DeviceRequestAllocationResult{
		{Device: "whole"},
		{Device: "shared-0", ShareID: ptr.To(types.UID("s1")), ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse("2Gi")}},
		{Device: "shared-0", ShareID: ptr.To(types.UID("s2"))},
	}
	if got, want := Shares(c, "memory"), []string{"whole device", "share of 2Gi", "share of no memory"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Shares = %v, want %v", got, want)
	}
}
