// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
)

// A Plan is not written to after Resolve: a copy taken before the cluster
// answered has the same values, and the same one client set, once the
// process has dialled.
func TestPlanDoesNotChangeAfterResolve(t *testing.T) {
	p, err := Resolve(context.Background(), resolved.Run{Given: "1.35", Release: "1.35.8", Profile: "default",
		Features: release.DefaultSet, Cluster: resolved.Cluster{Name: "dra-e2e"}})
	if err != nil {
		t.Fatal(err)
	}
	before := *p
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.dial(kubeconfig, ""); err != nil { // makes clients, dials nothing
		t.Fatal(err)
	}
	if before.clients != p.clients || before.clients.typed == nil {
		t.Error("the copy taken before dialling does not share the process's client set")
	}
	if !reflect.DeepEqual(before.Run, p.Run) || !reflect.DeepEqual(before.Rel, p.Rel) || !reflect.DeepEqual(before.Prof, p.Prof) {
		t.Error("dialling changed the plan")
	}
	typed := p.clients.typed
	if err := p.dial(kubeconfig, ""); err != nil || p.clients.typed != typed {
		t.Errorf("a second dial made another client set (%v)", err)
	}
	if err := p.adopt(&kindcluster.Cluster{Name: "dra-e2e", Config: p.clients.config, Client: typed}); err == nil {
		t.Error("adopt replaced the process's client set")
	}
}
