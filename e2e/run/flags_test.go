// SPDX-License-Identifier: Apache-2.0

package run

import (
	"slices"
	"testing"

	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
)

// splitCommand is a go tool ginkgo command line's Ginkgo flags and the
// suite's (after "./e2e --"), each sorted: Go's flag parsing gives a
// flag's place no meaning where no flag is given twice.
func splitCommand(t *testing.T, args []string) (ginkgo, suite []string) {
	t.Helper()
	if !slices.Equal(args[:3], []string{"tool", "ginkgo", "-p"}) {
		t.Fatalf("not go tool ginkgo -p: %q", args)
	}
	i := slices.Index(args, "./e2e")
	if i < 0 || args[i+1] != "--" {
		t.Fatalf("no ./e2e -- in %q", args)
	}
	ginkgo, suite = slices.Clone(args[3:i]), slices.Clone(args[i+2:])
	slices.Sort(ginkgo)
	slices.Sort(suite)
	return ginkgo, suite
}

// The suite runs with Ginkgo's flags the Makefile's e2e-release target gave
// it (its go tool ginkgo line, before this package), for the same
// variables, and with one flag of its own, --run: the resolved run, which
// holds what the suite's flags held then (written out here from that
// line).
func TestGinkgoCommandIsTheMakefiles(t *testing.T) {
	b := built{nodeImage: "kind-e2e/node:v1.36.3-abc", driverTag: "kind-e2e/testdriver:t",
		driverArchive: "/r/_output/testdriver/testdriver-image.tar", timeline: "/r/_output/timeline-1.36.tsv", runFile: "/r/_artifacts/1.36/run.json"}
	for _, c := range []struct {
		name       string
		env        []string
		given      []string
		b          built
		makeGinkgo []string // $(GINKGO_ARGS) and the filters of the recipe
		// The run's values of $(EXISTING), --keep-cluster and the image flags.
		check func(t *testing.T, r resolved.Run)
	}{
		{"defaults", nil, nil, b, nil, func(t *testing.T, r resolved.Run) {
			if r.Cluster.NodeImage != "kind-e2e/node:v1.36.3-abc" || r.Upgrade.Bits != "/r/_output/upgrade-bits-1.36.json" || !r.Upgrade.Runs ||
				r.Driver != (resolved.Driver{Archive: "/r/_output/testdriver/testdriver-image.tar", Tag: "kind-e2e/testdriver:t"}) || r.Cluster.Keep || r.Cluster.Existing() {
				t.Errorf("%+v", r)
			}
		}},
		{"filters, extra flags, kept", []string{"LABELS", "authz || allocation", "FOCUS", "quota", "GINKGO_ARGS", `-v --poll-progress-after=60s --output-interceptor-mode="none"`,
			"PROCS", "3", "KEEP_CLUSTER", "1"}, nil, b,
			[]string{"-v", "--poll-progress-after=60s", "--output-interceptor-mode=none", "--label-filter=authz || allocation", "--focus=quota"},
			func(t *testing.T, r resolved.Run) {
				// The label filter leaves the upgrade spec out: no bits.
				if !r.Cluster.Keep || r.Upgrade.Runs || r.Upgrade.Bits != "" || r.Filters != (resolved.Filters{Labels: "authz || allocation", Focus: "quota"}) {
					t.Errorf("%+v", r)
				}
			}},
		{"existing cluster, own driver, pushed image", []string{"KUBECONFIG", "kc", "DRIVER", "gpu.example.com", "DEVICE_CLASS", "gpu", "ADMIN_CHECK", `nvidia-smi -i "$DRA_DEVICE_ATTR_UUID"`,
			"WORKLOAD_IMAGE", "ubuntu", "TESTDRIVER_IMAGE", "localhost:5001/dra/testdriver@sha256:2", "SKIP", "taints", "KUBECONTEXT", "staging"}, []string{"KUBECONFIG"},
			built{nodeImage: "none", driverTag: "localhost:5001/dra/testdriver@sha256:2", timeline: "/r/_output/timeline-1.36.tsv", runFile: "/r/_artifacts/1.36/run.json"},
			[]string{"--skip=taints"},
			func(t *testing.T, r resolved.Run) {
				want := resolved.Vendor{Name: "gpu.example.com", DeviceClass: "gpu", AdminCheck: `nvidia-smi -i "$DRA_DEVICE_ATTR_UUID"`, WorkloadImage: "ubuntu"}
				if r.Cluster.NodeImage != "none" || r.Cluster.Kubeconfig != "/r/kc" || r.Cluster.Context != "staging" || r.Upgrade.Runs || r.Upgrade.Bits != "" ||
					r.Driver.Image != "localhost:5001/dra/testdriver@sha256:2" || r.Driver.Tag != r.Driver.Image || r.Driver.Archive != "" || r.Driver.Vendor == nil || *r.Driver.Vendor != want {
					t.Errorf("%+v", r)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Resolve(env(append([]string{"K8S_VERSION", "1.36"}, c.env...)...), c.given, "/r")
			args, err := cfg.GinkgoCommand(c.b)
			if err != nil {
				t.Fatal(err)
			}
			ginkgo, suite := splitCommand(t, args)
			v := cfg.Get
			// The recipe: go tool ginkgo -p --procs=$(PROCS) --timeout=$(TIMEOUT) --fail-on-empty --tags=e2e $(GINKGO_ARGS)
			//   $(if $(LABELS),--label-filter=...) $(if $(FOCUS),--focus=...) $(if $(SKIP),--skip=...)
			//   --junit-report=junit.xml --json-report=ginkgo-report.json --output-dir=$(ARTIFACTS)/$(K8S_VERSION) ./e2e -- ...
			wantGinkgo := append([]string{"--procs=" + v("PROCS"), "--timeout=60m", "--fail-on-empty", "--tags=e2e",
				"--junit-report=junit.xml", "--json-report=ginkgo-report.json", "--output-dir=/r/_artifacts/1.36"}, c.makeGinkgo...)
			// A variable added since gets its Ginkgo flag from its row alone.
			wantGinkgo = append(wantGinkgo, variables.GinkgoFlags(v, "--", sinceTheMakefile)...)
			slices.Sort(wantGinkgo)
			if !slices.Equal(ginkgo, wantGinkgo) {
				t.Errorf("Ginkgo's flags\n  %q\nwant\n  %q", ginkgo, wantGinkgo)
			}
			if want := []string{"--run=/r/_artifacts/1.36/run.json"}; !slices.Equal(suite, want) {
				t.Errorf("the suite's flags %q, want %q", suite, want)
			}
			// ... --release=$(K8S_VERSION) --profile=$(PROFILE) --features=$(FEATURES) --cluster-name=$(CLUSTER_NAME) --node-image=$$image
			//   --upgrade-bits=... --testdriver-archive=$$archive --testdriver-tag=$$tag --testdriver-image='$(TESTDRIVER_IMAGE)'
			//   --artifacts=$(ARTIFACTS)/$(K8S_VERSION) --timeline-file=$$timeline --driver='$(DRIVER)' --device-class='$(DEVICE_CLASS)'
			//   --driver-namespace='$(DRIVER_NAMESPACE)' --source-root=$(CURDIR) --output-dir=$(OUT) $(EXISTING) [--keep-cluster]
			r, err := resolved.New(cfg.inputs(c.b.timeline))
			if err != nil {
				t.Fatal(err)
			}
			b := c.b
			b.run = r
			r = b.theRun()
			if r.Given != "1.36" || r.Profile != "default" || r.Features != "defaults" || r.Cluster.Name != "dra-e2e" ||
				r.Layout != (resolved.Layout{Root: "/r", Output: "/r/_output", Artifacts: "/r/_artifacts/1.36", Timeline: "/r/_output/timeline-1.36.tsv"}) {
				t.Errorf("the run %+v", r)
			}
			c.check(t, r)
		})
	}
}

// sinceTheMakefile selects the variables the Makefile's go tool ginkgo
// line did not pass (TestGinkgoCommandIsTheMakefiles checks the others
// against it).
func sinceTheMakefile(v variables.Variable) bool {
	return !slices.Contains([]string{"K8S_VERSION", "PROFILE", "FEATURES", "CLUSTER_NAME", "NODE_IMAGE", "TESTDRIVER_IMAGE",
		"ARTIFACTS", "DRIVER", "DEVICE_CLASS", "DRIVER_NAMESPACE", "KEEP_CLUSTER", "ADMIN_CHECK", "WORKLOAD_IMAGE", "KUBECONTEXT",
		"PROCS", "TIMEOUT", "LABELS", "FOCUS", "SKIP"}, v.Name)
}

// GINKGO_ARGS come after the variables' Ginkgo flags, as extra flags.
func TestGinkgoArgsComeLast(t *testing.T) {
	args, err := Resolve(env("LABELS", "authz", "GINKGO_ARGS", "--label-filter=smoke"), nil, "/r").GinkgoCommand(built{})
	if err != nil {
		t.Fatal(err)
	}
	if i, j := slices.Index(args, "--label-filter=authz"), slices.Index(args, "--label-filter=smoke"); i < 0 || j < i {
		t.Errorf("%q", args)
	}
}
