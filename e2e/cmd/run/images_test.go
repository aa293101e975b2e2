// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/run"
)

// make images names every image of the run, each once: a release's
// published node image (and its next release's where the upgrade spec
// runs), or what the offline build makes; the driver and workload image
// built here unless one is given; on a cluster given with KUBECONFIG no
// node image, and with a driver of one's own its workload image.
func TestImagesOfARun(t *testing.T) {
	was, wasDriver := offlineImages, bundledDriver
	t.Cleanup(func() { offlineImages, bundledDriver = was, wasDriver })
	offlineImages = func(_ context.Context, r release.Release, _, _ string) (string, []string, error) {
		return "kind-e2e/node:v" + r.Version + "-abc", []string{"registry.k8s.io/kube-apiserver:v" + r.Version}, nil
	}
	built := 0
	bundledDriver = func(run.Config) (string, error) { built++; return "kind-e2e/testdriver:123", nil }
	get := func(name string) release.Release {
		r, err := release.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r133, r134, r135, r136 := get("1.33"), get("1.34"), get("1.35"), get("1.36")
	for _, c := range []struct {
		name  string
		set   []string
		given []string
		want  []string // the image lines, in order
		build bool     // the bundled driver is compiled
		code  int
	}{
		{name: "a published release", set: []string{"K8S_VERSIONS", "1.35"}, build: true,
			want: []string{r135.Published, r136.Published, "kind-e2e/testdriver:123"}},
		{name: "an offline release, its next published", set: []string{"K8S_VERSIONS", "1.33"}, build: true,
			want: []string{"kind-e2e/node:v" + r133.Version + "-abc", "registry.k8s.io/kube-apiserver:v" + r133.Version, r134.Published, "kind-e2e/testdriver:123"}},
		{name: "each image once", set: []string{"K8S_VERSIONS", "1.35 1.36", "UPGRADE", "1", "TESTDRIVER_IMAGE", "r.example/d@sha256:1"},
			want: []string{r135.Published, r136.Published, get("1.37").Published, "r.example/d@sha256:1"}},
		{name: "no upgrade", set: []string{"K8S_VERSIONS", "1.35", "UPGRADE", "0", "NODE_IMAGE", "build"}, build: true,
			want: []string{"kind-e2e/node:v" + r135.Version + "-abc", "registry.k8s.io/kube-apiserver:v" + r135.Version, "kind-e2e/testdriver:123"}},
		{name: "a feature set: no upgrade", set: []string{"K8S_VERSIONS", "1.36", "FEATURES", "stable", "NODE_IMAGE", "my/node:1"}, build: true,
			want: []string{"my/node:1", "kind-e2e/testdriver:123"}},
		{name: "a vendor's cluster and driver", given: []string{"KUBECONFIG"},
			set:  []string{"KUBECONFIG", "k", "DRIVER", "gpu.example.com", "DEVICE_CLASS", "gpu", "WORKLOAD_IMAGE", "busybox:1"},
			want: []string{"busybox:1"}},
		{name: "an unknown release", set: []string{"K8S_VERSIONS", "1.30"}, code: run.ExitRefused},
	} {
		built = 0
		var out, errs strings.Builder
		cfg := run.Resolve(lookup(c.set...), c.given, t.TempDir())
		if code := printImages(context.Background(), &out, &errs, cfg); code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.name, code, c.code, errs.String())
			continue
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if l != "" && !strings.HasPrefix(l, "# ") {
				lines = append(lines, l)
			}
		}
		if strings.Join(lines, "\n") != strings.Join(c.want, "\n") || (built > 0) != c.build {
			t.Errorf("%s: images %q (driver built %d times); want %q (built: %v)\n%s", c.name, lines, built, c.want, c.build, out.String())
		}
	}

	// A recipe that cannot be read is said, and fails the command.
	offlineImages = func(context.Context, release.Release, string, string) (string, []string, error) {
		return "", nil, errors.New("go mod download: no network")
	}
	var out, errs strings.Builder
	if code := printImages(context.Background(), &out, &errs, run.Resolve(lookup("K8S_VERSIONS", "1.33"), nil, t.TempDir())); code != 1 || !strings.Contains(errs.String(), "no network") {
		t.Errorf("an unreadable recipe: exit %d, %q", code, errs.String())
	}
}

// make node-image-tag prints the offline build's tag of K8S_VERSION alone,
// the tag make node-image gives it (the CI workflow's cache key), and
// refuses a release the table lacks.
func TestNodeImageTag(t *testing.T) {
	was := offlineImages
	t.Cleanup(func() { offlineImages = was })
	var asked []string
	offlineImages = func(_ context.Context, r release.Release, _, _ string) (string, []string, error) {
		asked = append(asked, r.Minor)
		return "kind-e2e/node:v" + r.Version + "-abc", []string{"registry.k8s.io/kube-apiserver:v" + r.Version}, nil
	}
	r, err := release.Get("1.33")
	if err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	if code := printNodeImageTag(context.Background(), &out, &errs, run.Resolve(lookup("K8S_VERSION", "1.33"), nil, t.TempDir())); code != 0 || out.String() != "kind-e2e/node:v"+r.Version+"-abc\n" || len(asked) != 1 {
		t.Errorf("exit %d, printed %q (recipes read: %q): %s", code, out.String(), asked, errs.String())
	}
	out.Reset()
	if code := printNodeImageTag(context.Background(), &out, &errs, run.Resolve(lookup("K8S_VERSION", "1.30"), nil, t.TempDir())); code != run.ExitRefused || out.Len() > 0 {
		t.Errorf("an unknown release: exit %d, printed %q", code, out.String())
	}
	offlineImages = func(context.Context, release.Release, string, string) (string, []string, error) {
		return "", nil, errors.New("go mod download: no network")
	}
	errs.Reset()
	if code := printNodeImageTag(context.Background(), &out, &errs, run.Resolve(lookup("K8S_VERSION", "1.33"), nil, t.TempDir())); code != 1 || !strings.Contains(errs.String(), "no network") || out.Len() > 0 {
		t.Errorf("an unreadable recipe: exit %d, %q", code, errs.String())
	}
}

// lookup reads the variables given as name, value, ...
func lookup(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
