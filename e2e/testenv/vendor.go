// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
	draclient "k8s.io/dynamic-resource-allocation/client"
)

// VendorDriver is a DRA driver of the user's own (DRIVER, DEVICE_CLASS):
// the run claims its devices instead of installing the bundled driver, and
// runs only the specs that hold for any driver. What those specs can know of
// it is what the API says: its devices per node, the claims' allocations,
// the pods' phases, and a command run in the admin container.
type VendorDriver struct {
	Driver string
	Class  string
	// Devices are the devices DEVICE_CLASS selects among the driver's
	// node-local ones, per node the driver publishes on (an empty list
	// where the class selects none of a node's), read at set-up.
	Devices map[string][]Device
	// InUse are the class's devices that claims of others held when the
	// run began, per node: the specs hold every device of a node, so they
	// keep to the nodes with none (FreeNodes).
	InUse map[string][]DeviceUse `json:",omitempty"`
	// DriverNamespace is where the driver's pods run, as DRIVER_NAMESPACE
	// gave it; empty finds them by their kubelet plugin folder (Pods).
	DriverNamespace string `json:",omitempty"`
	// Started is when set-up read the driver: the driver's logs the run
	// keeps begin there.
	Started time.Time
	// AdminCheck is a shell command that must succeed inside a container
	// given a device with admin access (ADMIN_CHECK; "" runs none).
	AdminCheck string
	// WorkloadImage is what the specs' pods run: the bundled workload
	// image by default, or WORKLOAD_IMAGE, which needs sh and sleep.
	WorkloadImage string
	// WorkloadCommand keeps a pod of WORKLOAD_IMAGE running; nil runs the
	// bundled workload, which prints what it was given and waits.
	WorkloadCommand []string
}

// Device is one published device.
type Device struct {
	Driver, Pool, Name string
	// Attributes are the device's attributes by the name its slice gives
	// them ("model", "gpu.example.com/uuid"), each value as a string: what
	// ADMIN_CHECK is told of the device it checks.
	Attributes map[string]string `json:",omitempty"`
	// SharesCounters: the slice entry consumes shared counters (a
	// partition of a device, or a device partitions are cut from).
	SharesCounters bool `json:",omitempty"`
}

// Device is the class's device the driver publishes in pool under name.
func (v *VendorDriver) Device(driver, pool, name string) (Device, bool) {
	for _, ds := range v.Devices {
		for _, d := range ds {
			if d.Driver == driver && d.Pool == pool && d.Name == name {
				return d, true
			}
		}
	}
	return Device{}, false
}

// FreeNodes are the Nodes none of whose class devices a claim of others
// held when the run began: the nodes the specs run on.
func (v *VendorDriver) FreeNodes() []string {
	var out []string
	for _, n := range v.Nodes() {
		if len(v.InUse[n]) == 0 {
			out = append(out, n)
		}
	}
	return out
}

