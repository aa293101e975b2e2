package testenv

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
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
	// node-local ones, per node, read at set-up.
	Devices map[string][]Device
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
	Pool, Name string
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
// driver publishes, and reads them per node. Each failure is one line that
// names the variable to fix.
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
	if len(devices) == 0 {
		return nil, fmt.Errorf("DEVICE_CLASS=%s selects none of the %d devices DRIVER=%s publishes on its nodes", class, published, driver)
	}
	return devices, nil
}

// selectDevices is the devices of driver's node-local slices that every
// selector of the class matches, per node, and how many the driver
// publishes on nodes in all.
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
				out[node] = append(out[node], Device{Pool: s.Spec.Pool.Name, Name: d.Name})
			}
		}
	}
	for n := range out {
		sort.Slice(out[n], func(i, j int) bool { return out[n][i].Name < out[n][j].Name })
	}
	return out, published, nil
}

// setupVendor is Setup's end for a driver of the user's own: the devices
// the class selects (as Resolve read them), and nothing installed. The specs' pods run
// WORKLOAD_IMAGE, or else the bundled workload image, which reaches the
// nodes as the bundled driver's would.
func setupVendor(cfg Config, devices map[string][]Device, sh Shared, c *kindcluster.Cluster, progress io.Writer) (Shared, error) {
	workload := cfg.WorkloadImage
	var command []string
	if workload != "" {
		command = []string{"sh", "-c", "exec sleep 86400"}
	} else {
		built, err := driverImage(cfg, c, &sh, progress)
		if err != nil {
			return sh, err
		}
		workload = built.Tag
	}
	sh.Vendor = &VendorDriver{Driver: cfg.Driver, Class: cfg.DeviceClass, Devices: devices, AdminCheck: cfg.AdminCheck,
		WorkloadImage: workload, WorkloadCommand: command}
	sh.Driver = deploy.Options{DriverName: cfg.Driver, DeviceClass: cfg.DeviceClass, Image: workload}
	sh.Components["DRA driver"] = cfg.Driver + " (given with DRIVER; the bundled driver is not installed)"
	sh.Components["device class"] = cfg.DeviceClass
	sh.Components["devices the class selects"] = sh.Vendor.Counts()
	fmt.Fprintf(progress, "driver %s, class %s: devices per node %s; the bundled driver is not installed\n", cfg.Driver, cfg.DeviceClass, sh.Vendor.Counts())
	return sh, nil
}
