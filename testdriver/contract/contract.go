// SPDX-License-Identifier: Apache-2.0

// Package contract is what the bundled test driver promises a pod, in one
// place: the environment variables its CDI specs give a container, and the
// output of the workload program the suite's pods run. The driver, the
// workload and the specs import it; none spells these names itself.
package contract

import (
	"bufio"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// EnvPrefix starts every variable the driver sets.
const EnvPrefix = "DRA_"

// AdminAccessEnv says, inside the container, whether the claim was granted
// admin access: "true" or "false", from the allocation result.
const AdminAccessEnv = EnvPrefix + "ADMIN_ACCESS"

// ClaimUIDEnv names the claim the device was prepared for.
const ClaimUIDEnv = EnvPrefix + "CLAIM_UID"

// deviceEnvPrefix starts the variable naming a device (DeviceEnv).
const deviceEnvPrefix = EnvPrefix + "DEVICE_"

// DeviceEnv is the variable naming a device: DRA_DEVICE_<NAME>=<claim UID>,
// the name upper-cased with anything but letters and digits as "_".
func DeviceEnv(device string) string {
	return deviceEnvPrefix + strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, strings.ToUpper(device))
}

// DeviceName is the name of the driver's i-th device on every node; its
// "index" attribute is i.
func DeviceName(i int) string { return "dev-" + strconv.Itoa(i) }

// AdminAccessValue is AdminAccessEnv's value for a grant.
func AdminAccessValue(granted bool) string { return strconv.FormatBool(granted) }

// ReadyLine is the workload's last line once it has printed its variables.
const ReadyLine = "workload: ready"

// WorkloadOutput is what the workload prints for an environment (os.Environ
// form): the driver's variables, sorted, one per line, then ReadyLine.
func WorkloadOutput(environ []string) []string {
	var lines []string
	for _, kv := range environ {
		if strings.HasPrefix(kv, EnvPrefix) {
			lines = append(lines, kv)
		}
	}
	sort.Strings(lines)
	return append(lines, ReadyLine)
}

// ParseOutput reads a workload's log: the driver's variables, and whether
// the workload got as far as ReadyLine. Other lines are ignored.
func ParseOutput(log string) (env map[string]string, ready bool, err error) {
	env = map[string]string{}
	s := bufio.NewScanner(strings.NewReader(log))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == ReadyLine {
			ready = true
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, EnvPrefix) {
			env[k] = v
		}
	}
	return env, ready, s.Err()
}

// DriverName is the bundled driver's name (also its CDI vendor and its
// DeviceClass): the devices every spec but the feature groups use.
const DriverName = "testdriver." + driverDomain

// driverDomain is the domain under which every instance of the bundled
// driver is named.
const driverDomain = "e2e.adminaccess.example.com"

// MaxDriverName is the longest driver name resource.k8s.io takes (a DNS
// subdomain of at most 63 characters); a DeviceClass named after it also
// names its implicit extended resource, whose name part has the same bound.
const MaxDriverName = 63

// InstanceDriverName names a further instance of the bundled driver, one
// with layout for owner (an allocator's specs), without "testdriver." in
// front: "partitionable.experimental.testdriver..." would pass
// MaxDriverName.
func InstanceDriverName(layout, owner string) string {
	return layout + "." + owner + "." + driverDomain
}

// PlainDevices is how many plain devices DriverName publishes per node.
const PlainDevices = 4

// SlotAttribute is the attribute that tells a plain device's pool apart
// where the driver publishes spare pools (--slots): 0 in the node's own pool,
// k in its k-th spare pool. A spec that needs every device of a node to
// itself (allocationMode All, a device held so that nothing else is free)
// claims through its own slot's class and so runs beside the others: "every
// device of the node" is then every device of that spec's pool.
const SlotAttribute = "slot"

// Slots is how many spare pools the bundled driver publishes on each node
// beside its own: one for each core allocation promise (seven) in the
// allocation group, and under each of at most two other allocator
// implementations (the allocators group) one for each core promise and one
// for the prioritized list's, all of which run beside the other specs. The
// suite's unit tests keep it enough for every release.
const Slots = 23

// SlotPool names a node's k-th spare pool (k >= 1); its own pool is named
// after the node.
func SlotPool(node string, k int) string {
	if k == 0 {
		return node
	}
	return node + "-slot-" + strconv.Itoa(k)
}

