// SPDX-License-Identifier: Apache-2.0

package push

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kep5018/adminaccess-conformance/clusters/nodesource"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// startRegistry serves go-containerregistry's in-process registry on
// loopback and returns its host:port.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// writeArchive writes a small docker-save archive the way testdriver/image
// does, with the project's own archive writer (nodesource.ArchiveImage).
func writeArchive(t *testing.T, tag string) string {
	t.Helper()
	return writePlatformArchive(t, tag, image.Platform{})
}

// writePlatformArchive is writeArchive with the config naming p (the
// writer's linux/amd64 where p is zero).
func writePlatformArchive(t *testing.T, tag string, p image.Platform) string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "testdriver-image.tar")
	img := nodesource.ArchiveImage{Tags: []string{tag}, Entrypoint: []string{"/testdriver"}, OS: p.OS, Architecture: p.Arch,
		Files: []nodesource.ArchiveFile{
			{Path: "/testdriver", Mode: 0o755, Data: []byte("#!/bin/true\n")},
			{Path: "/workload", Mode: 0o755, Data: []byte("#!/bin/true\n")},
		}}
	if err := img.WriteFile(archive); err != nil {
		t.Fatal(err)
	}
	return archive
}

// An archive whose image is tagged on a bare localhost is read back by
// that tag: the archive's reader reads its tags with pkg/name alone.
func TestPushFindsAnImageTaggedOnBareLocalhost(t *testing.T) {
	host := startRegistry(t)
	const tag = "localhost/td:1"
	archive := writeArchive(t, tag)
	if _, err := Push(context.Background(), archive, tag, host+"/dra/td:1"); err != nil {
		t.Fatal(err)
	}
}

// The push is real HTTP to a real OCI distribution API, and the image is
// read back from it.
func TestPushWritesTheArchivesImageAndPinsItsDigest(t *testing.T) {
	host := startRegistry(t)
	const tag = "kind-e2e/testdriver:abc123"
	archive := writeArchive(t, tag)

	ref, err := Reference(host+"/dra", tag)
	if err != nil || ref != host+"/dra/testdriver:abc123" {
		t.Fatalf("Reference: %q %v", ref, err)
	}
	pinned, err := Push(context.Background(), archive, tag, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pinned, ref+"@sha256:") {
		t.Fatalf("Push returned %q, want %s@sha256:...", pinned, ref)
	}

	parsed, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Image(parsed)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := got.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if pinned != ref+"@"+digest.String() {
		t.Errorf("the registry has %s, Push said %s", digest, pinned)
	}
	cfg, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/testdriver"}) {
		t.Errorf("Entrypoint %q, want [/testdriver]", cfg.Config.Entrypoint)
	}
	if layers, err := got.Layers(); err != nil || len(layers) != 1 {
		t.Errorf("layers %d %v, want one", len(layers), err)
	}

	// The pinned reference pulls the same image.
	byDigest, err := name.ParseReference(pinned, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(byDigest); err != nil {
		t.Errorf("the pinned reference does not resolve: %v", err)
	}

	resolved, err := Resolve(context.Background(), ref)
	if err != nil || resolved != pinned {
		t.Errorf("Resolve(%s) = %q, %v; want %q", ref, resolved, err, pinned)
	}
	if resolved, err := Resolve(context.Background(), pinned); err != nil || resolved != pinned {
		t.Errorf("Resolve(%s) = %q, %v", pinned, resolved, err)
	}

	// Pushing the same archive again changes nothing.
	again, err := Push(context.Background(), archive, tag, ref)
	if err != nil || again != pinned {
		t.Errorf("second push: %q %v, want %q", again, err, pinned)
	}
}

