// SPDX-License-Identifier: Apache-2.0

// Package driver is the test driver's kubelet plugin: it publishes a node's
// devices and prepares the claims the scheduler allocated to them.
//
// What "honouring admin access" means here, for a vendor reading along:
//   - the allocation result's adminAccess flag is passed to the workload
//     (DRA_ADMIN_ACCESS=true|false), so monitoring tools know what they hold;
//   - an ordinary claim is refused a device that another ordinary claim has
//     prepared on this node (the last line of defense against double use), but
//     admin-access claims never count as holders and are never refused for it.
package driver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/testdriver/cdi"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/state"
)

// ConfigKind and ConfigAPIVersion identify the driver's opaque configuration.
const (
	ConfigAPIVersion = "testdriver.e2e/v1"
	ConfigKind       = "DeviceConfig"
)

// DeviceConfig is the opaque configuration a claim or class may pass.
type DeviceConfig struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Env        map[string]string `json:"env,omitempty"`
}

// ParseConfig decodes opaque parameters strictly: an unknown field, kind or
// version is an error that fails the claim's prepare, not a silent default.
func ParseConfig(raw []byte) (DeviceConfig, error) {
	var cfg DeviceConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("invalid opaque device configuration: %w", err)
	}
	if cfg.APIVersion != ConfigAPIVersion || cfg.Kind != ConfigKind {
		return cfg, fmt.Errorf("invalid opaque device configuration: want apiVersion %q kind %q, got %q %q",
			ConfigAPIVersion, ConfigKind, cfg.APIVersion, cfg.Kind)
	}
	return cfg, nil
}

// Driver implements kubeletplugin.DRAPlugin.
type Driver struct {
	Name     string
	NodeName string
	Devices  int
	// Slots is how many spare pools of Devices plain devices the node
	// publishes beside its own (contract.SlotAttribute); none unless set.
	Slots int
	// Layout is what the node publishes; plain unless set.
	Layout contract.Layout
	// Taints are added on top of the layout's (--taint).
	Taints contract.AddedTaints
	// CountersWithDevices puts the partitionable layout's counter set in
	// the slice of the devices that consume it, the shape resource.k8s.io/v1
	// of Kubernetes 1.34 takes (--counters-with-devices); unset, the set
	// has a slice of its own, the shape 1.35 and later take. No shape
	// passes both: see partitionable.
	CountersWithDevices bool
	CDI                 cdi.Writer
	State               *state.Checkpoint
	// Cancel stops the process on a fatal background error.
	Cancel func(error)

	mu sync.Mutex
}

// Resources is what the node publishes: one pool named after the node, with
// the devices of the driver's layout, each with an "index" attribute specs
// select on, and with Slots the plain layout's spare pools.
func (d *Driver) Resources() resourceslice.DriverResources {
	pools := map[string]resourceslice.Pool{}
	switch d.Layout {
	case contract.LayoutPartitionable:
		pools[d.NodeName] = resourceslice.Pool{Slices: partitionable(d.CountersWithDevices)}
	case contract.LayoutTainted:
		pools[d.NodeName] = resourceslice.Pool{Slices: []resourceslice.Slice{{Devices: tainted()}}}
	case contract.LayoutShared:
		pools[d.NodeName] = resourceslice.Pool{Slices: []resourceslice.Slice{{Devices: []resourceapi.Device{shared()}}}}
	default:
		pools[d.NodeName] = resourceslice.Pool{Slices: []resourceslice.Slice{{Devices: plain(d.Devices)}}}
		if d.Slots > 0 {
			d.addSlots(pools)
		}
	}
	for _, pool := range pools {
		for _, sl := range pool.Slices {
			for i := range sl.Devices {
				if effect, ok := d.Taints[sl.Devices[i].Name]; ok {
					sl.Devices[i].Taints = append(sl.Devices[i].Taints, resourceapi.DeviceTaint{
						Key: contract.TaintKey, Value: contract.TaintValue, Effect: resourceapi.DeviceTaintEffect(effect)})
				}
			}
		}
	}
	return resourceslice.DriverResources{Pools: pools}
}

// addSlots gives the plain layout its spare pools: Slots more pools of
// Devices devices, named as the node's own, and every device, the own
// pool's too, its pool's slot number (contract.SlotAttribute). The suite's
// own class then selects slot 0, and each spare pool has a class of its own.
func (d *Driver) addSlots(pools map[string]resourceslice.Pool) {
	for k := 0; k <= d.Slots; k++ {
		devices := pools[d.NodeName].Slices[0].Devices
		if k > 0 {
			devices = plain(d.Devices)
			pools[contract.SlotPool(d.NodeName, k)] = resourceslice.Pool{Slices: []resourceslice.Slice{{Devices: devices}}}
		}
		for i := range devices {
			devices[i].Attributes[contract.SlotAttribute] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(k))}
		}
	}
}

