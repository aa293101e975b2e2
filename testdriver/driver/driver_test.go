// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/testdriver/cdi"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/state"
)

const name = "testdriver.example.com"

func newDriver(t *testing.T) *Driver {
	dir := t.TempDir()
	cp, err := state.Open(filepath.Join(dir, "state", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &Driver{Name: name, NodeName: "node-1", Devices: 2, CDI: cdi.Writer{Dir: filepath.Join(dir, "cdi"), Vendor: name}, State: cp}
}

func claim(uid, device string, admin bool, configs ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c-" + uid, Namespace: "ns", UID: types.UID(uid)}}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	r := resourceapi.DeviceRequestAllocationResult{Request: "req", Driver: name, Pool: "node-1", Device: device}
	if admin {
		r.AdminAccess = ptr.To(true)
	}
	c.Status.Allocation.Devices.Results = []resourceapi.DeviceRequestAllocationResult{r}
	for _, cfg := range configs {
		c.Status.Allocation.Devices.Config = append(c.Status.Allocation.Devices.Config, resourceapi.DeviceAllocationConfiguration{
			Source: resourceapi.AllocationConfigSourceClaim,
			DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
				Driver: name, Parameters: runtime.RawExtension{Raw: []byte(cfg)}}},
		})
	}
	return c
}

func prepare(t *testing.T, d *Driver, claims ...*resourceapi.ResourceClaim) map[types.UID]kubeletplugin.PrepareResult {
	t.Helper()
	res, err := d.PrepareResourceClaims(context.Background(), claims)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestAdminAccessReachesADeviceInOrdinaryUse(t *testing.T) {
	d := newDriver(t)
	res := prepare(t, d, claim("ordinary", "dev-0", false), claim("admin", "dev-0", true))
	for uid, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", uid, r.Err)
		}
	}
	raw, _ := os.ReadFile(d.CDI.Path("admin"))
	if !strings.Contains(string(raw), "DRA_ADMIN_ACCESS=true") {
		t.Fatalf("admin claim's CDI spec: %s", raw)
	}
	raw, _ = os.ReadFile(d.CDI.Path("ordinary"))
	if !strings.Contains(string(raw), "DRA_ADMIN_ACCESS=false") {
		t.Fatalf("ordinary claim's CDI spec: %s", raw)
	}
}

func TestASecondOrdinaryClaimOnTheSameDeviceIsRefused(t *testing.T) {
	d := newDriver(t)
	prepare(t, d, claim("first", "dev-1", false))
	res := prepare(t, d, claim("second", "dev-1", false))
	if err := res["second"].Err; err == nil || !strings.Contains(err.Error(), "already prepared for claim first") {
		t.Fatalf("want refusal, got %v", err)
	}
	if _, err := os.Stat(d.CDI.Path("second")); !os.IsNotExist(err) {
		t.Fatal("a refused claim must leave no CDI spec")
	}
}

func TestPrepareIsIdempotentAndSurvivesRestart(t *testing.T) {
	d := newDriver(t)
	first := prepare(t, d, claim("u", "dev-0", true))["u"]
	// A restarted plugin reads the checkpoint and gives the same answer, then unprepares.
	again, _ := state.Open(filepath.Join(filepath.Dir(d.CDI.Dir), "state", "checkpoint.json"))
	d2 := &Driver{Name: name, NodeName: "node-1", Devices: 2, CDI: d.CDI, State: again}
	second := prepare(t, d2, claim("u", "dev-0", true))["u"]
	if first.Devices[0].CDIDeviceIDs[0] != second.Devices[0].CDIDeviceIDs[0] {
		t.Fatalf("prepare twice: %v vs %v", first.Devices, second.Devices)
	}
	res, err := d2.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: "u"}})
	if err != nil || res["u"] != nil {
		t.Fatalf("unprepare: %v %v", err, res)
	}
	if _, err := os.Stat(d.CDI.Path("u")); !os.IsNotExist(err) {
		t.Fatal("CDI spec left behind")
	}
	if res, _ := d2.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: "u"}}); res["u"] != nil {
		t.Fatalf("unprepare twice: %v", res["u"])
	}
}