// Images of several platforms go up as one index, each entry under its
// platform and pulling its own image; one platform's image goes up as an
// image. Platforms reads back what each serves.
func TestPushPlatformsWritesAnIndexOfSeveral(t *testing.T) {
	host := startRegistry(t)
	amd := image.Platform{OS: "linux", Arch: "amd64"}
	arm := image.Platform{OS: "linux", Arch: "arm64"}
	built := []image.Built{
		{Tag: "kind-e2e/testdriver:a1", Archive: writePlatformArchive(t, "kind-e2e/testdriver:a1", amd), Platform: amd},
		{Tag: "kind-e2e/testdriver:b2", Archive: writePlatformArchive(t, "kind-e2e/testdriver:b2", arm), Platform: arm},
	}
	ref := host + "/dra/testdriver:both"
	pinned, err := PushPlatforms(context.Background(), built, ref)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := name.ParseReference(pinned, name.Insecure)
	idx, err := remote.Index(parsed)
	if err != nil {
		t.Fatalf("%s is no index: %v", pinned, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Fatalf("the index lists %d images, want 2", len(m.Manifests))
	}
	for i, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := img.ConfigFile()
		if d.Platform == nil || d.Platform.OS+"/"+d.Platform.Architecture != built[i].Platform.String() ||
			cfg.OS+"/"+cfg.Architecture != built[i].Platform.String() {
			t.Errorf("entry %d: platform %v, its config %s/%s, want %s", i, d.Platform, cfg.OS, cfg.Architecture, built[i].Platform)
		}
	}
	if got, err := Platforms(context.Background(), pinned); err != nil || !slices.Equal(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("Platforms(index) = %v, %v", got, err)
	}

	one, err := PushPlatforms(context.Background(), built[1:], host+"/dra/testdriver:b2")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Platforms(context.Background(), one); err != nil || !slices.Equal(got, []string{"linux/arm64"}) {
		t.Errorf("Platforms(image) = %v, %v", got, err)
	}
	if _, err := Platforms(context.Background(), host+"/dra/testdriver:none"); err == nil || !strings.Contains(err.Error(), "no such image") {
		t.Errorf("Platforms of a missing image: %v", err)
	}
}

func TestPushSaysWhatIsMissing(t *testing.T) {
	host := startRegistry(t)
	archive := writeArchive(t, "kind-e2e/testdriver:abc")
	if _, err := Push(context.Background(), archive, "kind-e2e/testdriver:other", host+"/dra/testdriver:other"); err == nil || !strings.Contains(err.Error(), "reading kind-e2e/testdriver:other from "+archive) {
		t.Errorf("a tag not in the archive: %v", err)
	}
	if _, err := Push(context.Background(), filepath.Join(t.TempDir(), "none.tar"), "kind-e2e/testdriver:abc", host+"/dra/testdriver:abc"); err == nil {
		t.Error("a missing archive pushed")
	}
}

func TestResolveSaysTheImageIsNotThere(t *testing.T) {
	host := startRegistry(t)
	ref := host + "/dra/testdriver:nope"
	_, err := Resolve(context.Background(), ref)
	want := ref + ": no such image in the registry " + host
	if err == nil || err.Error() != want {
		t.Errorf("a missing image: %v, want %q", err, want)
	}
}

func TestResolveSaysWhenTheRegistryDoesNotAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ref := addr + "/dra/testdriver:abc"
	_, err = Resolve(context.Background(), ref)
	if err == nil || !strings.HasPrefix(err.Error(), ref+": the registry "+addr+" did not answer: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("closed port: %v", err)
	}
	t.Log(err)
}

func TestResolveSaysWhenTheHostIsNoRegistry(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := host + "/dra/testdriver:abc"
	_, err := Resolve(context.Background(), ref)
	want := ref + ": " + host + " answers but is not a container registry (HTTP 404 on /v2/)"
	if err == nil || err.Error() != want {
		t.Errorf("no registry: %v, want %q", err, want)
	}
}

func TestResolveRefusesWhatIsNoReference(t *testing.T) {
	if _, err := Resolve(context.Background(), "localhost:5001/DRA/x:1"); err == nil || !strings.HasPrefix(err.Error(), "localhost:5001/DRA/x:1: not an image reference") {
		t.Errorf("bad reference: %v", err)
	}
}

func TestReference(t *testing.T) {
	for registry, want := range map[string]string{
		"localhost:5001/dra":         "localhost:5001/dra/testdriver:abc",
		"localhost:5001":             "localhost:5001/testdriver:abc",
		"registry.example.com/team/": "registry.example.com/team/testdriver:abc",
		" 10.0.0.5:5000/a/b-c ":      "10.0.0.5:5000/a/b-c/testdriver:abc",
		"[::1]:5001/dra":             "[::1]:5001/dra/testdriver:abc",
		"ghcr.io/org/my_images":      "ghcr.io/org/my_images/testdriver:abc",
		"dra":                        "dra/testdriver:abc", // a Docker Hub namespace
	} {
		if got, err := Reference(registry, "kind-e2e/testdriver:abc"); err != nil || got != want {
			t.Errorf("Reference(%q) = %q, %v; want %q", registry, got, err, want)
		}
	}
	// The built tag's repository may carry a registry with a port.
	if got, err := Reference("localhost:5001/dra", "localhost:5000/kind-e2e/testdriver:abc"); err != nil || got != "localhost:5001/dra/testdriver:abc" {
		t.Errorf("a tag with a port: %q %v", got, err)
	}
}