func device(name string, index int, memory string) resourceapi.Device {
	return resourceapi.Device{
		Name: name,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"index": {IntValue: ptr.To(int64(index))},
			"model": {StringValue: ptr.To("e2e-test-device")},
		},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			"memory": {Value: resource.MustParse(memory)},
		},
	}
}

func plain(n int) []resourceapi.Device {
	var devices []resourceapi.Device
	for i := 0; i < n; i++ {
		devices = append(devices, device(contract.DeviceName(i), i, "1Gi"))
	}
	return devices
}

// partitionable is one counter set and the whole device and its two halves,
// each consuming its share of the counter. Where the set goes is the
// release's API:
//   - 1.35 and later: in a slice of its own. kube-apiserver refuses a slice
//     with both (pkg/apis/resource/validation/validation.go:706 at v1.35.4,
//     "only one of `sharedCounters` or `devices` is allowed") and the
//     allocator takes counter sets from any slice of the pool.
//   - 1.34 (withDevices): in the devices' slice. kube-apiserver refuses a
//     device that consumes a set its own slice does not define
//     (validation.go:670 and 782-793 at v1.34.4, "must reference a
//     counterSet defined in the ResourceSlice sharedCounters"), and the
//     allocator reads the counters of the device's own slice
//     (checkAvailableCounters in structured/internal/*, v0.34.4). Published
//     in the 1.35 shape, the counter slice is stored and the device slice
//     refused, so the pool stays incomplete (2 slices announced, 1 there):
//     no device of it, and every allocationMode All request on the node
//     refused while it lasts.
func partitionable(withDevices bool) []resourceslice.Slice {
	counters := []resourceapi.CounterSet{{
		Name:     contract.PartitionCounterSet,
		Counters: map[string]resourceapi.Counter{contract.PartitionCounter: {Value: resource.MustParse(contract.PartitionWhole)}},
	}}
	var devices []resourceapi.Device
	for i, name := range contract.PartitionDevices {
		memory := contract.PartitionHalf
		if i == 0 {
			memory = contract.PartitionWhole
		}
		dev := device(name, i, memory)
		dev.ConsumesCounters = []resourceapi.DeviceCounterConsumption{{
			CounterSet: contract.PartitionCounterSet,
			Counters:   map[string]resourceapi.Counter{contract.PartitionCounter: {Value: resource.MustParse(memory)}},
		}}
		devices = append(devices, dev)
	}
	if withDevices {
		return []resourceslice.Slice{{SharedCounters: counters, Devices: devices}}
	}
	return []resourceslice.Slice{{SharedCounters: counters}, {Devices: devices}}
}

// tainted is one device per taint effect, each tainted by the driver itself
// in its slice (the way a driver reports an unhealthy device).
func tainted() []resourceapi.Device {
	var devices []resourceapi.Device
	for i, t := range contract.TaintedDevices {
		dev := device(t.Name, i, "1Gi")
		dev.Taints = []resourceapi.DeviceTaint{{Key: contract.TaintKey, Value: contract.TaintValue, Effect: resourceapi.DeviceTaintEffect(t.Effect)}}
		devices = append(devices, dev)
	}
	return devices
}

// shared is one device that allows multiple allocations, whose memory
// claims share: a request that names no amount gets the policy's default,
// any other amount is rounded up to a step. The policy keeps a share from
// being the whole device by accident, so a spec can use the capacity up with
// a few claims of its own.
func shared() resourceapi.Device {
	dev := device(contract.SharedDevice, 0, contract.SharedTotal)
	dev.AllowMultipleAllocations = ptr.To(true)
	step := resource.MustParse(contract.SharedStep)
	dev.Capacity[contract.SharedCapacity] = resourceapi.DeviceCapacity{
		Value: resource.MustParse(contract.SharedTotal),
		RequestPolicy: &resourceapi.CapacityRequestPolicy{
			Default: ptr.To(resource.MustParse(contract.SharedDefault)),
			ValidRange: &resourceapi.CapacityRequestPolicyRange{
				Min:  ptr.To(step),
				Max:  ptr.To(resource.MustParse(contract.SharedTotal)),
				Step: ptr.To(step),
			},
		},
	}
	return dev
}

