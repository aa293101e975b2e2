// SPDX-License-Identifier: Apache-2.0

// Command testdriver is the suite's DRA driver: a kubelet plugin that publishes
// the node's devices and prepares claims through CDI. See package driver.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	draclient "k8s.io/dynamic-resource-allocation/client"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"

	"github.com/kep5018/adminaccess-conformance/testdriver/cdi"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/driver"
	"github.com/kep5018/adminaccess-conformance/testdriver/publish"
	"github.com/kep5018/adminaccess-conformance/testdriver/state"
)

func main() {
	klog.InitFlags(nil)
	name := flag.String("driver-name", contract.DriverName, "DRA driver name (also the CDI vendor)")
	devices := flag.Int("devices", contract.PlainDevices, "devices published per node (layout plain)")
	slots := flag.Int("slots", 0, "spare pools of --devices devices published per node beside the node's own (layout plain), each with its slot number in the \""+contract.SlotAttribute+"\" attribute")
	layoutName := flag.String("layout", string(contract.LayoutPlain), "what each node publishes: plain (--devices independent devices), partitionable (a whole device and two halves on one counter set), tainted (a device tainted NoSchedule, one NoExecute) or shared (one device that allows multiple allocations, with a consumable capacity)")
	taintFlag := flag.String("taint", "", "taints added on top of the layout's, with the suite's taint key: device=NoSchedule|NoExecute[,...]")
	countersWithDevices := flag.Bool("counters-with-devices", false, "layout partitionable: publish the counter set in the slice of the devices that consume it, as Kubernetes 1.34's resource.k8s.io/v1 requires, instead of in a slice of its own, as 1.35 and later require")
	cdiDir := flag.String("cdi-dir", "/var/run/cdi", "where CDI specs are written")
	nodeName := flag.String("node-name", os.Getenv("NODE_NAME"), "this node")
	flag.Parse()
	layout, err := contract.ParseLayout(*layoutName)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdriver:", err)
		os.Exit(2)
	}
	taints, err := contract.ParseTaints(*taintFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testdriver:", err)
		os.Exit(2)
	}
	if *slots > 0 && layout != contract.LayoutPlain {
		fmt.Fprintf(os.Stderr, "testdriver: --slots is for the plain layout, not %s\n", layout)
		os.Exit(2)
	}
	if *countersWithDevices && layout != contract.LayoutPartitionable {
		fmt.Fprintf(os.Stderr, "testdriver: --counters-with-devices is for the partitionable layout, not %s\n", layout)
		os.Exit(2)
	}
	if err := run(*name, *nodeName, *cdiDir, *devices, *slots, layout, taints, *countersWithDevices); err != nil {
		klog.ErrorS(err, "testdriver stopped")
		os.Exit(1)
	}
}

func run(name, nodeName, cdiDir string, devices, slots int, layout contract.Layout, taints contract.AddedTaints, countersWithDevices bool) error {
	if nodeName == "" {
		return fmt.Errorf("no node name: set --node-name or NODE_NAME")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	cfg, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// The checkpoint lives in the kubelet's plugin folder (a hostPath), so it
	// outlives this pod.
	pluginDir := filepath.Join(kubeletplugin.KubeletPluginsDir, name)
	if err := os.MkdirAll(pluginDir, 0o750); err != nil { // the helper listens on dra.sock in it
		return err
	}
	checkpoint, err := state.Open(filepath.Join(pluginDir, "checkpoint.json"))
	if err != nil {
		return err
	}
	d := &driver.Driver{Name: name, NodeName: nodeName, Devices: devices, Slots: slots, Layout: layout, Taints: taints,
		CountersWithDevices: countersWithDevices, CDI: cdi.Writer{Dir: cdiDir, Vendor: name}, State: checkpoint, Cancel: cancel}
	// Both DRA gRPC services are served (the helper's default): 1.33 kubelets
	// call v1beta1, 1.34+ call v1.
	helper, err := kubeletplugin.Start(ctx, d,
		kubeletplugin.KubeClient(client), kubeletplugin.NodeName(nodeName), kubeletplugin.DriverName(name))
	if err != nil {
		return err
	}
	defer helper.Stop()
	dra := draclient.New(client)
	keeper := &publish.Keeper{
		Start: func(ctx context.Context) (publish.Controller, error) {
			return startPublishing(ctx, client, d, nodeName)
		},
		Period: keeperPeriod,
		Want:   publishedSlices(d),
		Published: func(ctx context.Context) (int, error) {
			list, err := dra.ResourceSlices().List(ctx, metav1.ListOptions{
				FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", nodeName), fields.OneTermEqualSelector("spec.driver", name)).String(),
			})
			if err != nil {
				return 0, err
			}
			return len(list.Items), nil
		},
	}
	klog.InfoS("testdriver serving", "driver", name, "node", nodeName, "layout", layout, "devices", layout.Published(devices), "slots", slots, "countersWithDevices", countersWithDevices, "preparedClaims", len(checkpoint.UIDs()))
	if err := keeper.Run(ctx); err != nil {
		return err
	}
	return context.Cause(ctx)
}

// publishedSlices is how many ResourceSlices the node has when every pool
// of the driver is published.
func publishedSlices(d *driver.Driver) int {
	n := 0
	for _, pool := range d.Resources().Pools {
		n += len(pool.Slices)
	}
	return n
}

// keeperPeriod is how often the driver asks whether its node's slices are
// still published (see package publish): one small list per node.
const keeperPeriod = 2 * time.Second

// republishDelay is how soon the driver puts back its ResourceSlices after
// someone deleted them.
const republishDelay = time.Second

// startPublishing starts the controller that keeps the node's ResourceSlices
// as the driver describes them. It is the same controller as the helper's
// PublishResources, but with a short sync delay: the kubelet deletes all of
// its node's ResourceSlices whenever it starts, the suite restarts the
// control-plane kubelet with every kube-apiserver restart, and the helper's
// controller puts them back only 30 s after a deletion
// (resourceslice.DefaultSyncDelay), time every spec after such a restart
// then spent waiting for devices.
func startPublishing(ctx context.Context, client kubernetes.Interface, d *driver.Driver, nodeName string) (*resourceslice.Controller, error) {
	resources := d.Resources()
	delay := republishDelay
	return resourceslice.StartController(ctx, resourceslice.Options{
		DriverName: d.Name,
		KubeClient: client,
		Owner:      &resourceslice.Owner{APIVersion: "v1", Kind: "Node", Name: nodeName},
		Resources:  &resources,
		SyncDelay:  &delay,
		// Nothing a publishing error says is mended by stopping the driver.
		ErrorHandler: func(ctx context.Context, err error, msg string) {
			d.HandleError(ctx, fmt.Errorf("%w: %w", kubeletplugin.ErrRecoverable, err), msg)
		},
	})
}
