package adminaccess

// How specs name and aim at the bundled driver's devices: a device of a
// node's pool as an allocation result names it, and the partitionable
// layout's whole device and its halves.

import (
	"github.com/kep5018/adminaccess-conformance/e2e/builder"
)

// poolDevice is how observe.AllocatedDevices names a device of the driver's
// pool on node (the pool is named after the node).
func poolDevice(node, device string) string { return node + "/" + device }

// The whole device (index 0) and its halves (index 1 and 2).
var whole, half, otherHalf = builder.DeviceIndex(0), builder.DeviceIndex(1), builder.DeviceIndex(2)
