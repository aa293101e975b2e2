// SPDX-License-Identifier: Apache-2.0

// Command run is the one entry of a run from this machine: every make
// target that reads the run's variables calls it, and it reads them from
// the environment (where make puts those of its command line, each as
// given) through the table of e2e/run, which holds their defaults and
// checks. --given names the variables given on make's command line, which
// it tells apart from those merely exported in a shell: only a KUBECONFIG
// given there selects an existing cluster, and make signoff and make
// matrix cover every release and feature set unless told which.
//
//	run [--given "NAMES"] [--make-started SECONDS] COMMAND
//
// Ctrl-C ends the command it runs (which cleans up first) and no other;
// the exit code is the run's (130 after Ctrl-C, 2 for a refused variable).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kep5018/adminaccess-conformance/e2e/matrix"
	"github.com/kep5018/adminaccess-conformance/e2e/run"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/e2e/variables"
)

const usage = `usage: run [--given "NAMES"] [--make-started SECONDS] COMMAND

  preflight       check every variable, before anything is built (exit 2 on a bad one)
  e2e             preflight, each release of K8S_VERSIONS, the sign-off (make e2e)
  e2e-release     one release, K8S_VERSION: images, driver, suite; no sign-off
  signoff         every column of K8S_VERSIONS, then the merged sign-off (make signoff)
  bench           one release with its cluster kept, then its gate moves timed (make bench)
  matrix          the sign-off matrix (make matrix)
  node-image, cluster-up, cluster-down
                  e2e-cluster with the variables (make e2e-cli builds it)
  incluster-e2e   the suite as a Job in the cluster of KUBECONFIG (e2e/cmd/incluster-e2e)
  testdriver-push the driver image pushed to REGISTRY
  registry-up, registry-down
                  a registry on this machine at REGISTRY_PORT
  variables       the table of variables, as docs/variables.md shows it
  images          every image a run of K8S_VERSIONS pulls or makes, for mirroring
  node-image-tag  the tag of K8S_VERSION's offline-built node image (its recipe's hash), building nothing
  clean           remove _output and ARTIFACTS
`

func main() {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	given := fs.String("given", "", "the variables given on make's command line, separated by spaces")
	made := fs.Int64("make-started", 0, "when make started, in seconds since 1970: the first release's timeline then shows the time before its steps")
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	if err := fs.Parse(os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	} else if err != nil {
		os.Exit(run.ExitRefused)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(run.ExitRefused)
	}
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
	c := run.Resolve(os.LookupEnv, strings.Fields(*given), root)
	// Every command waits for what it started: a run that died at Ctrl-C
	// would leave make to return while its child still cleans up.
	ctx, stop := run.WithInterrupt(context.Background())
	p := run.New(os.Stdout, os.Stderr)
	if *made > 0 {
		p.MakeStarted = time.Unix(*made, 0)
	}
	code := command(ctx, p, c, fs.Arg(0))
	stop()
	os.Exit(code)
}

