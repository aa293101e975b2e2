// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/profile"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/testdriver/contract"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

func envOf(t *testing.T, minor, prof string) *Env {
	t.Helper()
	r, err := release.Get(minor)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Get(prof)
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Rel: r, Prof: p, Shared: Shared{Driver: deploy.Options{Image: "img:1", APIServerHost: "172.18.0.2", APIServerPort: "6443", RunID: "dra-e2e-1700000000"}.Defaults()}}
}

// The feature set follows the scheduler's DRAAdminAccess under the profile,
// and the allocator follows the feature set.
func TestFeaturesFollowTheSchedulersGate(t *testing.T) {
	e := envOf(t, "1.35", "default")
	if !e.Features().Has(release.FeatureAdminAccess) || e.Allocator() != "incubating" {
		t.Fatalf("1.35 default: %s, allocator %s", e.Features(), e.Allocator())
	}
	e = envOf(t, "1.35", "scheduler-off")
	if e.Features().Has(release.FeatureAdminAccess) {
		t.Fatalf("scheduler-off: %s must not have DRAAdminAccess", e.Features())
	}
	// DRAPrioritizedList is still on: stable of 1.35 supports nothing.
	if got := e.Allocator(); got != "incubating" {
		t.Errorf("1.35 scheduler-off allocator %s", got)
	}
	e = envOf(t, "1.33", "adminaccess-off")
	if len(e.Features().Features) != 0 {
		t.Errorf("1.33 with the gate off has no allocator feature on: %s", e.Features())
	}
}

func TestFeatureDriverIsASecondInstance(t *testing.T) {
	e := envOf(t, "1.36", "default")
	o := e.FeatureDriver(contract.LayoutPartitionable)
	if o.DriverName == e.Driver.DriverName || o.DeviceClass == e.Driver.DeviceClass || o.Namespace == e.Driver.Namespace {
		t.Fatalf("the instance must not share a name, class or namespace with the suite's driver: %+v", o)
	}
	if o.Image != e.Driver.Image || o.APIServerHost != e.Driver.APIServerHost || o.Layout != contract.LayoutPartitionable || o.Published() != len(contract.PartitionDevices) {
		t.Fatalf("instance %+v", o)
	}
	// Labelled with the run, never kept: a later run removes one a killed run left.
	if o.RunID == "" || o.RunID != e.Driver.RunID || o.Kept {
		t.Fatalf("instance run %q kept %t, the suite's driver's run %q", o.RunID, o.Kept, e.Driver.RunID)
	}
}

// A partitionable instance publishes its counters in the shape the
// release's kube-apiserver takes; no other layout is told anything.
func TestFeatureDriverPublishesTheReleasesCounterShape(t *testing.T) {
	for minor, want := range map[string]bool{"1.34": true, "1.35": false, "1.36": false} {
		e := envOf(t, minor, "default")
		if got := e.FeatureDriver(contract.LayoutPartitionable).CountersWithDevices; got != want {
			t.Errorf("%s: partitionable instance counters with devices %t, want %t", minor, got, want)
		}
		if e.FeatureDriver(contract.LayoutPlain).CountersWithDevices {
			t.Errorf("%s: the plain instance has no counters", minor)
		}
	}
}

