// SPDX-License-Identifier: Apache-2.0

package profile

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

func rel(t *testing.T, minor string) release.Release {
	t.Helper()
	r, err := release.Get(minor)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func prof(t *testing.T, name string) Profile {
	t.Helper()
	p, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUnknownProfileNamesTheKnownOnes(t *testing.T) {
	_, err := Get("nope")
	if err == nil || !strings.Contains(err.Error(), "default, adminaccess-off, apiserver-only") {
		t.Fatalf("error should list profiles, got %v", err)
	}
}

func TestGatesPerComponent(t *testing.T) {
	r133, r135, r136 := rel(t, "1.33"), rel(t, "1.35"), rel(t, "1.36")
	cases := []struct {
		r    release.Release
		p    string
		c    Component
		want string
	}{
		{r133, "default", APIServer, "DRAAdminAccess=true,DynamicResourceAllocation=true"},
		{r133, "default", Kubelet, "DynamicResourceAllocation=true"},
		{r135, "apiserver-only", APIServer, "DRAAdminAccess=true"},
		{r135, "apiserver-only", Scheduler, "DRAAdminAccess=false"},
		{r135, "apiserver-only", ControllerManager, "DRAAdminAccess=false"},
		{r135, "scheduler-off", ControllerManager, "DRAAdminAccess=true"},
		{r135, "adminaccess-off", Kubelet, "DRAAdminAccess=false"},
		// Locked on: the flag never names the gate.
		{r136, "default", APIServer, ""},
	}
	for _, c := range cases {
		if got := FormatGates(prof(t, c.p).Gates(c.r, c.c)); got != c.want {
			t.Errorf("%s/%s/%s: gates %q, want %q", c.r.Minor, c.p, c.c, got, c.want)
		}
	}
}

func TestLockedReleaseRefusesGateOffProfiles(t *testing.T) {
	r := rel(t, "1.36")
	err := prof(t, "scheduler-off").CheckRunnable(r)
	if err == nil || !strings.Contains(err.Error(), `profile "scheduler-off" cannot run on Kubernetes 1.36`) ||
		!strings.Contains(err.Error(), "can run: default") {
		t.Fatalf("unexpected error %v", err)
	}
	if _, err := Render(r, prof(t, "adminaccess-off"), "x", "img"); err == nil {
		t.Fatal("Render must refuse a profile the release cannot run")
	}
	if got := RunnableOn(rel(t, "1.35")); len(got) != len(Names()) {
		t.Fatalf("1.35 should run every profile, got %v", got)
	}
}

func TestRenderV1Beta3PatchesEachComponent(t *testing.T) {
	cfg, err := Render(rel(t, "1.35"), prof(t, "apiserver-only"), "c1", "node:1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 2 || cfg.Nodes[0].Role != "control-plane" || cfg.Nodes[1].Role != "worker" || cfg.Nodes[1].Image != "node:1" {
		t.Fatalf("nodes: %+v", cfg.Nodes)
	}
	if !cfg.Networking.DisableDefaultCNI {
		t.Fatal("the suite installs its own pod network")
	}
	var cluster struct {
		APIServer, ControllerManager, Scheduler struct {
			ExtraArgs map[string]string `json:"extraArgs"`
		}
	}
	if err := yaml.Unmarshal([]byte(cfg.KubeadmConfigPatches[0]), &cluster); err != nil {
		t.Fatal(err)
	}
	got := []string{cluster.APIServer.ExtraArgs["feature-gates"], cluster.ControllerManager.ExtraArgs["feature-gates"], cluster.Scheduler.ExtraArgs["feature-gates"]}
	want := []string{"DRAAdminAccess=true", "DRAAdminAccess=false", "DRAAdminAccess=false"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("feature-gates per component = %v, want %v", got, want)
	}
	if _, set := cluster.ControllerManager.ExtraArgs["leader-elect"]; set || cluster.Scheduler.ExtraArgs["leader-elect"] != "false" {
		t.Fatalf("no leader election in the scheduler only, got %+v", cluster)
	}
	var kubelet map[string]any
	yaml.Unmarshal([]byte(cfg.KubeadmConfigPatches[1]), &kubelet)
	if kubelet["kind"] != "KubeletConfiguration" || kubelet["failCgroupV1"] != false {
		t.Fatalf("kubelet patch: %v", kubelet)
	}
	if kubelet["containerLogMaxSize"] != "-1" {
		t.Fatalf("kubelet patch: containerLogMaxSize %v, want \"-1\" (no rotation of the logs specs read)", kubelet["containerLogMaxSize"])
	}
}

func TestRender133EnablesDRAAndBetaAPIs(t *testing.T) {
	cfg, err := Render(rel(t, "1.33"), prof(t, "default"), "c", "img")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RuntimeConfig["resource.k8s.io/v1beta1"] != "true" || cfg.RuntimeConfig["resource.k8s.io/v1beta2"] != "true" {
		t.Fatalf("runtimeConfig: %v", cfg.RuntimeConfig)
	}
	out, _ := YAML(cfg)
	for _, want := range []string{"DRAAdminAccess=true,DynamicResourceAllocation=true", "DynamicResourceAllocation: true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rendered config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "failCgroupV1") {
		t.Errorf("1.33 kubelets do not need failCgroupV1:\n%s", out)
	}
}

func TestRenderV1Beta4AppendsWithJSON6902(t *testing.T) {
	// 1.36 can only run default, whose gates are all implied; force an extra gate
	// through a release copy to exercise the v1beta4 path.
	r := rel(t, "1.36")
	r.ExtraGates = map[string]bool{"SomeGate": true}
	cfg, err := Render(r, prof(t, "default"), "c", "img")
	if err != nil {
		t.Fatal(err)
	}
	// apiserver and controller manager: gates (appended); scheduler: its
	// whole list (kind leaves it null).
	if len(cfg.KubeadmConfigPatchesJSON6902) != 3 {
		t.Fatalf("want one append per apiserver and controller-manager flag and one list for the scheduler, got %+v", cfg.KubeadmConfigPatchesJSON6902)
	}
	var le []map[string]any
	if err := yaml.Unmarshal([]byte(cfg.KubeadmConfigPatchesJSON6902[2].Patch), &le); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"name": "feature-gates", "value": "SomeGate=true"}, map[string]any{"name": "leader-elect", "value": "false"},
		map[string]any{"name": "vmodule", "value": release.AllocatorVModule}}
	if le[0]["op"] != "add" || le[0]["path"] != "/scheduler/extraArgs" || !reflect.DeepEqual(le[0]["value"], want) {
		t.Fatalf("scheduler patch: %v", le)
	}
	p := cfg.KubeadmConfigPatchesJSON6902[1]
	var ops []map[string]any
	if err := yaml.Unmarshal([]byte(p.Patch), &ops); err != nil {
		t.Fatal(err)
	}
	if p.Version != "v1beta4" || ops[0]["path"] != "/controllerManager/extraArgs/-" ||
		!reflect.DeepEqual(ops[0]["value"], map[string]any{"name": "feature-gates", "value": "SomeGate=true"}) {
		t.Fatalf("patch: %+v ops %v", p, ops)
	}
	for _, patch := range cfg.KubeadmConfigPatches {
		if strings.Contains(patch, "ClusterConfiguration") {
			t.Fatalf("no strategic ClusterConfiguration patch on v1beta4: %s", patch)
		}
	}
}