// PrepareResourceClaims prepares each claim independently: one claim's bad
// configuration fails only that claim.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	logger := klog.FromContext(ctx)
	for _, claim := range claims {
		start := time.Now()
		devices, err := d.prepare(claim)
		out[claim.UID] = kubeletplugin.PrepareResult{Devices: devices, Err: err}
		if err != nil {
			logger.Error(err, "prepare failed", "claim", klog.KObj(claim))
			continue
		}
		// One line per claim: what vendors and the closing notes measure.
		logger.Info("prepared claim", "claim", klog.KObj(claim), "devices", len(devices),
			"adminAccess", adminAccess(claim, d.Name), "durationMicroseconds", time.Since(start).Microseconds())
	}
	return out, nil
}

func (d *Driver) prepare(claim *resourceapi.ResourceClaim) ([]kubeletplugin.Device, error) {
	uid := string(claim.UID)
	if pc, ok := d.State.Get(uid); ok { // the kubelet may ask again: same answer
		return toPluginDevices(pc), nil
	}
	env, err := d.claimEnv(claim)
	if err != nil {
		return nil, err
	}
	pc := state.PreparedClaim{Namespace: claim.Namespace, Name: claim.Name}
	var cdiDevices []cdi.Device
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != d.Name {
			continue
		}
		admin := r.AdminAccess != nil && *r.AdminAccess
		// A share of a device that allows multiple allocations (the result
		// has a share ID) is never exclusive: the scheduler has already
		// checked that the shares fit the device's capacity.
		shared := r.ShareID != nil
		if !admin && !shared {
			if holder, held := d.State.ExclusiveHolder(r.Pool, r.Device, uid); held {
				return nil, fmt.Errorf("device %s/%s is already prepared for claim %s without admin access", r.Pool, r.Device, holder)
			}
		}
		pd := state.PreparedDevice{Request: r.Request, Pool: r.Pool, Device: r.Device, AdminAccess: admin}
		if shared {
			pd.ShareID = string(*r.ShareID)
		}
		pc.Devices = append(pc.Devices, pd)
		cdiDevices = append(cdiDevices, cdi.Device{Name: r.Device, AdminAccess: admin, ExtraEnv: env})
	}
	ids, err := d.CDI.Write(uid, cdiDevices)
	if err != nil {
		return nil, fmt.Errorf("writing CDI spec: %w", err)
	}
	for i := range pc.Devices {
		pc.Devices[i].CDIDeviceIDs = []string{ids[i]}
	}
	if err := d.State.Put(uid, pc); err != nil {
		d.CDI.Remove(uid)
		return nil, fmt.Errorf("checkpointing: %w", err)
	}
	return toPluginDevices(pc), nil
}

// claimEnv merges the env of every opaque config for this driver (class
// configs first, then the claim's own, as the allocation result orders them).
func (d *Driver) claimEnv(claim *resourceapi.ResourceClaim) (map[string]string, error) {
	env := map[string]string{}
	for _, c := range claim.Status.Allocation.Devices.Config {
		if c.Opaque == nil || c.Opaque.Driver != d.Name {
			continue
		}
		cfg, err := ParseConfig(c.Opaque.Parameters.Raw)
		if err != nil {
			return nil, err
		}
		for k, v := range cfg.Env {
			env[k] = v
		}
	}
	return env, nil
}

func adminAccess(claim *resourceapi.ResourceClaim, driver string) bool {
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver == driver && r.AdminAccess != nil && *r.AdminAccess {
			return true
		}
	}
	return false
}

func toPluginDevices(pc state.PreparedClaim) []kubeletplugin.Device {
	out := make([]kubeletplugin.Device, 0, len(pc.Devices))
	for _, dev := range pc.Devices {
		d := kubeletplugin.Device{Requests: []string{dev.Request}, PoolName: dev.Pool, DeviceName: dev.Device, CDIDeviceIDs: dev.CDIDeviceIDs}
		if dev.ShareID != "" {
			d.ShareID = ptr.To(types.UID(dev.ShareID))
		}
		out = append(out, d)
	}
	return out
}

// UnprepareResourceClaims removes each claim's CDI spec and forgets it. The
// claim may be gone already; the checkpoint is all that is needed.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]error, len(claims))
	for _, c := range claims {
		uid := string(c.UID)
		err := d.CDI.Remove(uid)
		if err == nil {
			err = d.State.Delete(uid)
		}
		out[c.UID] = err
	}
	return out, nil
}

// HandleError logs background errors and stops on the fatal ones.
func (d *Driver) HandleError(ctx context.Context, err error, msg string) {
	utilruntime.HandleErrorWithContext(ctx, err, msg)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) && d.Cancel != nil {
		d.Cancel(fmt.Errorf("fatal background error: %s: %w", msg, err))
	}
}