func TestBadOpaqueConfigFailsOnlyThatClaim(t *testing.T) {
	d := newDriver(t)
	res := prepare(t, d,
		claim("bad", "dev-0", false, `{"apiVersion":"testdriver.e2e/v1","kind":"DeviceConfig","colour":"red"}`),
		claim("good", "dev-1", false, `{"apiVersion":"testdriver.e2e/v1","kind":"DeviceConfig","env":{"MODE":"fast"}}`))
	if err := res["bad"].Err; err == nil || !strings.Contains(err.Error(), `unknown field "colour"`) {
		t.Fatalf("bad claim: %v", err)
	}
	if res["good"].Err != nil {
		t.Fatalf("good claim: %v", res["good"].Err)
	}
	raw, _ := os.ReadFile(d.CDI.Path("good"))
	if !strings.Contains(string(raw), "MODE=fast") {
		t.Fatalf("config env missing: %s", raw)
	}
	if _, err := ParseConfig([]byte(`{"apiVersion":"other/v1","kind":"DeviceConfig"}`)); err == nil {
		t.Fatal("unknown apiVersion must be an error")
	}
}

func TestResourcesPublishOnePoolPerNode(t *testing.T) {
	d := newDriver(t)
	pools := d.Resources().Pools
	if len(pools) != 1 || len(pools["node-1"].Slices[0].Devices) != 2 || pools["node-1"].Slices[0].Devices[1].Name != "dev-1" {
		t.Fatalf("pools %+v", pools)
	}
}

// The partitionable layout must be what the KEP-4815 specs rely on, in
// either release's shape: one pool named after the node, the whole device
// consuming all of the counter, each half exactly half of it; the counter
// set alone in its slice (1.35 and later), or in the devices' one slice
// (1.34).
func TestPartitionableLayout(t *testing.T) {
	for _, withDevices := range []bool{false, true} {
		d := newDriver(t)
		d.Layout = contract.LayoutPartitionable
		d.CountersWithDevices = withDevices
		pool, ok := d.Resources().Pools["node-1"]
		if !ok {
			t.Fatalf("want one pool named after the node, got %+v", d.Resources().Pools)
		}
		var counters, devices resourceslice.Slice
		switch {
		case withDevices && len(pool.Slices) == 1:
			counters, devices = pool.Slices[0], pool.Slices[0]
		case !withDevices && len(pool.Slices) == 2:
			counters, devices = pool.Slices[0], pool.Slices[1]
			if len(counters.Devices) != 0 || len(devices.SharedCounters) != 0 {
				t.Fatal("from 1.35 a slice carries either shared counters or devices")
			}
		default:
			t.Fatalf("counters with devices %t: %d slices", withDevices, len(pool.Slices))
		}
		if len(counters.SharedCounters) != 1 || counters.SharedCounters[0].Name != contract.PartitionCounterSet {
			t.Fatalf("counter sets %+v", counters.SharedCounters)
		}
		total := counters.SharedCounters[0].Counters[contract.PartitionCounter].Value
		var names []string
		halves := resource.Quantity{}
		for i, dev := range devices.Devices {
			names = append(names, dev.Name)
			if got := *dev.Attributes["index"].IntValue; got != int64(i) {
				t.Errorf("%s has index %d, want %d", dev.Name, got, i)
			}
			if len(dev.ConsumesCounters) != 1 || dev.ConsumesCounters[0].CounterSet != contract.PartitionCounterSet {
				t.Fatalf("%s consumes %+v", dev.Name, dev.ConsumesCounters)
			}
			used := dev.ConsumesCounters[0].Counters[contract.PartitionCounter].Value
			if i == 0 && used.Cmp(total) != 0 {
				t.Errorf("the whole device consumes %s of %s", used.String(), total.String())
			}
			if i > 0 {
				halves.Add(used)
			}
		}
		if halves.Cmp(total) != 0 {
			t.Errorf("the halves consume %s together, the counter set holds %s", halves.String(), total.String())
		}
		if !reflect.DeepEqual(names, contract.PartitionDevices) {
			t.Errorf("devices %v, want %v", names, contract.PartitionDevices)
		}
		if got := contract.LayoutPartitionable.Published(4); got != len(devices.Devices) {
			t.Errorf("Published says %d devices, the slice has %d", got, len(devices.Devices))
		}
	}
}