func TestRenderAFeatureSetGatesEveryComponentAndLogsTheAllocator(t *testing.T) {
	r, err := release.Resolve("1.35", "alpha")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Get("default")
	cfg, err := Render(r, p, "x", "img")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := YAML(cfg)
	for _, want := range []string{"DRAPartitionableDevices=true", "DRADeviceTaintRules=true", "resource.k8s.io/v1alpha3: \"true\"", "vmodule: " + release.AllocatorVModule, "DRAPartitionableDevices: true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the 1.35 alpha cluster's config lacks %q:\n%s", want, out)
		}
	}
	for _, c := range AllComponents {
		if !p.Gates(r, c)["DRAConsumableCapacity"] {
			t.Errorf("%s runs without DRAConsumableCapacity", c)
		}
	}
	plain, _ := release.Get("1.35")
	cfg, _ = Render(plain, p, "x", "img")
	out, _ = YAML(cfg)
	if strings.Contains(string(out), "v1alpha3") {
		t.Errorf("the defaults' config has the set's flags:\n%s", out)
	}
	// The allocator's log level is every cluster's: known-defect verdicts
	// read why a device was passed over under any feature set.
	if !strings.Contains(string(out), "vmodule: "+release.AllocatorVModule) {
		t.Errorf("the defaults' config lacks the allocator's log level:\n%s", out)
	}
}