func command(ctx context.Context, p *run.Pipeline, c run.Config, name string) int {
	switch name {
	case "preflight":
		return p.Preflight(ctx, c)
	case "e2e":
		return p.E2E(ctx, c)
	case "e2e-release":
		return p.RunRelease(ctx, c)
	case "signoff":
		return p.Signoff(ctx, c)
	case "bench":
		return p.Bench(ctx, c)
	case "matrix":
		return printMatrix(c)
	case "node-image":
		// The image's reference also in node-image.ref, for CI's cache.
		return exitCode(c.Command(c.Out()+"/bin/e2e-cluster", "node-image", "--release", c.Get("K8S_VERSION"), "--source", c.Get("NODE_IMAGE"), "--out", c.Out(),
			"--ref-file", c.Out()+"/node-image.ref").Run())
	case "cluster-up":
		name := c.Get("CLUSTER_NAME")
		return exitCode(c.Command(c.Out()+"/bin/e2e-cluster", "up", "--release", c.Get("K8S_VERSION"), "--profile", c.Get("PROFILE"), "--features", c.Get("FEATURES"),
			"--name", name, "--source", c.Get("NODE_IMAGE"), "--out", c.Out(), "--kubeconfig", c.Out()+"/kubeconfig-"+name).Run())
	case "cluster-down":
		return exitCode(c.Command(c.Out()+"/bin/e2e-cluster", "down", "--name", c.Get("CLUSTER_NAME")).Run())
	case "incluster-e2e":
		return inclusterE2E(c)
	case "testdriver-push":
		return testdriverPush(c)
	case "registry-up":
		return registryUp(c)
	case "registry-down":
		return registryDown(c)
	case "variables":
		fmt.Print(variables.Markdown())
		return 0
	case "images":
		return printImages(ctx, os.Stdout, os.Stderr, c)
	case "node-image-tag":
		return printNodeImageTag(ctx, os.Stdout, os.Stderr, c)
	case "clean":
		fmt.Println("rm -rf", c.Out(), c.Get("ARTIFACTS"))
		if err := errors.Join(os.RemoveAll(c.Out()), os.RemoveAll(c.Get("ARTIFACTS"))); err != nil {
			fmt.Fprintln(os.Stderr, "clean:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "run: unknown command %q\n%s", name, usage)
	return run.ExitRefused
}

// printMatrix is make matrix: every column and its cells, as CI runs them,
// for every release and feature set unless they were given on make's
// command line.
func printMatrix(c run.Config) int {
	releases, features := "all", "all"
	if c.Given("K8S_VERSION") || c.Given("K8S_VERSIONS") {
		releases = c.Get("K8S_VERSIONS")
	}
	if c.Given("FEATURES") {
		features = c.Get("FEATURES")
	}
	if err := matrix.Print(os.Stdout, "table", releases, features, c.Get("LABELS")); err != nil {
		fmt.Fprintln(os.Stderr, "matrix:", err)
		return run.ExitRefused
	}
	return 0
}

// inclusterE2E is make incluster-e2e: e2e/cmd/incluster-e2e, built and
// run with the cluster given on make's command line. Its environment is
// this one, not the run's: only the variables given (on the command line
// or in the environment) go into the Job, since a default (K8S_VERSION)
// would contradict the cluster's own release.
func inclusterE2E(c run.Config) int {
	if !c.Existing() {
		fmt.Fprintln(os.Stderr, "incluster-e2e: give KUBECONFIG=path on the command line (the cluster to run in)")
		return run.ExitRefused
	}
	bin := c.Out() + "/bin/incluster-e2e"
	if err := c.Command("go", "build", "-o", bin, "./e2e/cmd/incluster-e2e").Run(); err != nil {
		return exitCode(err)
	}
	args := []string{"--kubeconfig", c.Kubeconfig(), "--context", c.Get("KUBECONTEXT"), "--registry", c.Get("REGISTRY"), "--suite-image", c.Get("SUITE_IMAGE"),
		"--artifacts", c.Get("ARTIFACTS") + "/incluster", "--out", c.Out()}
	if c.Get("KEEP") == "1" {
		args = append(args, "--keep")
	}
	cmd := c.Command(bin, args...)
	cmd.Env = os.Environ()
	return exitCode(cmd.Run())
}

// testdriverPush builds the driver and workload image and pushes it to
// REGISTRY; its last line is the pushed reference, pinned by digest.
func testdriverPush(c run.Config) int {
	if c.Get("REGISTRY") == "" {
		fmt.Fprintf(os.Stderr, "testdriver-push: give REGISTRY=host/path (for example localhost:%s/dra after make registry-up)\n", c.Get("REGISTRY_PORT"))
		return run.ExitRefused
	}
	return exitCode(c.Command("go", "run", "./testdriver/cmd/testdriver-push", "--registry", c.Get("REGISTRY"), "--out", c.Out()+"/testdriver").Run())
}

// exitCode is a command's exit code (signoff.ExitCode), a failure to
// start it said here.
func exitCode(err error) int {
	return signoff.ExitCode(err, func(err error) { fmt.Fprintln(os.Stderr, "run:", err) })
}
