package push

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource/imagearchive"
)

// A registry in the test process, on loopback: the push is real HTTP to a
// real OCI distribution API, and the image is read back from it.
func TestPushWritesTheArchivesImageAndPinsItsDigest(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	archive := filepath.Join(t.TempDir(), "img.tar")
	img := imagearchive.Image{Tags: []string{"kind-e2e/testdriver:abc123"}, Entrypoint: []string{"/testdriver"},
		Files: []imagearchive.File{{Path: "/testdriver", Mode: 0o755, Data: []byte("#!/bin/true\n")}}}
	if err := img.WriteFile(archive); err != nil {
		t.Fatal(err)
	}
	ref, err := Reference(host+"/dra", "kind-e2e/testdriver:abc123")
	if err != nil || ref != host+"/dra/testdriver:abc123" {
		t.Fatalf("Reference: %q %v", ref, err)
	}
	pinned, err := Push(context.Background(), archive, "kind-e2e/testdriver:abc123", ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pinned, ref+"@sha256:") {
		t.Fatalf("pushed %q", pinned)
	}
	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Image(parsed)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := got.Digest()
	if !strings.HasSuffix(pinned, digest.String()) {
		t.Errorf("registry has %s, Push said %s", digest, pinned)
	}
	cfg, err := got.ConfigFile()
	if err != nil || !slices.Equal(cfg.Config.Entrypoint, []string{"/testdriver"}) {
		t.Errorf("config %+v %v", cfg, err)
	}
	resolved, err := Resolve(context.Background(), ref)
	if err != nil || !strings.HasSuffix(resolved, "@"+digest.String()) {
		t.Errorf("Resolve(%s) = %q, %v", ref, resolved, err)
	}
	if _, err := Resolve(context.Background(), host+"/dra/testdriver:nope"); err == nil || !strings.Contains(err.Error(), "no such image in "+host) {
		t.Errorf("a missing tag: %v", err)
	}
}

func TestResolveSaysWhenTheRegistryDoesNotAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	_, err = Resolve(context.Background(), addr+"/dra/testdriver:abc")
	if err == nil || !strings.Contains(err.Error(), "the registry "+addr+" did not answer") || strings.Contains(err.Error(), "\n") {
		t.Errorf("closed port: %v", err)
	}
}

func TestReferenceRefusesWhatIsNoRegistryPath(t *testing.T) {
	for _, bad := range []string{"", "UPPER/case", "host:5001/dra@sha256:1", "a b"} {
		if _, err := Reference(bad, "kind-e2e/testdriver:abc"); err == nil || !strings.Contains(err.Error(), "is not a registry and path") {
			t.Errorf("Reference(%q): %v", bad, err)
		}
	}
	if got, err := Reference("registry.example.com/team/", "kind-e2e/testdriver:abc"); err != nil || got != "registry.example.com/team/testdriver:abc" {
		t.Errorf("%q %v", got, err)
	}
}

func TestPlainHTTPOnlyForLoopbackAndPrivateRegistries(t *testing.T) {
	for ref, insecure := range map[string]bool{
		"localhost:5001/dra/td:1": true, "127.0.0.1:5001/td:1": true, "172.18.0.1:5001/td:1": true,
		"registry.example.com/td:1": false, "8.8.8.8:5000/td:1": false,
	} {
		if got := len(nameOptions(ref)) > 0; got != insecure {
			t.Errorf("%s: plain HTTP %t, want %t", ref, got, insecure)
		}
	}
}