func TestPlainLayoutIsTheDefault(t *testing.T) {
	d := newDriver(t)
	pool := d.Resources().Pools["node-1"]
	if len(pool.Slices) != 1 || len(pool.Slices[0].Devices) != d.Devices || len(pool.Slices[0].SharedCounters) != 0 {
		t.Fatalf("plain layout published %+v", pool.Slices)
	}
	for _, dev := range pool.Slices[0].Devices {
		if len(dev.ConsumesCounters) != 0 {
			t.Errorf("plain device %s consumes counters", dev.Name)
		}
	}
}

func TestTaintedLayout(t *testing.T) {
	d := newDriver(t)
	d.Layout = contract.LayoutTainted
	slices := d.Resources().Pools["node-1"].Slices
	if len(slices) != 1 || len(slices[0].Devices) != len(contract.TaintedDevices) {
		t.Fatalf("tainted layout published %+v", slices)
	}
	for i, dev := range slices[0].Devices {
		want := contract.TaintedDevices[i]
		if dev.Name != want.Name || len(dev.Taints) != 1 || dev.Taints[0].Key != contract.TaintKey || string(dev.Taints[0].Effect) != want.Effect {
			t.Errorf("device %d: %s tainted %+v, want %s with %s", i, dev.Name, dev.Taints, want.Name, want.Effect)
		}
		if got := string(resourceapi.DeviceTaintEffect(want.Effect)); got != string(resourceapi.DeviceTaintEffectNoSchedule) && got != string(resourceapi.DeviceTaintEffectNoExecute) {
			t.Errorf("effect %q is not one the API knows", got)
		}
	}
}

func TestAddedTaintsJoinTheLayoutsOwn(t *testing.T) {
	d := newDriver(t)
	d.Layout = contract.LayoutTainted
	d.Taints = contract.AddedTaints{contract.TaintedDevices[0].Name: "NoExecute", "no-such-device": "NoExecute"}
	devices := d.Resources().Pools["node-1"].Slices[0].Devices
	if got := devices[0].Taints; len(got) != 2 || got[0].Effect != resourceapi.DeviceTaintEffectNoSchedule || got[1].Effect != resourceapi.DeviceTaintEffectNoExecute || got[1].Key != contract.TaintKey {
		t.Errorf("%s after an added NoExecute taint: %+v", devices[0].Name, got)
	}
	if got := devices[1].Taints; len(got) != 1 {
		t.Errorf("%s has taints it was not given: %+v", devices[1].Name, got)
	}
	d.Layout, d.Taints = contract.LayoutPlain, contract.AddedTaints{contract.DeviceName(1): "NoSchedule"}
	for _, dev := range d.Resources().Pools["node-1"].Slices[0].Devices {
		if want := dev.Name == contract.DeviceName(1); (len(dev.Taints) == 1) != want {
			t.Errorf("plain layout, %s tainted %+v", dev.Name, dev.Taints)
		}
	}
}

func TestSharedLayoutIsOneDeviceWithAConsumableCapacity(t *testing.T) {
	d := newDriver(t)
	d.Layout = contract.LayoutShared
	slices := d.Resources().Pools["node-1"].Slices
	if len(slices) != 1 || len(slices[0].Devices) != contract.LayoutShared.Published(4) {
		t.Fatalf("shared layout published %+v", slices)
	}
	dev := slices[0].Devices[0]
	if dev.Name != contract.SharedDevice || !ptr.Deref(dev.AllowMultipleAllocations, false) {
		t.Fatalf("device %s, allowMultipleAllocations %v", dev.Name, dev.AllowMultipleAllocations)
	}
	c, ok := dev.Capacity[contract.SharedCapacity]
	if !ok || c.RequestPolicy == nil || c.RequestPolicy.ValidRange == nil {
		t.Fatalf("capacity %+v", dev.Capacity)
	}
	total, def, step := resource.MustParse(contract.SharedTotal), resource.MustParse(contract.SharedDefault), resource.MustParse(contract.SharedStep)
	r := c.RequestPolicy.ValidRange
	if c.Value.Cmp(total) != 0 || c.RequestPolicy.Default.Cmp(def) != 0 || r.Min.Cmp(step) != 0 || r.Step.Cmp(step) != 0 || r.Max.Cmp(total) != 0 {
		t.Errorf("capacity %s with policy default %s, range %s..%s step %s; want %s, %s, %s..%s step %s",
			c.Value.String(), c.RequestPolicy.Default.String(), r.Min.String(), r.Max.String(), r.Step.String(),
			total.String(), def.String(), step.String(), total.String(), step.String())
	}
	// The specs use the capacity up with whole steps: the total must be one.
	if total.Value()%step.Value() != 0 || def.Value()%step.Value() != 0 {
		t.Errorf("the total %s and the default %s must be multiples of the step %s", total.String(), def.String(), step.String())
	}
}