// SlotClass names the DeviceClass of the k-th spare pools of the driver
// whose own class is class (k >= 1); slot 0 is class itself.
func SlotClass(class string, k int) string {
	if k == 0 {
		return class
	}
	return class + "-slot-" + strconv.Itoa(k)
}

// Namespace is where the bundled driver is installed; a feature group's
// instance goes to Namespace-<layout>.
const Namespace = "dra-testdriver"

// Layout is the shape of what one driver instance publishes on each node.
// The suite's own driver is always LayoutPlain, so every existing spec sees
// the same devices; a feature group installs a second instance, under a name
// of its own, with the layout its feature needs, and removes it afterwards.
type Layout string

const (
	// LayoutPlain: n independent devices dev-0 … dev-(n-1), index 0 … n-1.
	LayoutPlain Layout = "plain"
	// LayoutPartitionable: one device that can be had whole or as two halves
	// (KEP-4815). All three draw on one counter set whose counter fits the
	// whole device exactly once, so an ordinary claim on the whole device
	// uses every counter, and a half uses half of them.
	LayoutPartitionable Layout = "partitionable"
	// LayoutTainted: TaintedDevices, each tainted (KEP-5055) with TaintKey
	// and its own effect.
	LayoutTainted Layout = "tainted"
	// LayoutShared: one device that allows multiple allocations (KEP-5075,
	// consumable capacity), SharedDevice, whose SharedCapacity claims share
	// under a request policy: SharedDefault when a request names no amount,
	// any multiple of SharedStep from SharedStep up to SharedTotal.
	LayoutShared Layout = "shared"
)

// Layouts lists the known layouts.
var Layouts = []Layout{LayoutPlain, LayoutPartitionable, LayoutTainted, LayoutShared}

// TaintKey and TaintValue taint the LayoutTainted devices.
const (
	TaintKey   = "e2e.adminaccess.example.com/maintenance"
	TaintValue = "true"
)

// AddedTaints are taints a driver is told to add on top of its layout
// (--taint), each with TaintKey and TaintValue: device name -> effect. A
// spec adds one to a device already in use, the way a driver reports a
// device that went bad, and watches what kube-controller-manager does.
type AddedTaints map[string]string

// ParseTaints reads --taint: "device=Effect[,device=Effect...]", "" for none.
func ParseTaints(s string) (AddedTaints, error) {
	out := AddedTaints{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		dev, effect, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || dev == "" {
			return nil, fmt.Errorf("taint %q: want device=Effect", part)
		}
		if effect != "NoSchedule" && effect != "NoExecute" {
			return nil, fmt.Errorf("taint %q: the effect is NoSchedule or NoExecute", part)
		}
		out[dev] = effect
	}
	return out, nil
}

// String is the --taint value, sorted by device.
func (t AddedTaints) String() string {
	devs := make([]string, 0, len(t))
	for d := range t {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	for i, d := range devs {
		devs[i] = d + "=" + t[d]
	}
	return strings.Join(devs, ",")
}

// TaintedDevice is one device of LayoutTainted and its taint's effect.
type TaintedDevice struct{ Name, Effect string }

// TaintedDevices are the LayoutTainted devices in index order.
var TaintedDevices = []TaintedDevice{{"noschedule-0", "NoSchedule"}, {"noexecute-1", "NoExecute"}}

// Partitionable layout names: the counter set, its one counter, and how much
// of it the whole device holds.
const (
	PartitionCounterSet = "memory-slots"
	PartitionCounter    = "memory"
	PartitionWhole      = "2Gi"
	PartitionHalf       = "1Gi"
)

// PartitionDevices are the LayoutPartitionable devices in index order: the
// whole device first, then its halves. The "index" attribute is the position.
var PartitionDevices = []string{"whole", "half-0", "half-1"}

// Shared layout names: the device, the capacity its claims share, the
// whole of it, and the request policy's default and step.
const (
	SharedDevice   = "shared-0"
	SharedCapacity = "memory"
	SharedTotal    = "4Gi"
	SharedDefault  = "1Gi"
	SharedStep     = "1Gi"
)

// Published is how many devices a layout publishes per node (plain: n).
func (l Layout) Published(n int) int {
	switch l {
	case LayoutShared:
		return 1
	case LayoutPartitionable:
		return len(PartitionDevices)
	case LayoutTainted:
		return len(TaintedDevices)
	}
	return n
}

// ParseLayout refuses an unknown layout by name.
func ParseLayout(s string) (Layout, error) {
	for _, l := range Layouts {
		if string(l) == s {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown device layout %q: known layouts are %v", s, Layouts)
}