func TestReferenceRefusesWhatIsNoRegistryPath(t *testing.T) {
	for _, bad := range []string{
		"", "  ", "UPPER/case", "localhost:5001/DRA", "http://localhost:5001/dra", "localhost:5001//dra",
		"localhost:5001/dra:v1", "host:5001/dra@sha256:1", "a b", "-bad/x", "localhost:5001/dra-",
		"localhost:port/dra",
	} {
		_, err := Reference(bad, "kind-e2e/testdriver:abc")
		if err == nil || !strings.HasPrefix(err.Error(), "REGISTRY=") || !strings.Contains(err.Error(), "is not a registry and path") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Reference(%q): %v", bad, err)
		}
	}
	for _, tag := range []string{"kind-e2e/testdriver", "kind-e2e/testdriver:", "localhost:5000/testdriver"} {
		if _, err := Reference("localhost:5001/dra", tag); err == nil || !strings.Contains(err.Error(), "has no version") {
			t.Errorf("tag %q: %v", tag, err)
		}
	}
}

func TestPlainHTTPOnlyForLoopbackAndPrivateRegistries(t *testing.T) {
	for ref, insecure := range map[string]bool{
		"localhost:5001/dra/td:1": true, "localhost/td:1": true, "127.0.0.1:5001/td:1": true, "127.1.2.3:5001/td:1": true,
		"[::1]:5001/td:1": true, "10.1.2.3:5000/td:1": true, "172.18.0.1:5001/td:1": true, "192.168.1.10:5000/td:1": true,
		"[fd00::1]:5000/td:1":       true,
		"registry.example.com/td:1": false, "registry.local:5000/td:1": false, "8.8.8.8:5000/td:1": false,
		"172.32.0.1:5000/td:1": false, "dra/td:1": false, "localhost.example.com/td:1": false,
	} {
		if got := len(nameOptions(ref)) > 0; got != insecure {
			t.Errorf("%s: plain HTTP %t, want %t", ref, got, insecure)
		}
	}
}

type okTransport struct{}

func (okTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// go-containerregistry falls back to plain HTTP for *.local too; the
// transport refuses that, and plain-HTTP redirects away from loopback.
func TestTransportRefusesPlainHTTPElsewhere(t *testing.T) {
	rt := httpsOnly{okTransport{}}
	for url, allowed := range map[string]bool{
		"https://registry.example.com/v2/": true, "http://127.0.0.1:5001/v2/": true, "http://172.18.0.1:5001/v2/": true,
		"http://registry.local:5000/v2/": false, "http://203.0.113.7/v2/": false,
	} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.RoundTrip(req)
		var plain errPlainHTTP
		if allowed && err != nil || !allowed && !errors.As(err, &plain) {
			t.Errorf("%s: %v", url, err)
		}
	}
}

// The edge cases of reading references with pkg/name: a host with a port,
// localhost, a digest-pinned tag, no registry.
func TestReferenceEdgeCases(t *testing.T) {
	for _, c := range []struct{ registry, tag, want string }{
		{"localhost", "kind-e2e/testdriver:abc", "localhost/testdriver:abc"},
		{"registry.example.com:443/team", "kind-e2e/testdriver:abc", "registry.example.com:443/team/testdriver:abc"},
		{"docker.io/team", "kind-e2e/testdriver:abc", "docker.io/team/testdriver:abc"},
		{"dra/sub", "testdriver:abc", "dra/sub/testdriver:abc"}, // a tag without a path, Docker Hub prefix
	} {
		if got, err := Reference(c.registry, c.tag); err != nil || got != c.want {
			t.Errorf("Reference(%q, %q) = %q, %v; want %q", c.registry, c.tag, got, err, c.want)
		}
	}
	// A tag pinned by a digest is not what testdriver/image builds.
	pinned := "kind-e2e/testdriver:abc@sha256:" + strings.Repeat("a", 64)
	if _, err := Reference("localhost:5001/dra", pinned); err == nil || !strings.HasPrefix(err.Error(), "image tag ") {
		t.Errorf("a digest-pinned tag: %v", err)
	}
	// pkg/name takes "LOCALHOST" for a path, which cannot be upper case.
	if _, err := Reference("LOCALHOST/dra", "kind-e2e/testdriver:abc"); err == nil || !strings.Contains(err.Error(), "is not a registry and path") {
		t.Errorf("LOCALHOST: %v", err)
	}
}

func TestPlainHTTPForDigestPinnedReferences(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("a", 64)
	for ref, insecure := range map[string]bool{
		"localhost:5001/dra/td:1" + digest: true, "127.0.0.1:5001/td" + digest: true,
		"registry.example.com/td:1" + digest: false, "dra/td" + digest: false,
	} {
		if got := len(nameOptions(ref)) > 0; got != insecure {
			t.Errorf("%s: plain HTTP %t, want %t", ref, got, insecure)
		}
	}
}
