// SPDX-License-Identifier: Apache-2.0

package nodesource

import (
	"context"
	"strings"
	"testing"

	"github.com/kep5018/adminaccess-conformance/clusters/release"
)

// The answers the policy gives before it asks Docker or the builder anything.
func TestPolicyRefusesWithoutDocker(t *testing.T) {
	r133, err := release.Get("1.33")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec Policy
		want string
	}{
		{"latest", `unknown node image source "latest": use auto, pull, build, present or an image reference`},
		{Pull, "kind " + release.KindVersion + " publishes no node image of Kubernetes " + r133.Version + ": use NODE_IMAGE=build (or auto), or an image reference"},
	} {
		_, err := (&source{spec: c.spec}).ensure(context.Background(), r133)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.spec, err, c.want)
		}
	}
	if strings.Join(Specs, ",") != "auto,pull,build,present" {
		t.Errorf("Specs = %v", Specs)
	}
}
