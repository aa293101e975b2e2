// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/e2e/run"
	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

// node is a node whose kubelet reports platform ("linux/arm64").
func node(name, platform string) *corev1.Node {
	p, _ := image.ParsePlatform(platform)
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OperatingSystem: p.OS, Architecture: p.Arch}}}
}

func cordoned(n *corev1.Node) *corev1.Node { n.Spec.Unschedulable = true; return n }

// fakeWorld is a run's world with a fake cluster of these nodes
// (Kubernetes 1.35), the variables' own checks as its preflight, the real
// platform check, an in-process registry, and builds that compile nothing:
// each writes a small archive whose config names its platform, and is
// recorded.
type fakeWorld struct {
	world
	registry string
	client   *fake.Clientset
	builds   []string // "suite linux/arm64" for each image built
}

func newFakeWorld(t *testing.T, nodes ...runtime.Object) *fakeWorld {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	f := &fakeWorld{registry: strings.TrimPrefix(srv.URL, "http://"), client: fake.NewSimpleClientset(nodes...)}
	f.world = world{
		root: "../../..",
		connect: func(kubeconfig, kubeContext string) (cluster, error) {
			return cluster{config: &rest.Config{Host: "https://fake"}, client: f.client, name: "fake", minor: "1.35"}, nil
		},
		preflight:       func(_ context.Context, c run.Config) []string { return c.Problems() },
		checkPlatform:   image.CheckPlatform,
		pushedPlatforms: push.Platforms,
		push:            push.PushPlatforms,
		build: func(_ context.Context, g image.GoImage, _, outDir string, platforms []image.Platform) ([]image.Built, error) {
			var out []image.Built
			for _, p := range platforms {
				f.builds = append(f.builds, g.Repository+" "+p.String())
				tag := g.Repository + ":" + strings.ReplaceAll(p.String(), "/", "-")
				archive := filepath.Join(t.TempDir(), "image.tar")
				img := nodesource.ArchiveImage{Tags: []string{tag}, Entrypoint: []string{g.Entrypoint}, OS: p.OS, Architecture: p.Arch,
					Files: []nodesource.ArchiveFile{{Path: g.Entrypoint, Mode: 0o755, Data: []byte("binary")}}}
				if err := img.WriteFile(archive); err != nil {
					return nil, err
				}
				out = append(out, image.Built{Tag: tag, Archive: archive, Platform: p})
			}
			return out, nil
		},
	}
	return f
}

// pushed are the repositories the registry holds.
func (f *fakeWorld) pushed(t *testing.T) []string {
	t.Helper()
	reg, err := name.NewRegistry(f.registry, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	return repos
}

// runWith runs the command in f with the environment env (NAME=value
// words), its Job allowed a second: the fake cluster starts no pod, so a
// run that got as far as the Job ends there, after its clean-up.
func (f *fakeWorld) runWith(t *testing.T, env ...string) (int, error, string) {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var out bytes.Buffer
	args := []string{"--kubeconfig", "/k", "--registry", f.registry + "/dra", "--wait", "1s", "--out", t.TempDir(), "--artifacts", t.TempDir()}
	code, err := runE2E(args, func(k string) string { return vars[k] }, &out, f.world)
	t.Logf("exit %d, %v\n%s", code, err, out.String())
	return code, err, out.String()
}

// A variable that make e2e's preflight refuses is refused by make
// incluster-e2e with the same line, exit 2, before any image is built or
// pushed: LABELS, FEATURES (checked against the cluster's own release)
// and DEVICE_CLASS among them.
func TestVariablesAreCheckedBeforeAnyBuild(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"LABELS=authz && nosuch"}, "unknown label nosuch"},
		{[]string{"FEATURES=nope"}, `unknown feature set "nope" for Kubernetes 1.35`},
		{[]string{"FEATURES=stable"}, `unknown feature set "stable" for Kubernetes 1.35`}, // 1.36's, not the cluster's
		{[]string{"DEVICE_CLASS=gpu.example.com"}, "a driver of your own needs both"},
		{[]string{"K8S_VERSION=1.32"}, `unknown Kubernetes release "1.32"`},
	} {
		f := newFakeWorld(t, node("w1", "linux/arm64"))
		code, err, _ := f.runWith(t, c.env...)
		if code != 2 || !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 with %q", c.env, code, err, c.want)
		}
		if len(f.builds) > 0 || len(f.pushed(t)) > 0 {
			t.Errorf("%v: built %v and pushed %v before refusing", c.env, f.builds, f.pushed(t))
		}
	}
	// Every bad variable is a line of its own.
	f := newFakeWorld(t, node("w1", "linux/arm64"))
	if _, err, _ := f.runWith(t, "TIMEOUT=soon", "FOCUS=("); err == nil || len(strings.Split(err.Error(), "\n")) != 2 {
		t.Errorf("two bad variables: %v", err)
	}
}

