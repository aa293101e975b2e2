// SPDX-License-Identifier: Apache-2.0

package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/resolved"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
)

// fakeRun stands in for the commands a pipeline starts: e2e-cluster says
// an image for the release, Ginkgo passes or fails; each is recorded.
type fakeRun struct {
	mu       sync.Mutex
	commands []string
	// beside are the commands started beside the steps (the next
	// release's bits), which leave no status: the runner writes one.
	beside []string
	// fail are the releases whose suite fails.
	fail map[string]bool
	// interrupt, where set, is called as the command named interruptAt
	// runs (a test's Ctrl-C): "node-image" or "ginkgo".
	interrupt   func()
	interruptAt string
	// started, where set, sees each command's arguments as it starts.
	started func(args []string)
	// noRef, where set, has e2e-cluster say its image on its last line
	// only, and leave its --ref-file unwritten.
	noRef bool
}

func (f *fakeRun) start(c Config, cmd *exec.Cmd) error {
	flag := func(name string) string {
		for _, a := range cmd.Args {
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
		}
		return ""
	}
	if f.started != nil {
		f.started(cmd.Args)
	}
	if f.interrupt != nil && (f.interruptAt == "ginkgo" && filepath.Base(cmd.Path) == "go" || slices.Contains(cmd.Args, f.interruptAt)) {
		f.interrupt()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch filepath.Base(cmd.Path) {
	case "e2e-cluster":
		if slices.Contains(cmd.Args, "--status") {
			f.beside = append(f.beside, "e2e-cluster "+cmd.Args[1]+" "+c.Get("K8S_VERSION"))
			return nil
		}
		f.commands = append(f.commands, "e2e-cluster "+cmd.Args[1]+" "+c.Get("K8S_VERSION"))
		ref := fmt.Sprintf("kind-e2e/node:%s-%s", c.Get("K8S_VERSION"), cmd.Args[1])
		fmt.Fprintf(cmd.Stdout, "node-image: building\n%s\n", ref)
		if f.noRef {
			return nil
		}
		// The answer is the file --ref-file names, not the line above.
		return os.WriteFile(flagValue(cmd.Args, "--ref-file"), []byte(ref+"\n"), 0o644)
	case "go":
		// The suite reads its run from the file the runner wrote.
		r, err := resolved.Read(flag("--run"))
		if err != nil {
			return err
		}
		class := ""
		if r.Driver.Vendor != nil {
			class = r.Driver.Vendor.DeviceClass
		}
		f.commands = append(f.commands, fmt.Sprintf("ginkgo %s on %s class %s features %s labels %s into %s", r.Given, r.Cluster.Name,
			class, r.Features, flag("--label-filter"), strings.TrimPrefix(r.Layout.Artifacts, filepath.Join(c.Root(), "_artifacts"))))
		fmt.Fprintln(cmd.Stdout, "Ran 3 of 3 Specs")
		if f.fail[r.Given] {
			return exec.Command("/bin/sh", "-c", "exit 1").Run()
		}
		return nil
	}
	return fmt.Errorf("unexpected command %v", cmd.Args)
}

// flagValue is the word after name in args, or "".
func flagValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// pipeline is a Pipeline on f, whose preflight passes and whose driver
// image is built at once.
func pipeline(f *fakeRun, out *bytes.Buffer) *Pipeline {
	return &Pipeline{Stdout: out, Stderr: out, start: f.start,
		preflight: func(context.Context, Config) []string { return nil },
		buildDriver: func(_ context.Context, root, out string) (image.Built, error) {
			return image.Built{Tag: "kind-e2e/testdriver:t", Archive: out + "/t.tar"}, nil
		},
		compileSuite: func(context.Context, Config) string { return "" }}
}

func lines(out *bytes.Buffer) []string { return strings.Split(strings.TrimSpace(out.String()), "\n") }

// Two releases with their clusters kept: each on a cluster of its own,
// each image step and the suite in order, a timeline per release, and a
// failed release named in the closing line.
func TestE2ERunsEachReleaseInTurn(t *testing.T) {
	root := t.TempDir()
	f := &fakeRun{fail: map[string]bool{"1.36": true}}
	var out bytes.Buffer
	c := Resolve(env("K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "1"), nil, root)
	if code := pipeline(f, &out).E2E(context.Background(), c); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	want := []string{
		"e2e-cluster node-image 1.35", "ginkgo 1.35 on dra-e2e-1-35 class  features defaults labels  into /1.35",
		"e2e-cluster node-image 1.36", "ginkgo 1.36 on dra-e2e-1-36 class  features defaults labels  into /1.36",
	}
	if !slices.Equal(f.commands, want) {
		t.Errorf("commands\n  %q\nwant\n  %q", f.commands, want)
	}
	// Each release's getter beside its steps, ended with its release.
	if want := []string{"e2e-cluster upgrade-bits 1.35", "e2e-cluster upgrade-bits 1.36"}; !slices.Equal(f.beside, want) {
		t.Errorf("beside the steps\n  %q\nwant\n  %q", f.beside, want)
	}
	status, err := os.ReadFile(filepath.Join(root, "_output", "upgrade-bits-1.35.json"))
	if err != nil || !strings.Contains(string(status), "without saying what it got") {
		t.Errorf("a getter that said nothing: status %q (%v)", status, err)
	}
	got := lines(&out)
	for _, l := range []string{"=== e2e: Kubernetes 1.35, profile default, DRA feature set defaults",
		"e2e: KEEP_CLUSTER=1 with several releases: this one's cluster is dra-e2e-1-36"} {
		if !slices.Contains(got, l) {
			t.Errorf("no line %q in\n%s", l, out.String())
		}
	}
	if !slices.ContainsFunc(got, func(l string) bool {
		return strings.HasPrefix(l, "e2e: test driver image kind-e2e/testdriver:t, built beside the steps before in ")
	}) {
		t.Errorf("no line of the driver's image in\n%s", out.String())
	}
	if last := got[len(got)-1]; last != "e2e: failed for Kubernetes 1.36 (reports in "+root+"/_artifacts)" {
		t.Errorf("last line %q", last)
	}
	timeline, err := os.ReadFile(filepath.Join(root, "_output", "timeline-1.35.tsv"))
	steps := strings.Split(strings.TrimSpace(string(timeline)), "\n")
	if err != nil || len(steps) != 2 || !strings.HasPrefix(steps[0], "node image kind-e2e/node:1.35-node-image\t") ||
		!strings.HasPrefix(steps[1], "test driver image kind-e2e/testdriver:t\t") {
		t.Errorf("timeline %q (%v)", timeline, err)
	}
	if log, err := os.ReadFile(filepath.Join(root, "_artifacts", "1.36", "e2e.log")); err != nil || string(log) != "Ran 3 of 3 Specs\n" {
		t.Errorf("e2e.log %q (%v)", log, err)
	}
	if kept, err := os.ReadFile(filepath.Join(root, "_output", "node-image.out")); err != nil || !strings.HasSuffix(string(kept), "kind-e2e/node:1.36-node-image\n") {
		t.Errorf("node-image.out %q (%v)", kept, err)
	}
}

// Started by make, the first release's timeline begins with the time since
// make started, and only the first: the next release waited for the one
// before it, not for the set-up. A start that is no time before (a clock
// stepped back) times nothing.
func TestTheFirstReleaseTimesTheTimeBeforeItsSteps(t *testing.T) {
	for name, tc := range map[string]struct {
		started time.Time
		want    bool
	}{
		"make started 95 s ago": {time.Now().Add(-95 * time.Second), true},
		"not started by make":   {time.Time{}, false},
		"a start in the future": {time.Now().Add(time.Hour), false},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			var out bytes.Buffer
			p := pipeline(&fakeRun{}, &out)
			p.MakeStarted = tc.started
			c := Resolve(env("K8S_VERSIONS", "1.35 1.36", "KEEP_CLUSTER", "1"), nil, root)
			// No suite writes a report here, so the sign-off fails; the
			// timelines are written before it.
			p.E2E(context.Background(), c)
			for _, v := range []string{"1.35", "1.36"} {
				data, err := os.ReadFile(filepath.Join(root, "_output", "timeline-"+v+".tsv"))
				if err != nil {
					t.Fatal(err)
				}
				first, _, _ := strings.Cut(string(data), "\n")
				stepName, ms, _ := strings.Cut(first, "\t")
				if got, want := stepName == BeforeSteps, tc.want && v == "1.35"; got != want {
					t.Errorf("%s's timeline begins with %q; want the time before the steps: %v", v, first, want)
				} else if n, _ := strconv.Atoi(ms); got && (n < 95000 || n >= 100000) {
					t.Errorf("%s: the time before the steps is %s ms, want about 95000", v, ms)
				}
			}
		})
	}
}

// The bundled driver's image and the suite's compile run beside the node
// image: the node image's step waits for the driver's build to have
// started, which it does only if it started before (or beside) it; and
// Ginkgo starts only once the compile is done, and runs the binary it
// built.
func TestDriverAndSuiteAreBuiltBesideTheNodeImage(t *testing.T) {
	root := t.TempDir()
	driverStarted, compiled := make(chan struct{}), make(chan struct{})
	var problems []string
	f := &fakeRun{started: func(args []string) {
		switch {
		case slices.Contains(args, "node-image"):
			select {
			case <-driverStarted:
			case <-time.After(10 * time.Second):
				problems = append(problems, "the node image's step ran before the driver's build started")
			}
		case filepath.Base(args[0]) == "go":
			select {
			case <-compiled:
			default:
				problems = append(problems, "Ginkgo started before the suite's compile was done")
			}
			if !slices.Contains(args, "e2e/e2e.test") || slices.Contains(args, "./e2e") {
				problems = append(problems, fmt.Sprintf("Ginkgo does not run the test binary built beside: %q", args))
			}
		}
	}}
	var out bytes.Buffer
	p := pipeline(f, &out)
	p.buildDriver = func(_ context.Context, root, out string) (image.Built, error) {
		close(driverStarted)
		return image.Built{Tag: "kind-e2e/testdriver:t", Archive: out + "/t.tar"}, nil
	}
	p.compileSuite = func(context.Context, Config) string {
		time.Sleep(100 * time.Millisecond) // a compile that ends after the steps before Ginkgo
		close(compiled)
		return suiteBinary
	}
	c := Resolve(env("K8S_VERSION", "1.35"), nil, root)
	if err := p.Release(context.Background(), c); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	for _, problem := range problems {
		t.Error(problem)
	}
	if want := []string{"e2e-cluster node-image 1.35", "ginkgo 1.35 on dra-e2e class  features defaults labels  into /1.35"}; !slices.Equal(f.commands, want) {
		t.Errorf("commands\n  %q\nwant\n  %q", f.commands, want)
	}
}

// Ctrl-C during a release: no step and no release after it, the sign-off
// of what ran, exit 130 with the line that says so.
func TestE2EStopsAfterAnInterrupt(t *testing.T) {
	for at, want := range map[string][]string{
		"ginkgo":     {"e2e-cluster node-image 1.35", "ginkgo 1.35 on dra-e2e class  features defaults labels  into /1.35"},
		"node-image": {"e2e-cluster node-image 1.35"},
	} {
		var out bytes.Buffer
		ctx, interrupt := context.WithCancel(context.Background())
		f := &fakeRun{interrupt: interrupt, interruptAt: at}
		c := Resolve(env("K8S_VERSIONS", "1.35 1.36", "UPGRADE", "0"), nil, t.TempDir())
		if code := pipeline(f, &out).E2E(ctx, c); code != ExitInterrupted {
			t.Errorf("at %s: exit %d", at, code)
		}
		interrupt()
		if !slices.Equal(f.commands, want) {
			t.Errorf("at %s: commands %q", at, f.commands)
		}
		got := lines(&out)
		if got[len(got)-1] != "e2e: interrupted; releases after it were not run" || !strings.HasPrefix(got[len(got)-2], "signoff: NOT signed off") {
			t.Errorf("at %s: closing lines %q", at, got[len(got)-2:])
		}
	}
}

// DEVICE_CLASS=a,b on an existing cluster: no images, a run per class in
// ARTIFACTS/classes/<class>, and the sign-off says why it failed (no
// report was written here).
func TestE2ERunsEachClass(t *testing.T) {
	var out bytes.Buffer
	f := &fakeRun{}
	c := Resolve(env("KUBECONFIG", "/kc", "DRIVER", "gpu.example.com", "DEVICE_CLASS", "a,b"), []string{"KUBECONFIG"}, t.TempDir())
	if code := pipeline(f, &out).E2E(context.Background(), c); code != 1 {
		t.Errorf("exit %d", code)
	}
	if want := []string{"ginkgo 1.35 on dra-e2e class a features defaults labels  into /classes/a/1.35", "ginkgo 1.35 on dra-e2e class b features defaults labels  into /classes/b/1.35"}; !slices.Equal(f.commands, want) {
		t.Errorf("commands %q", f.commands)
	}
	got := lines(&out)
	if !slices.Contains(got, "=== e2e: DEVICE_CLASS=b") || got[len(got)-1] != "e2e: the specs passed, but the sign-off failed (exit 1): the verdict above says why" {
		t.Errorf("output\n%s", out.String())
	}
}

// make signoff: each column of the release (every feature set it lists,
// unless FEATURES is given on make's command line) with the union of its
// cells' filters, its time in seconds.tsv.
func TestSignoffRunsEachColumn(t *testing.T) {
	for _, c := range []struct {
		given []string
		want  []string
	}{
		{nil, []string{"defaults", "stable", "alpha"}},
		{[]string{"FEATURES"}, []string{"stable"}},
	} {
		var out bytes.Buffer
		f := &fakeRun{}
		cfg := Resolve(env("K8S_VERSION", "1.36", "FEATURES", "stable", "UPGRADE", "0"), c.given, t.TempDir())
		pipeline(f, &out).Signoff(context.Background(), cfg)
		var want []string
		for _, set := range c.want {
			want = append(want, "e2e-cluster node-image 1.36",
				"ginkgo 1.36 on dra-e2e class  features "+set+" labels (!Serial) || (Serial && !Disruptive) || (Disruptive) into /signoff/cells/1.36-"+set+"/1.36")
		}
		if !slices.Equal(f.commands, want) {
			t.Errorf("given %v: commands\n  %q\nwant\n  %q", c.given, f.commands, want)
		}
		seconds, err := os.ReadFile(filepath.Join(cfg.Get("ARTIFACTS"), "signoff", "seconds.tsv"))
		if err != nil || strings.Count(string(seconds), "\n") != len(c.want) || !slices.Contains(lines(&out), fmt.Sprintf("signoff: %d columns in 0 s (per column: %s/signoff/seconds.tsv)", len(c.want), cfg.Get("ARTIFACTS"))) {
			t.Errorf("seconds.tsv %q (%v), output\n%s", seconds, err, out.String())
		}
	}
}

// make e2e-release exits as its suite did.
func TestRunReleaseExitsAsTheSuite(t *testing.T) {
	var out bytes.Buffer
	c := Resolve(env("UPGRADE", "0"), nil, t.TempDir())
	if code := pipeline(&fakeRun{fail: map[string]bool{"1.35": true}}, &out).RunRelease(context.Background(), c); code != 1 {
		t.Errorf("exit %d", code)
	}
	if code := pipeline(&fakeRun{}, &out).RunRelease(context.Background(), c); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// lineSignal writes to w and closes seen the first time a write holds line.
type lineSignal struct {
	mu   sync.Mutex
	w    io.Writer
	line string
	seen chan struct{}
	done bool
}

func (l *lineSignal) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done && bytes.Contains(b, []byte(l.line)) {
		l.done = true
		defer close(l.seen)
	}
	return l.w.Write(b)
}

// A go build flag in GINKGO_ARGS (which a binary built beside would lack)
// makes Ginkgo compile the suite itself; Ginkgo's other flags do not.
func TestGoBuildFlagInGinkgoArgs(t *testing.T) {
	for args, want := range map[string]string{
		"":                                "",
		"-v --poll-progress-after=60s":    "",
		"--label-filter=race --focus=vet": "",
		"-v --race":                       "--race",
		"-cover":                          "-cover",
		"--tags=extra -v":                 "--tags=extra",
		"--ldflags=-X=a.b=c":              "--ldflags=-X=a.b=c",
	} {
		c := Resolve(env("K8S_VERSION", "1.35", "GINKGO_ARGS", args), nil, t.TempDir())
		if got := goBuildFlag(c); got != want {
			t.Errorf("GINKGO_ARGS=%q: go build flag %q, want %q", args, got, want)
		}
	}
}
