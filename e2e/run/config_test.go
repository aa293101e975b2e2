// SPDX-License-Identifier: Apache-2.0

package run

import (
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// env is an environment for Resolve: the variables set, "" included.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// As make read them: unset is the default, set (even to "") the value;
// some defaults follow other variables; paths are the repository's.
func TestResolve(t *testing.T) {
	c := Resolve(env(), nil, "/repo")
	for name, want := range map[string]string{"K8S_VERSION": "1.35", "K8S_VERSIONS": "1.35", "PROFILE": "default", "FEATURES": "defaults",
		"CLUSTER_NAME": "dra-e2e", "NODE_IMAGE": "auto", "UPGRADE_NODE_IMAGE": "auto", "UPGRADE": "1", "PROCS": "4", "TIMEOUT": "60m",
		"ARTIFACTS": "/repo/_artifacts", "BENCH_REPEAT": "3", "REGISTRY_PORT": "5001", "LABELS": "", "KUBECONFIG": ""} {
		if got := c.Get(name); got != want {
			t.Errorf("default %s=%q, want %q", name, got, want)
		}
	}
	c = Resolve(env("K8S_VERSION", "1.36", "NODE_IMAGE", "build", "PROCS", "", "ARTIFACTS", "out", "LABELS", "authz && $x"), nil, "/repo")
	for name, want := range map[string]string{"K8S_VERSIONS": "1.36", "UPGRADE_NODE_IMAGE": "build", "PROCS": "", "ARTIFACTS": "/repo/out", "LABELS": "authz && $x"} {
		if got := c.Get(name); got != want {
			t.Errorf("%s=%q, want %q", name, got, want)
		}
	}
	// A node image of one's own is no source for the next release.
	if got := Resolve(env("NODE_IMAGE", "kindest/node:v1.35.8"), nil, "/r").Get("UPGRADE_NODE_IMAGE"); got != "auto" {
		t.Errorf("UPGRADE_NODE_IMAGE after an image reference: %q", got)
	}
	if got := Resolve(env("K8S_VERSIONS", "all"), nil, "/r").Releases(); !slices.Equal(got, release.Minors()) {
		t.Errorf("K8S_VERSIONS=all: %v", got)
	}
	// Only a KUBECONFIG of make's command line selects an existing cluster.
	if c := Resolve(env("KUBECONFIG", "kc"), nil, "/r"); c.Existing() {
		t.Errorf("a KUBECONFIG of the environment selected %q", c.Kubeconfig())
	}
	if c := Resolve(env("KUBECONFIG", "kc"), []string{"KUBECONFIG"}, "/r"); c.Kubeconfig() != "/r/kc" {
		t.Errorf("KUBECONFIG given: %q", c.Kubeconfig())
	}
}

// With KEEP_CLUSTER=1 and several releases each kept cluster has a name of
// its own; one release, or an existing cluster, keeps CLUSTER_NAME.
func TestClusterNames(t *testing.T) {
	kept := Resolve(env("K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "1"), nil, "/r")
	if got := kept.clusterNames(); !slices.Equal(got, []string{"dra-e2e-1-35", "dra-e2e-1-36"}) {
		t.Errorf("kept, two releases: %v", got)
	}
	for _, c := range []Config{
		Resolve(env("K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "0"), nil, "/r"),
		Resolve(env("K8S_VERSIONS", "1.35", "KEEP_CLUSTER", "1"), nil, "/r"),
		Resolve(env("K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "1", "KUBECONFIG", "/kc"), []string{"KUBECONFIG"}, "/r"),
	} {
		if got := c.ClusterName("1.36"); got != "dra-e2e" {
			t.Errorf("%v: %s", c.values, got)
		}
	}
}

// DEVICE_CLASS=a,b is a run per class; one class is one run.
func TestClasses(t *testing.T) {
	if got := Resolve(env("DEVICE_CLASS", "gpu"), nil, "/r").Classes(); got != nil {
		t.Errorf("one class: %v", got)
	}
	if got := Resolve(env("DEVICE_CLASS", "a, b,c"), nil, "/r").Classes(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("three classes: %v", got)
	}
}

// What a step starts reads the step's values, not the shell's; a
// KUBECONFIG of the environment stays as it was.
func TestEnviron(t *testing.T) {
	c := Resolve(env(), nil, "/r").With("LABELS", "(!Serial)")
	got := c.Environ([]string{"LABELS=authz", "KUBECONFIG=/home/kc", "HOME=/home"})
	for _, want := range []string{"LABELS=(!Serial)", "KUBECONFIG=/home/kc", "HOME=/home", "K8S_VERSION=1.35"} {
		if !slices.Contains(got, want) {
			t.Errorf("environment lacks %s: %v", want, got)
		}
	}
	if slices.Contains(got, "LABELS=authz") {
		t.Errorf("the shell's LABELS stayed: %v", got)
	}
}

// Each bad variable is refused in one line that names it; good ones pass.
// The lines are preflight's since before the table.
func TestProblemsRefuseEachBadVariableInOneLine(t *testing.T) {
	good := []string{"K8S_VERSIONS", "1.33 1.35", "UPGRADE_NODE_IMAGE", "kindest/node:v1.36.4@sha256:" + strings.Repeat("a", 64), "KEEP_CLUSTER", "0"}
	if p := Resolve(env(good...), nil, "/r").Problems(); len(p) != 0 {
		t.Fatalf("good variables refused: %v", p)
	}
	for name, c := range map[string]struct {
		set   []string
		given []string
		want  string
	}{
		"release":      {[]string{"K8S_VERSIONS", "1.35 1.32"}, nil, `unknown Kubernetes release "1.32"`},
		"no release":   {[]string{"K8S_VERSIONS", " "}, nil, "no release given"},
		"features":     {[]string{"K8S_VERSIONS", "1.35", "FEATURES", "nope"}, nil, `unknown feature set "nope" for Kubernetes 1.35`},
		"profile":      {[]string{"PROFILE", "bogus"}, nil, `"bogus"`},
		"locked":       {[]string{"K8S_VERSIONS", "1.36", "PROFILE", "apiserver-off"}, nil, "1.36"},
		"labels":       {[]string{"LABELS", "nosuch"}, nil, "unknown label nosuch"},
		"focus":        {[]string{"FOCUS", "("}, nil, `FOCUS "(" is not a regular expression`},
		"node image":   {[]string{"NODE_IMAGE", "latest"}, nil, `NODE_IMAGE: "latest" is neither a source`},
		"cluster name": {[]string{"CLUSTER_NAME", "Bad_Name"}, nil, `CLUSTER_NAME "Bad_Name"`},
		"keep cluster": {[]string{"KEEP_CLUSTER", "yes"}, nil, `KEEP_CLUSTER="yes": it takes 1 or 0`},
		"upgrade":      {[]string{"UPGRADE", "false"}, nil, `UPGRADE="false": it takes 1 or 0`},
		"timeout":      {[]string{"TIMEOUT", "60"}, nil, `TIMEOUT="60" is not a positive Go duration`},
		"procs":        {[]string{"PROCS", "0"}, nil, `PROCS="0" is not a whole number`},
		"empty procs":  {[]string{"PROCS", ""}, nil, `PROCS="" is not a whole number`},
		"bench":        {[]string{"BENCH_REPEAT", "x"}, nil, `BENCH_REPEAT="x" is not a whole number`},
		"ginkgo args":  {[]string{"GINKGO_ARGS", `--focus="a`}, nil, `GINKGO_ARGS="--focus=\"a"`},
		"driver alone": {[]string{"KUBECONFIG", "k", "DRIVER", "gpu.example.com"}, []string{"KUBECONFIG"}, `a driver of your own needs both`},
		"class alone":  {[]string{"KUBECONFIG", "k", "DEVICE_CLASS", "gpu"}, []string{"KUBECONFIG"}, `a driver of your own needs both`},
		"driver, kind": {[]string{"DRIVER", "gpu.example.com", "DEVICE_CLASS", "gpu"}, nil, `give it with KUBECONFIG=path`},
		"check alone":  {[]string{"ADMIN_CHECK", "nvidia-smi"}, nil, `give DRIVER and DEVICE_CLASS too`},
		"namespace":    {[]string{"DRIVER_NAMESPACE", "gpu-operator"}, nil, `DRIVER_NAMESPACE=gpu-operator`},
		"check, no image": {[]string{"KUBECONFIG", "k", "DRIVER", "gpu.example.com", "DEVICE_CLASS", "gpu", "ADMIN_CHECK", "nvidia-smi"},
			[]string{"KUBECONFIG"}, `give WORKLOAD_IMAGE`},
	} {
		p := Resolve(env(append(slices.Clone(good), c.set...)...), c.given, "/r").Problems()
		if len(p) != 1 || !strings.Contains(p[0], c.want) || strings.Contains(p[0], "\n") {
			t.Errorf("%s: %q, want one line containing %q", name, p, c.want)
		}
	}
	// A context without the kubeconfig it belongs to names no cluster.
	if p := Resolve(env("KUBECONTEXT", "staging"), nil, "/r").Problems(); len(p) != 1 || !strings.Contains(p[0], "KUBECONTEXT=staging names a context of a kubeconfig: give KUBECONFIG") {
		t.Errorf("KUBECONTEXT alone: %q", p)
	}
	// A feature set two releases lack is a line for each.
	if p := Resolve(env("K8S_VERSIONS", "1.33 1.35", "FEATURES", "stable"), nil, "/r").Problems(); len(p) != 2 {
		t.Errorf("stable on 1.33 and 1.35: %q", p)
	}
}

// KUBECONTEXT names one of the kubeconfig's contexts; one it lacks is
// refused with those it has, before any client is made.
func TestKubeContextIsOneOfTheKubeconfigs(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: prod, context: {cluster: c, user: u}}, {name: staging, context: {cluster: c, user: u}}]
current-context: prod
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for context, want := range map[string]string{"staging": "", "": "", "stagin": `KUBECONTEXT=stagin: kubeconfig ` + kubeconfig + ` has no context "stagin" (it has prod, staging)`} {
		p := Resolve(env("KUBECONFIG", kubeconfig, "KUBECONTEXT", context), []string{"KUBECONFIG"}, "/r").Problems()
		switch {
		case want == "" && len(p) > 0:
			t.Errorf("KUBECONTEXT=%q refused: %q", context, p)
		case want != "" && (len(p) != 1 || p[0] != want):
			t.Errorf("KUBECONTEXT=%q: %q, want %q", context, p, want)
		}
	}
}
