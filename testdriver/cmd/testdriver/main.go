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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	"github.com/kep5018/adminaccess-conformance/testdriver/cdi"
	"github.com/kep5018/adminaccess-conformance/testdriver/driver"
	"github.com/kep5018/adminaccess-conformance/testdriver/state"
)

func main() {
	klog.InitFlags(nil)
	name := flag.String("driver-name", "testdriver.e2e.adminaccess.example.com", "DRA driver name (also the CDI vendor)")
	devices := flag.Int("devices", 4, "devices published per node")
	cdiDir := flag.String("cdi-dir", "/var/run/cdi", "where CDI specs are written")
	nodeName := flag.String("node-name", os.Getenv("NODE_NAME"), "this node")
	flag.Parse()
	if err := run(*name, *nodeName, *cdiDir, *devices); err != nil {
		klog.ErrorS(err, "testdriver stopped")
		os.Exit(1)
	}
}

func run(name, nodeName, cdiDir string, devices int) error {
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
	d := &driver.Driver{Name: name, NodeName: nodeName, Devices: devices,
		CDI: cdi.Writer{Dir: cdiDir, Vendor: name}, State: checkpoint, Cancel: cancel}
	// Both DRA gRPC services are served (the helper's default): 1.33 kubelets
	// call v1beta1, 1.34+ call v1.
	helper, err := kubeletplugin.Start(ctx, d,
		kubeletplugin.KubeClient(client), kubeletplugin.NodeName(nodeName), kubeletplugin.DriverName(name))
	if err != nil {
		return err
	}
	defer helper.Stop()
	if err := helper.PublishResources(ctx, d.Resources()); err != nil {
		return err
	}
	klog.InfoS("testdriver serving", "driver", name, "node", nodeName, "devices", devices, "preparedClaims", len(checkpoint.UIDs()))
	<-ctx.Done()
	return context.Cause(ctx)
}
