// SPDX-License-Identifier: Apache-2.0

// Package observe reads what the cluster did with the objects package
// builder made: a claim's allocation results, and the driver's variables a
// pod's workload printed (in the format of package contract).
package observe

import (
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// ContainerEnv is what one container of a pod printed: the driver's
// variables. The second result is false until the workload said it is ready.
func ContainerEnv(ctx context.Context, client kubernetes.Interface, namespace, pod, container string) (map[string]string, bool, error) {
	raw, err := client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	if err != nil {
		return nil, false, err
	}
	return contract.ParseOutput(string(raw))
}

// AdminAccessResults reports, per allocation result of the claim, whether it
// carries adminAccess: true.
func AdminAccessResults(c *resourceapi.ResourceClaim) []bool {
	if c.Status.Allocation == nil {
		return nil
	}
	var out []bool
	for _, r := range c.Status.Allocation.Devices.Results {
		out = append(out, r.AdminAccess != nil && *r.AdminAccess)
	}
	return out
}

// ResultsAdminAccessFields lists AdminAccessField of each allocation result
// of the claim, so that a stored false reads apart from an unset field.
func ResultsAdminAccessFields(c *resourceapi.ResourceClaim) []string {
	if c.Status.Allocation == nil {
		return nil
	}
	var out []string
	for _, r := range c.Status.Allocation.Devices.Results {
		out = append(out, AdminAccessField(r.AdminAccess))
	}
	return out
}

// AllocatedDevices lists "pool/device" of a claim's allocation.
func AllocatedDevices(c *resourceapi.ResourceClaim) []string {
	if c.Status.Allocation == nil {
		return nil
	}
	var out []string
	for _, r := range c.Status.Allocation.Devices.Results {
		out = append(out, r.Pool+"/"+r.Device)
	}
	return out
}

// Shares describes each result's share of a device that allows multiple
// allocations: "share of <capacity>" with what the result says it consumes
// of name, or "whole device" for a result with no share ID. A spec compares
// it whole, so a result that lost its share or its consumed capacity shows.
func Shares(c *resourceapi.ResourceClaim, name string) []string {
	if c.Status.Allocation == nil {
		return nil
	}
	var out []string
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.ShareID == nil {
			out = append(out, "whole device")
			continue
		}
		q, ok := r.ConsumedCapacity[resourceapi.QualifiedName(name)]
		if !ok {
			out = append(out, "share of no "+name)
			continue
		}
		out = append(out, "share of "+q.String())
	}
	return out
}

// RequestsAdminAccess is true when the stored claim still asks for admin access
// (an apiserver with the gate off drops the field on create).
func RequestsAdminAccess(c *resourceapi.ResourceClaim) bool {
	for _, r := range c.Spec.Devices.Requests {
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return true
		}
	}
	return false
}

// AdminAccessField says what a stored adminAccess is, "unset", "true" or
// "false", so that a failed check says what was stored rather than only
// that a pointer was not nil.
func AdminAccessField(v *bool) string {
	if v == nil {
		return "unset"
	}
	return strconv.FormatBool(*v)
}

// RequestsAdminAccessFields lists AdminAccessField of each request of a
// claim's (or a template's) devices, "-" for a request that is not exact.
func RequestsAdminAccessFields(devices resourceapi.DeviceClaim) []string {
	var out []string
	for _, r := range devices.Requests {
		if r.Exactly == nil {
			out = append(out, "-")
			continue
		}
		out = append(out, AdminAccessField(r.Exactly.AdminAccess))
	}
	return out
}