// otherAllocators are the implementations some release's allocators group
// runs under a kube-scheduler of its own (every feature set but the
// defaults), each once.
func otherAllocators(t *testing.T) []string {
	seen := map[string]bool{}
	var out []string
	for _, minor := range release.Minors() {
		rel, err := release.Get(minor)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range rel.FeatureSets()[1:] {
			a, err := rel.AllocatorFor(set)
			if err != nil {
				t.Fatal(err)
			}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no release has another allocator")
	}
	return out
}

// An allocator's instance of a layout runs beside the feature group's: it
// shares no name, class or namespace with it, and every name stays within
// what the API takes, for every layout and allocator.
func TestFeatureDriverForAnOwnerIsAThirdInstance(t *testing.T) {
	e := envOf(t, "1.37", "default")
	for _, layout := range []contract.Layout{contract.LayoutPlain, contract.LayoutPartitionable, contract.LayoutTainted, contract.LayoutShared} {
		group := e.FeatureDriver(layout)
		seen := map[string]bool{group.DriverName: true, group.DeviceClass: true, group.Namespace: true}
		for _, owner := range otherAllocators(t) {
			o := e.FeatureDriverFor(layout, owner)
			for _, name := range []string{o.DriverName, o.DeviceClass, o.Namespace} {
				if seen[name] {
					t.Errorf("%s for %s: %q is another instance's too", layout, owner, name)
				}
				if len(name) > contract.MaxDriverName {
					t.Errorf("%s for %s: %q is %d characters, the API takes %d", layout, owner, name, len(name), contract.MaxDriverName)
				}
			}
			seen[o.DriverName], seen[o.Namespace] = true, true
			if o.Layout != layout || o.Image != e.Driver.Image || o.RunID != e.Driver.RunID || o.Kept {
				t.Errorf("instance %+v", o)
			}
		}
	}
}

func TestReleaseMatchesRefusesWhatTheServerContradicts(t *testing.T) {
	for _, ok := range [][2]string{{"1.35", "v1.35.8"}, {"1.35", "v1.35.4"}, {"1.36.3", "v1.36.3"}, {"1.35", "v1.35.8+k3s1"},
		{"1.38", "v1.38.0-beta.0"}, {"1.38.0-beta.0", "v1.38.0-beta.0"}, {"1.38.0-beta.0", "v1.38.0-beta.0.45+abc123"}} {
		if err := ReleaseMatches(ok[0], ok[1]); err != nil {
			t.Errorf("K8S_VERSION=%s on %s: %v", ok[0], ok[1], err)
		}
	}
	for given, server := range map[string]string{"1.35": "v1.36.3", "1.35.6": "v1.35.8",
		// A pre-release given is the one the cluster must run.
		"1.38.0-beta.0": "v1.38.0-rc.1", "1.38.0-rc.0": "v1.38.0"} {
		err := ReleaseMatches(given, server)
		if err == nil || !strings.Contains(err.Error(), "it runs Kubernetes "+server+", not "+given) {
			t.Errorf("K8S_VERSION=%s on %s: %v", given, server, err)
		}
	}
	if err := ReleaseMatches("1.35", "v1.36.3"); err == nil || !strings.Contains(err.Error(), "K8S_VERSION=1.36") {
		t.Errorf("the refusal names the release to use: %v", err)
	}
}

// The provenance names the cluster of the kubeconfig's current context, or
// of the context KUBECONTEXT names; a context the kubeconfig lacks is
// refused with the ones it has.
func TestKubeconfigCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: "https://other:6443"}
- name: dxd
  cluster: {server: "https://dxd.example:6443"}
contexts:
- name: a
  context: {cluster: other, user: u}
- name: b
  context: {cluster: dxd, user: u}
current-context: b
users:
- name: u
  user: {token: x}
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	name, server, err := KubeconfigCluster(path, "")
	if err != nil || name != "dxd" || server != "https://dxd.example:6443" {
		t.Errorf("KubeconfigCluster = %q, %q, %v", name, server, err)
	}
	name, server, err = KubeconfigCluster(path, "a")
	if err != nil || name != "other" || server != "https://other:6443" {
		t.Errorf("KubeconfigCluster(context a) = %q, %q, %v", name, server, err)
	}
	if _, _, err := KubeconfigCluster(path, "c"); err == nil || !strings.Contains(err.Error(), `has no context "c" (it has a, b)`) {
		t.Errorf("KubeconfigCluster(context c) = %v", err)
	}
}

// Preflight asks the cluster of the context it is given, not the current
// one: with two contexts on two servers, only the named one is reached.
func TestPreflightDialsTheGivenContext(t *testing.T) {
	var hits [2]atomic.Int32
	var servers [2]*httptest.Server
	for i := range servers {
		servers[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i].Add(1)
			http.Error(w, "no", http.StatusServiceUnavailable)
		}))
		defer servers[i].Close()
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- {name: current, cluster: {server: %q}}
- {name: named, cluster: {server: %q}}
contexts:
- {name: current, context: {cluster: current, user: u}}
- {name: named, context: {cluster: named, user: u}}
current-context: current
users:
- {name: u, user: {token: x}}
`, servers[0].URL, servers[1].URL)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Preflight(context.Background(), path, "named", "1.35")
	if err == nil || !strings.Contains(err.Error(), "kubeconfig "+path+" (context named) does not answer") {
		t.Errorf("Preflight = %v", err)
	}
	if hits[0].Load() != 0 || hits[1].Load() == 0 {
		t.Errorf("requests: current context's server %d, named context's %d", hits[0].Load(), hits[1].Load())
	}
}