// sharedClaim is an allocation of a share of the shared device.
func sharedClaim(uid, share string, admin bool) *resourceapi.ResourceClaim {
	c := claim(uid, contract.SharedDevice, admin)
	c.Status.Allocation.Devices.Results[0].ShareID = ptr.To(types.UID(share))
	return c
}

func TestSharesOfADeviceAreNotExclusive(t *testing.T) {
	d := newDriver(t)
	d.Layout = contract.LayoutShared
	res := prepare(t, d, sharedClaim("first", "share-1", false), sharedClaim("second", "share-2", false), sharedClaim("admin", "share-3", true))
	for _, uid := range []types.UID{"first", "second", "admin"} {
		r := res[uid]
		if r.Err != nil {
			t.Fatalf("%s: %v", uid, r.Err)
		}
		if len(r.Devices) != 1 || r.Devices[0].ShareID == nil || string(*r.Devices[0].ShareID) != "share-"+map[types.UID]string{"first": "1", "second": "2", "admin": "3"}[uid] {
			t.Errorf("%s: the kubelet must be told the share: %+v", uid, r.Devices)
		}
	}
	// A whole device stays exclusive beside shares of another.
	prepare(t, d, claim("whole", "dev-0", false))
	if err := prepare(t, d, claim("again", "dev-0", false))["again"].Err; err == nil {
		t.Error("a second ordinary claim on a whole device must still be refused")
	}
}

// Spare pools: each a copy of the node's own devices under a pool of its
// own, every device (the own pool's too) carrying its pool's slot, so that
// the suite's classes split them without overlap; without Slots no device
// has the attribute, as before.
func TestSlotsAreSparePoolsEachWithItsSlotNumber(t *testing.T) {
	d := newDriver(t)
	if dev := d.Resources().Pools["node-1"].Slices[0].Devices[0]; dev.Attributes[contract.SlotAttribute] != (resourceapi.DeviceAttribute{}) {
		t.Fatalf("without slots the own pool's devices have no %s attribute: %+v", contract.SlotAttribute, dev.Attributes)
	}
	d.Slots = 2
	pools := d.Resources().Pools
	if len(pools) != 3 {
		t.Fatalf("want the own pool and two spare ones, got %d: %+v", len(pools), pools)
	}
	for k, name := range []string{"node-1", "node-1-slot-1", "node-1-slot-2"} {
		pool, ok := pools[name]
		if !ok || len(pool.Slices) != 1 || len(pool.Slices[0].Devices) != d.Devices {
			t.Fatalf("pool %s: %+v", name, pool)
		}
		for i, dev := range pool.Slices[0].Devices {
			if dev.Name != contract.DeviceName(i) {
				t.Errorf("pool %s device %d is %s", name, i, dev.Name)
			}
			if got := dev.Attributes[contract.SlotAttribute].IntValue; got == nil || *got != int64(k) {
				t.Errorf("pool %s device %s: slot %v, want %d", name, dev.Name, got, k)
			}
		}
	}
	// The pools must not share device structs: an attribute set on one
	// would show in the other.
	if &pools["node-1"].Slices[0].Devices[0] == &pools["node-1-slot-1"].Slices[0].Devices[0] {
		t.Fatal("spare pools share their devices")
	}
}
