package main

import (
	"context"
	"strings"
	"testing"
)

func TestCheckRefusesEachBadArgumentInOneLine(t *testing.T) {
	good := args{releases: "1.33 1.35", profile: "default", nodeImage: "auto", upgradeImage: "kindest/node:v1.36.4@sha256:" + strings.Repeat("a", 64), clusterName: "dra-e2e",
		keepCluster: "0", upgrade: "1", timeout: "60m", procs: "2"}
	if p := good.checkArgs(); len(p) != 0 {
		t.Fatalf("good arguments refused: %v", p)
	}
	for name, c := range map[string]struct {
		mutate func(*args)
		want   string
	}{
		"release":      {func(a *args) { a.releases = "1.35 1.32" }, `unknown Kubernetes release "1.32"`},
		"no release":   {func(a *args) { a.releases = " " }, "no release given"},
		"profile":      {func(a *args) { a.profile = "bogus" }, `"bogus"`},
		"locked":       {func(a *args) { a.releases = "1.36"; a.profile = "apiserver-off" }, "1.36"},
		"labels":       {func(a *args) { a.labels = "nosuch" }, "unknown label nosuch"},
		"focus":        {func(a *args) { a.focus = "(" }, "FOCUS \"(\" is not a regular expression"},
		"node image":   {func(a *args) { a.nodeImage = "latest" }, `NODE_IMAGE: "latest" is neither a source`},
		"cluster name": {func(a *args) { a.clusterName = "Bad_Name" }, `CLUSTER_NAME "Bad_Name"`},
		"keep cluster": {func(a *args) { a.keepCluster = "yes" }, `KEEP_CLUSTER="yes": it takes 1 or 0`},
		"upgrade":      {func(a *args) { a.upgrade = "false" }, `UPGRADE="false": it takes 1 or 0`},
		"timeout":      {func(a *args) { a.timeout = "60" }, `TIMEOUT="60" is not a positive Go duration`},
		"procs":        {func(a *args) { a.procs = "0" }, `PROCS="0" is not a whole number`},
		"driver alone": {func(a *args) { a.kubeconfig = "k"; a.driver = "gpu.example.com" }, `a driver of your own needs both`},
		"class alone":  {func(a *args) { a.kubeconfig = "k"; a.deviceClass = "gpu" }, `a driver of your own needs both`},
		"driver, kind": {func(a *args) { a.driver, a.deviceClass = "gpu.example.com", "gpu" }, `give it with KUBECONFIG=path`},
		"check alone":  {func(a *args) { a.adminCheck = "nvidia-smi" }, `give DRIVER and DEVICE_CLASS too`},
		"check, no image": {func(a *args) {
			a.kubeconfig, a.driver, a.deviceClass, a.adminCheck = "k", "gpu.example.com", "gpu", "nvidia-smi"
		}, `give WORKLOAD_IMAGE`},
	} {
		a := good
		c.mutate(&a)
		p := a.checkArgs()
		if len(p) != 1 || !strings.Contains(p[0], c.want) || strings.Contains(p[0], "\n") {
			t.Errorf("%s: %q, want one line containing %q", name, p, c.want)
		}
	}
	if p := (args{releases: "1.35", profile: "default", nodeImage: "auto", upgradeImage: "auto", clusterName: "x", kubeconfig: "/nonexistent", timeout: "1h", procs: "1"}).check(context.Background()); len(p) != 1 || !strings.Contains(p[0], "/nonexistent") {
		t.Errorf("kubeconfig: %q", p)
	}
}

func TestKeptClustersOfSeveralReleasesHaveNamesOfTheirOwn(t *testing.T) {
	a := args{releases: "1.35 1.36", clusterName: "dra-e2e", keepCluster: "1"}
	if got := a.clusterNames(); len(got) != 2 || got[0] != "dra-e2e-1-35" || got[1] != "dra-e2e-1-36" {
		t.Errorf("kept, two releases: %v", got)
	}
	for _, b := range []args{{releases: "1.35 1.36", clusterName: "dra-e2e", keepCluster: "0"}, {releases: "1.35", clusterName: "dra-e2e", keepCluster: "1"}} {
		if got := b.clusterNames(); len(got) != 1 || got[0] != "dra-e2e" {
			t.Errorf("%+v: %v", b, got)
		}
	}
}
