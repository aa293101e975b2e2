// SPDX-License-Identifier: Apache-2.0

package adminaccess

// How specs name and aim at the bundled driver's devices: a device of a
// node's pool as an allocation result names it, and the partitionable
// layout's whole device and its halves.

import (
	"github.com/onsi/ginkgo/v2"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/builder"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
)

// poolDevice is how observe.AllocatedDevices names a device of the driver's
// pool on node (the pool is named after the node).
func poolDevice(node, device string) string { return node + "/" + device }

// The whole device (index 0) and its halves (index 1 and 2).
var whole, half, otherHalf = builder.DeviceIndex(0), builder.DeviceIndex(1), builder.DeviceIndex(2)

// specSlot is the spare pool of the bundled driver whose devices the
// running spec's claims and checks are about (0: the node's own pool, the
// one every other spec shares). Each Ginkgo process runs one spec at a
// time, so one variable per process is the running spec's.
var specSlot int

// inSlot gives the running spec the bundled driver's k-th spare pool: its
// builder claims through that pool's class (newBuilder), and the node's
// devices it counts on are that pool's (nodeDevices). The claims of specs
// running beside it cannot take them, since their class is another.
func inSlot(k int) {
	if k > contract.Slots {
		framework.Failf("spare pool %d asked for, the bundled driver publishes %d", k, contract.Slots)
	}
	specSlot = k
	ginkgo.DeferCleanup(func() { specSlot = 0 })
}

// deviceClass is the class the running spec's claims use.
func deviceClass(e *testenv.Env) string {
	if e.Vendor != nil {
		return e.Driver.DeviceClass
	}
	return contract.SlotClass(e.Driver.DeviceClass, specSlot)
}