// The images are built for the nodes' platform, read from the cluster
// (cordoned nodes aside), and pushed so: an arm64 cluster gets arm64
// images, one of arm64 and amd64 nodes an index of both, for the suite's
// image the Job runs and for the bundled driver's it carries.
func TestImagesAreBuiltForTheNodesPlatforms(t *testing.T) {
	for _, c := range []struct {
		name  string
		nodes []runtime.Object
		want  []string
		said  string
	}{
		{"arm64", []runtime.Object{node("a1", "linux/arm64"), node("a2", "linux/arm64"), cordoned(node("old", "linux/amd64"))}, []string{"linux/arm64"},
			"the nodes run linux/arm64 (2 nodes): the images are built for it"},
		{"mixed", []runtime.Object{node("x1", "linux/amd64"), node("a1", "linux/arm64"), node("a2", "linux/arm64")}, []string{"linux/amd64", "linux/arm64"},
			"the nodes run linux/amd64 (1 node), linux/arm64 (2 nodes): each image is built for each platform and pushed as an index"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeWorld(t, c.nodes...)
			code, err, out := f.runWith(t)
			// The fake cluster never starts the Job's pod.
			if code != 1 || err == nil || !strings.Contains(err.Error(), "waiting for the suite") {
				t.Fatalf("exit %d, %v; want the wait for the Job's pod to time out", code, err)
			}
			var want []string
			for _, repo := range []string{suitejob.Repository, image.Repository} {
				for _, p := range c.want {
					want = append(want, repo+" "+p)
				}
			}
			if !slices.Equal(f.builds, want) {
				t.Errorf("built %v, want %v", f.builds, want)
			}
			job, err := f.client.BatchV1().Jobs(suitejob.DefaultNamespace).Get(context.Background(), suitejob.JobName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			suite, driver := job.Spec.Template.Spec.Containers[0].Image, envOf(job, "TESTDRIVER_IMAGE")
			for what, ref := range map[string]string{"the suite's image": suite, "the driver's image": driver} {
				served, err := push.Platforms(context.Background(), ref)
				if err != nil || !slices.Equal(served, c.want) {
					t.Errorf("%s %s serves %v (%v), want %v", what, ref, served, err, c.want)
				}
			}
			if !strings.Contains(out, c.said) {
				t.Errorf("the output does not say %q", c.said)
			}
		})
	}
}

