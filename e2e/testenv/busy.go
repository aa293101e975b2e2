// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	draclient "k8s.io/dynamic-resource-allocation/client"
)

// A vendor's cluster is rarely idle. The specs that hold for any driver
// give an ordinary claim every device of a node and then reach those
// devices with admin access, so they need a node whose class devices no
// one else holds, and devices that can all be held at once. These checks
// name what stands in the way, before any spec, instead of letting the
// specs fail on it.

// DeviceUse is a device of the class that a claim holds.
type DeviceUse struct {
	Device string // its name in its pool
	Claim  string // namespace/name
}

// devicesInUse is, per node, the class's devices that an allocated claim
// holds. An admin-access result holds nothing (that is the KEP's promise),
// so it leaves a device free; a device that allows several allocations is
// counted as held all the same, since the specs' claim for every device of
// a node may not fit beside another's share.
func devicesInUse(devices map[string][]Device, claims []resourceapi.ResourceClaim) map[string][]DeviceUse {
	type key struct{ driver, pool, name string }
	nodeOf := map[key]string{}
	for node, ds := range devices {
		for _, d := range ds {
			nodeOf[key{d.Driver, d.Pool, d.Name}] = node
		}
	}
	out := map[string][]DeviceUse{}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			if node, ok := nodeOf[key{r.Driver, r.Pool, r.Device}]; ok {
				out[node] = append(out[node], DeviceUse{Device: r.Device, Claim: c.Namespace + "/" + c.Name})
			}
		}
	}
	for n := range out {
		sort.Slice(out[n], func(i, j int) bool {
			a, b := out[n][i], out[n][j]
			return a.Device < b.Device || a.Device == b.Device && a.Claim < b.Claim
		})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// inUseText is "node-a: gpu-0 by ns/claim, gpu-1 by ns/other; node-b: …",
// nodes by name, at most three devices a node, for one line.
func inUseText(inUse map[string][]DeviceUse) string {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(inUse)) {
		var uses []string
		for i, u := range inUse[n] {
			if i == 3 {
				uses = append(uses, fmt.Sprintf("%d more", len(inUse[n])-3))
				break
			}
			uses = append(uses, u.Device+" by "+u.Claim)
		}
		parts = append(parts, n+": "+strings.Join(uses, ", "))
	}
	return strings.Join(parts, "; ")
}

// refuseAllInUse refuses a run where no node with devices of the class
// has all of them free.
func refuseAllInUse(class string, devices map[string][]Device, inUse map[string][]DeviceUse) error {
	v := VendorDriver{Devices: devices, InUse: inUse}
	if len(v.FreeNodes()) > 0 {
		return nil
	}
	return fmt.Errorf("DEVICE_CLASS=%s: on every node some of the class's devices are in use (%s), and the specs hold every device of a node: "+
		"free the class's devices of one node (delete or move the claims named), or give a DEVICE_CLASS that selects idle devices", class, inUseText(inUse))
}

// refuseSharedCounters refuses a class that selects devices drawing on
// shared counters (partitions of one device, like MIG slices, and the
// whole device they are cut from): they cannot all be allocated at once,
// so "every device of the node in use" is out of the specs' reach, and an
// admin-access claim for one of them meets kubernetes/kubernetes#140729.
func refuseSharedCounters(class string, devices map[string][]Device) error {
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(devices)) {
		var names []string
		for _, d := range devices[n] {
			if d.SharesCounters {
				names = append(names, d.Name)
			}
		}
		if len(names) > 0 {
			parts = append(parts, n+": "+strings.Join(names, ", "))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("DEVICE_CLASS=%s selects devices that consume shared counters (%s): partitions of one device cannot all be allocated at once, "+
		"so the specs cannot hold every device of a node; give a DEVICE_CLASS that selects whole devices without consumesCounters (a CEL selector on an attribute that tells them apart)",
		class, strings.Join(parts, "; "))
}

// checkIdle reads every claim of the cluster and returns the class's
// devices they hold, or refuses the run where no node is left to it.
func checkIdle(ctx context.Context, dra *draclient.Client, class string, devices map[string][]Device) (map[string][]DeviceUse, error) {
	claims, err := dra.ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the cluster's ResourceClaims, to find the class's devices in use: %w", err)
	}
	inUse := devicesInUse(devices, claims.Items)
	return inUse, refuseAllInUse(class, devices, inUse)
}