// PublishedNodes are the nodes the driver publishes devices on, sorted.
func (v *VendorDriver) PublishedNodes() []string {
	var out []string
	for n := range v.Devices {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Nodes are the nodes with devices of the class, most devices first (ties
// by name), so a spec that needs two devices on one node finds them.
func (v *VendorDriver) Nodes() []string {
	var out []string
	for n, ds := range v.Devices {
		if len(ds) > 0 {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := len(v.Devices[out[i]]), len(v.Devices[out[j]]); a != b {
			return a > b
		}
		return out[i] < out[j]
	})
	return out
}

// Counts is "node: n" per node, for the report.
func (v *VendorDriver) Counts() string {
	var parts []string
	for _, n := range v.Nodes() {
		parts = append(parts, fmt.Sprintf("%s: %d", n, len(v.Devices[n])))
	}
	return strings.Join(parts, ", ")
}

// readVendorDriver checks that the class exists and selects devices the
// driver publishes, none of which shares counters, and reads them per
// node. Each failure is one line that names the variable to fix.
func readVendorDriver(ctx context.Context, dra *draclient.Client, driver, class string) (map[string][]Device, error) {
	dc, err := dra.DeviceClasses().Get(ctx, class, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("DEVICE_CLASS=%s: the cluster has no DeviceClass of that name (kubectl get deviceclasses lists them)", class)
	}
	if err != nil {
		return nil, fmt.Errorf("DEVICE_CLASS=%s: %w", class, err)
	}
	slices, err := dra.ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading ResourceSlices: %w", err)
	}
	devices, published, err := selectDevices(ctx, dc, slices.Items, driver)
	if err != nil {
		return nil, err
	}
	if published == 0 {
		return nil, fmt.Errorf("DRIVER=%s publishes no devices on any node (no ResourceSlice with spec.driver %s and a node name): is the driver running, and is that its name?", driver, driver)
	}
	if (&VendorDriver{Devices: devices}).Nodes() == nil {
		return nil, fmt.Errorf("DEVICE_CLASS=%s selects none of the %d devices DRIVER=%s publishes on its nodes", class, published, driver)
	}
	if err := refuseSharedCounters(class, devices); err != nil {
		return nil, err
	}
	return devices, nil
}

// selectDevices is the devices of driver's node-local slices that every
// selector of the class matches, per node the driver publishes on (an
// empty list where it matches none), and how many the driver publishes on
// nodes in all.
func selectDevices(ctx context.Context, dc *resourceapi.DeviceClass, slices []resourceapi.ResourceSlice, driver string) (map[string][]Device, int, error) {
	var programs []cel.CompilationResult
	for i, s := range dc.Spec.Selectors {
		if s.CEL == nil {
			continue
		}
		p := cel.GetCompiler(cel.Features{EnableConsumableCapacity: true}).CompileCELExpression(s.CEL.Expression, cel.Options{})
		if p.Error != nil {
			return nil, 0, fmt.Errorf("DEVICE_CLASS=%s: selector %d does not compile: %v", dc.Name, i, p.Error)
		}
		programs = append(programs, p)
	}
	out := map[string][]Device{}
	published := 0
	for _, s := range slices {
		if s.Spec.Driver != driver || s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
			continue
		}
		node := *s.Spec.NodeName
		if _, ok := out[node]; !ok {
			out[node] = nil
		}
		for _, d := range s.Spec.Devices {
			published++
			matches := true
			for _, p := range programs {
				ok, _, err := p.DeviceMatches(ctx, cel.Device{Driver: driver, AllowMultipleAllocations: d.AllowMultipleAllocations,
					Attributes: d.Attributes, Capacity: d.Capacity})
				if err != nil {
					return nil, 0, fmt.Errorf("DEVICE_CLASS=%s on device %s/%s: %w", dc.Name, s.Spec.Pool.Name, d.Name, err)
				}
				matches = matches && ok
			}
			if matches {
				out[node] = append(out[node], Device{Driver: driver, Pool: s.Spec.Pool.Name, Name: d.Name,
					Attributes: attributeStrings(d.Attributes), SharesCounters: len(d.ConsumesCounters) > 0})
			}
		}
	}
	for n := range out {
		sort.Slice(out[n], func(i, j int) bool { return out[n][i].Name < out[n][j].Name })
	}
	return out, published, nil
}

// attributeStrings are a device's attributes with each value as a string,
// as a shell variable carries it; an attribute of a kind this API version
// does not know is left out.
func attributeStrings(attrs map[resourceapi.QualifiedName]resourceapi.DeviceAttribute) map[string]string {
	out := map[string]string{}
	for name, a := range attrs {
		switch {
		case a.StringValue != nil:
			out[string(name)] = *a.StringValue
		case a.IntValue != nil:
			out[string(name)] = strconv.FormatInt(*a.IntValue, 10)
		case a.BoolValue != nil:
			out[string(name)] = strconv.FormatBool(*a.BoolValue)
		case a.VersionValue != nil:
			out[string(name)] = *a.VersionValue
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// setupVendor is Setup's end for a driver of the user's own: the devices
// the class selects (as Resolve read them) and which of them claims hold
// now, the driver's pods for the provenance, and nothing installed. It
// runs in process 1 only, before any spec anywhere, so the claims it sees
// are never the run's own. The specs' pods run WORKLOAD_IMAGE, or else
// the bundled workload image, which reaches the nodes as the bundled
// driver's would.
func setupVendor(ctx context.Context, r resolved.Run, devices map[string][]Device, sh Shared, env *Env, c *kindcluster.Cluster, progress io.Writer) (Shared, error) {
	own := r.Vendor()
	v := &VendorDriver{Driver: own.Name, Class: own.DeviceClass, Devices: devices, DriverNamespace: own.Namespace,
		Started: time.Now(), AdminCheck: own.AdminCheck}
	inUse, err := checkIdle(ctx, env.DRA, own.DeviceClass, devices)
	if err != nil {
		return sh, err
	}
	v.InUse = inUse
	pods, how, err := v.Pods(ctx, env.Client)
	if err != nil {
		return sh, err
	}
	if v.WorkloadImage = own.WorkloadImage; v.WorkloadImage != "" {
		v.WorkloadCommand = []string{"sh", "-c", "exec sleep 86400"}
	} else {
		built, err := driverImage(r, c, &sh, progress)
		if err != nil {
			return sh, err
		}
		v.WorkloadImage = built.Tag
	}
	sh.Vendor = v
	sh.Driver = deploy.Options{DriverName: own.Name, DeviceClass: own.DeviceClass, Image: v.WorkloadImage}
	sh.Components["DRA driver"] = own.Name + " (given with DRIVER; the bundled driver is not installed)"
	sh.Components["device class"] = own.DeviceClass
	sh.Components["devices the class selects"] = v.Counts()
	if len(inUse) > 0 {
		sh.Components["devices in use before the run (their nodes are left out)"] = inUseText(inUse)
	}
	sh.Components["nodes the specs use"] = strings.Join(v.FreeNodes(), ", ")
	for k, val := range driverProvenance(pods, how) {
		sh.Components[k] = val
	}
	fmt.Fprintf(progress, "driver %s, class %s: devices per node %s; nodes the specs use %s; the bundled driver is not installed\n",
		own.Name, own.DeviceClass, v.Counts(), strings.Join(v.FreeNodes(), ", "))
	return sh, nil
}