func envOf(job *batchv1.Job, name string) string {
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// Nodes the images cannot be built for are refused, a line per platform
// naming its nodes, exit 2, with nothing built and nothing pushed: a
// Windows node, 32-bit ARM, an architecture Go does not compile for, a
// node that says no platform, a cluster whose nodes are all cordoned; and
// a suite image pushed before for amd64 where the nodes are arm64.
func TestPlatformsTheImagesCannotServeAreRefusedBeforeAnyPush(t *testing.T) {
	unknown := node("blank", "linux/amd64")
	unknown.Status.NodeInfo = corev1.NodeSystemInfo{}
	for _, c := range []struct {
		name  string
		nodes []runtime.Object
		want  []string
	}{
		{"windows", []runtime.Object{node("lin-1", "linux/amd64"), node("win-1", "windows/amd64"), node("win-2", "windows/amd64")},
			[]string{"nodes win-1, win-2 run windows/amd64: the images hold Linux binaries and no base image, which a windows node cannot run"}},
		{"sparc64 and arm", []runtime.Object{node("s1", "linux/sparc64"), node("pi", "linux/arm")},
			[]string{"node pi runs linux/arm: a node's status does not say which 32-bit ARM version (v5, v6, v7) it runs, and the binaries must be compiled for one",
				"node s1 runs linux/sparc64: Go cannot compile for it (go tool dist list names no linux/sparc64)"}},
		{"no platform", []runtime.Object{node("w1", "linux/amd64"), unknown},
			[]string{"node blank does not say which OS and architecture it runs (status.nodeInfo, or the labels kubernetes.io/os and kubernetes.io/arch), which the images must be built for"}},
		{"all cordoned", []runtime.Object{cordoned(node("w1", "linux/amd64"))},
			[]string{"the cluster has no schedulable node (1, all cordoned): the Job's pod could not start"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFakeWorld(t, c.nodes...)
			code, err, _ := f.runWith(t)
			if code != 2 || !errors.As(err, new(usageError)) || err.Error() != strings.Join(c.want, "\n") {
				t.Errorf("exit %d, %v\nwant 2 with\n%s", code, err, strings.Join(c.want, "\n"))
			}
			if len(f.builds) > 0 || len(f.pushed(t)) > 0 {
				t.Errorf("built %v and pushed %v before refusing", f.builds, f.pushed(t))
			}
		})
	}

	t.Run("pushed suite image", func(t *testing.T) {
		f := newFakeWorld(t, node("a1", "linux/arm64"))
		amd := image.Platform{OS: "linux", Arch: "amd64"}
		built, err := f.build(context.Background(), suitejob.Image("../../.."), "", "", []image.Platform{amd})
		if err != nil {
			t.Fatal(err)
		}
		f.builds = nil
		ref := f.registry + "/dra/adminaccess-suite:old"
		if _, err := push.PushPlatforms(context.Background(), built, ref); err != nil {
			t.Fatal(err)
		}
		before := f.pushed(t)
		var out bytes.Buffer
		code, err := runE2E([]string{"--kubeconfig", "/k", "--suite-image", ref, "--registry", f.registry + "/dra", "--wait", "1s"}, func(string) string { return "" }, &out, f.world)
		want := "SUITE_IMAGE=" + ref + " serves linux/amd64, but node a1 runs linux/arm64: push one built for the nodes (or an index of each platform)"
		if code != 2 || err == nil || err.Error() != want {
			t.Errorf("exit %d, %v\nwant 2 with %s", code, err, want)
		}
		if len(f.builds) > 0 || !slices.Equal(f.pushed(t), before) {
			t.Errorf("built %v, pushed %v (before: %v)", f.builds, f.pushed(t), before)
		}
	})
}

// Every client of a run is of the context KUBECONTEXT names: with a
// kubeconfig of two contexts on two API servers, the connection, the
// nodes' platforms, the namespace check and the clean-up all reach the
// named one, and the current one nothing.
func TestEveryClientUsesTheNamedContext(t *testing.T) {
	var mu sync.Mutex
	var paths [2][]string
	var servers [2]*httptest.Server
	for i := range servers {
		servers[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths[i] = append(paths[i], r.Method+" "+r.URL.Path)
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/version":
				json.NewEncoder(w).Encode(map[string]string{"major": "1", "minor": "35", "gitVersion": "v1.35.4"})
			case "/api/v1/nodes":
				json.NewEncoder(w).Encode(corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, Items: []corev1.Node{*node("a1", "linux/arm64")}})
			default:
				w.WriteHeader(http.StatusNotFound)
				json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
			}
		}))
		defer servers[i].Close()
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- {name: prod, cluster: {server: %q}}
- {name: staging, cluster: {server: %q}}
contexts:
- {name: prod, context: {cluster: prod, user: u}}
- {name: staging, context: {cluster: staging, user: u}}
current-context: prod
users:
- {name: u, user: {token: x}}
`, servers[0].URL, servers[1].URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	w := outside()
	w.preflight = func(context.Context, run.Config) []string { return nil } // make e2e's asks the cluster of its own tests
	var said bytes.Buffer
	say := func(format string, a ...any) { fmt.Fprintf(&said, format+"\n", a...) }
	o := options{kubeconfig: kubeconfig, kubeContext: "staging", registry: "localhost:5001/dra", namespace: suitejob.DefaultNamespace}
	p, err := prepare(context.Background(), o, func(string) string { return "" }, say, w)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.job.delete(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%s\nstaging's server was asked: %v", said.String(), paths[1])
	if p.cluster.name != "staging" || len(paths[0]) != 0 {
		t.Errorf("cluster %q; the current context's server was asked %v", p.cluster.name, paths[0])
	}
	for _, want := range []string{"GET /version", "GET /api/v1/nodes", "GET /api/v1/namespaces/" + suitejob.DefaultNamespace,
		"DELETE /api/v1/namespaces/" + suitejob.DefaultNamespace, "DELETE /apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + suitejob.DefaultNamespace + "-suite"} {
		if !slices.Contains(paths[1], want) {
			t.Errorf("staging's server was not asked %s", want)
		}
	}
}

// The real images, compiled for the platform INCLUSTER_E2E_PLATFORM names
// (linux/arm64, say) as make incluster-e2e compiles them, read back from
// their archives: each config names the platform, and each binary's ELF
// header that platform's machine. Opt-in: a cold compile of the suite for
// another architecture takes minutes, which make test does not spend on
// every run (testdriver/image's test builds a small binary for arm64 on
// every run, through the same code).
func TestImagesForThePlatform(t *testing.T) {
	given := os.Getenv("INCLUSTER_E2E_PLATFORM")
	if given == "" {
		t.Skip("set INCLUSTER_E2E_PLATFORM=linux/arm64 (say) to build the suite's and the driver's images for it")
	}
	p, err := image.ParsePlatform(given)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.Machine()
	w := outside()
	for _, g := range []image.GoImage{suitejob.Image("../../.."), image.Driver} {
		built, err := w.build(context.Background(), g, "../../..", t.TempDir(), []image.Platform{p})
		if err != nil {
			t.Fatal(err)
		}
		c, err := image.Inspect(built[0].Archive, built[0].Tag)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := json.MarshalIndent(c.Config, "", "  ")
		t.Logf("%s, built for %s: config\n%s", built[0].Tag, built[0].Platform, cfg)
		if c.Config.OS != p.OS || c.Config.Architecture != p.Arch {
			t.Errorf("%s: config %s/%s", built[0].Tag, c.Config.OS, c.Config.Architecture)
		}
		if len(c.Machines) != len(g.Binaries) {
			t.Errorf("%s: ELF binaries %v, want one for each of %d", built[0].Tag, c.Machines, len(g.Binaries))
		}
		for path, m := range c.Machines {
			t.Logf("%s %s: ELF machine %s", built[0].Tag, path, m)
			if m != want {
				t.Errorf("%s %s: ELF machine %s, want %s", built[0].Tag, path, m, want)
			}
		}
	}
}
