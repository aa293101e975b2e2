// SPDX-License-Identifier: Apache-2.0

// Command incluster-e2e runs the suite from inside an existing cluster and
// brings its results back, reaching the cluster only through its API and a
// registry its nodes pull from: what works on a managed cluster (no Docker,
// no node shell, no control-plane node). make incluster-e2e runs it:
//
//	make incluster-e2e KUBECONFIG=path [KUBECONTEXT=name] REGISTRY=host/path [FEATURES=… LABELS=… DRIVER=… …]
//
// Its steps, each named in its output: check every variable as make e2e's
// preflight does, against the cluster (its release, unless K8S_VERSION says
// one); read the nodes' platforms; build the suite's image for them and
// push it to REGISTRY (and the bundled driver's, unless DRIVER or
// TESTDRIVER_IMAGE says which driver to use); apply the Job (e2e/suitejob)
// with every variable of make e2e that is set; wait for it, printing the
// pod's progress and the suite's output; copy the results out of its output
// container; delete everything it made (KEEP=1 keeps the namespace). Ctrl-C
// cleans up too. Every client it makes is of the kubeconfig's context
// KUBECONTEXT (its current one where none is given).
//
// Bad input exits 2, a line for each thing wrong, before anything is built
// or pushed: no kubeconfig or one whose cluster does not answer, a variable
// make e2e's preflight refuses, nodes the images cannot be built for, a
// pushed image that lacks a platform of the nodes, no REGISTRY, a namespace
// in use. The run's exit code is the suite's; its last line is the
// sign-off's verdict.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kep5018/adminaccess-conformance/clusters/kindcluster"
	"github.com/kep5018/adminaccess-conformance/e2e/run"
	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

// usageError is bad input: exit 2.
type usageError struct{ error }

func main() {
	code, err := runE2E(os.Args[1:], os.Getenv, os.Stdout, outside())
	if err != nil {
		// A line for each thing wrong (preflight's lines), each named.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "incluster-e2e:", line)
		}
		if errors.As(err, new(usageError)) {
			code = 2
		} else if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// options are the command's flags.
type options struct {
	kubeconfig, kubeContext, registry, suiteImage, artifacts, out, namespace string
	keep                                                                     bool
	wait                                                                     time.Duration
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("incluster-e2e", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (KUBECONFIG)")
	fs.StringVar(&o.kubeContext, "context", "", "the kubeconfig's context to use (KUBECONTEXT; default: its current context)")
	fs.StringVar(&o.registry, "registry", "", "registry and path the nodes pull from, such as registry.example.com/team (REGISTRY)")
	fs.StringVar(&o.suiteImage, "suite-image", "", "a pushed suite image to run instead of building and pushing one (SUITE_IMAGE)")
	fs.StringVar(&o.artifacts, "artifacts", "_artifacts/incluster", "where the results go")
	fs.StringVar(&o.out, "out", "_output", "build output folder")
	fs.StringVar(&o.namespace, "namespace", suitejob.DefaultNamespace, "the Job's namespace, made and deleted by the run")
	fs.BoolVar(&o.keep, "keep", false, "keep the Job's namespace and binding after the run")
	fs.DurationVar(&o.wait, "wait", 2*time.Hour, "how long the suite may run")
	if err := fs.Parse(args); err != nil {
		return o, usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return o, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case o.kubeconfig == "":
		return o, usageError{errors.New("give KUBECONFIG=path of the cluster to run in (make incluster-e2e KUBECONFIG=… REGISTRY=…)")}
	case o.registry == "" && o.suiteImage == "":
		return o, usageError{errors.New("give REGISTRY=host/path, a registry the cluster's nodes pull from and this machine can push to (or SUITE_IMAGE=a pushed suite image)")}
	case o.wait <= 0:
		return o, usageError{fmt.Errorf("--wait %s: give a positive duration", o.wait)}
	}
	if o.registry != "" {
		if _, err := push.Reference(o.registry, suitejob.Repository+":0"); err != nil {
			return o, usageError{err}
		}
	}
	return o, nil
}

// world is what the run reaches outside this process: the cluster, the
// checks that ask it and the registry, the compiler and the registry it
// pushes to. Tests give a fake cluster, the variables' own checks only, and
// builds that compile nothing.
type world struct {
	// root is the repository the images are built from.
	root string
	// connect dials the kubeconfig's context and checks that it answers.
	connect func(kubeconfig, kubeContext string) (cluster, error)
	// preflight is make e2e's preflight (run.Preflight): a line for each
	// variable refused.
	preflight func(context.Context, run.Config) []string
	// checkPlatform refuses a platform the images cannot be built for
	// (image.CheckPlatform).
	checkPlatform func(context.Context, image.Platform) error
	// pushedPlatforms are the platforms a pushed image serves
	// (push.Platforms).
	pushedPlatforms func(ctx context.Context, reference string) ([]string, error)
	// build compiles an image for each platform (GoImage.ForPlatforms).
	build func(ctx context.Context, g image.GoImage, root, outDir string, platforms []image.Platform) ([]image.Built, error)
	// push writes them under one reference (push.PushPlatforms).
	push func(ctx context.Context, images []image.Built, reference string) (string, error)
}

// outside is the world of a real run.
func outside() world {
	return world{
		root: ".", connect: connect, preflight: run.Preflight, checkPlatform: image.CheckPlatform,
		pushedPlatforms: push.Platforms, push: push.PushPlatforms,
		build: func(ctx context.Context, g image.GoImage, root, outDir string, platforms []image.Platform) ([]image.Built, error) {
			return g.ForPlatforms(ctx, root, outDir, platforms)
		},
	}
}

// cluster is the cluster of the kubeconfig's context, as connect reached
// it: every client of the run is made from config.
type cluster struct {
	config *rest.Config
	client kubernetes.Interface
	// name is the kubeconfig's name for it, which the provenance gives;
	// minor its release (1.35).
	name, minor string
}

// runE2E is the whole command; the int is the suite's exit code.
func runE2E(args []string, getenv func(string) string, stdout io.Writer, w world) (int, error) {
	o, err := parse(args)
	if err != nil {
		return 2, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	say := func(format string, a ...any) { fmt.Fprintf(stdout, "incluster-e2e: "+format+"\n", a...) }

	p, err := prepare(ctx, o, getenv, say, w)
	if err != nil {
		return 2, err
	}
	return p.execute(ctx, o, say, stdout, w)
}

// prepared is a run checked against its cluster, before anything was
// built or pushed.
type prepared struct {
	cluster cluster
	job     *jobRun
	// vars are the variables the Job carries, the cluster named as the
	// kubeconfig names it (the images are added once pushed).
	vars map[string]string
	// platforms are the nodes' platforms, which the images are built for.
	platforms []image.Platform
}

// prepare is everything before the first build: the cluster reached, every
// variable checked as make e2e's preflight checks it, the nodes'
// platforms read and each one checked, an image pushed before compared
// with them, the namespace free. Whatever it refuses is a usage error.
func prepare(ctx context.Context, o options, getenv func(string) string, say func(string, ...any), w world) (prepared, error) {
	c, err := w.connect(o.kubeconfig, o.kubeContext)
	if err != nil {
		return prepared{}, usageError{err}
	}
	if lines := w.preflight(ctx, variables(o, getenv, c.minor, w.root)); len(lines) > 0 {
		return prepared{}, usageError{errors.New(strings.Join(lines, "\n"))}
	}
	where := testenv.KubeconfigName(o.kubeconfig, o.kubeContext)
	say("cluster %s of kubeconfig %s, Kubernetes %s, reached through its API only; every variable passed make e2e's preflight", c.name, where, c.minor)

	nodes, err := nodePlatforms(ctx, c.client)
	if err != nil {
		return prepared{}, usageError{err}
	}
	platforms, refused := choosePlatforms(ctx, nodes, w.checkPlatform)
	if len(refused) > 0 {
		return prepared{}, usageError{errors.New(strings.Join(refused, "\n"))}
	}
	if len(platforms) > 1 {
		say("the nodes run %s: each image is built for each platform and pushed as an index", describePlatforms(nodes, platforms))
	} else {
		say("the nodes run %s: the images are built for it", describePlatforms(nodes, platforms))
	}
	for _, pushed := range [][2]string{{"SUITE_IMAGE", o.suiteImage}, {"TESTDRIVER_IMAGE", getenv("TESTDRIVER_IMAGE")}} {
		variable, ref := pushed[0], pushed[1]
		if ref == "" {
			continue
		}
		served, err := w.pushedPlatforms(ctx, ref)
		if err == nil {
			err = checkPushed(variable, ref, served, nodes, platforms)
		}
		if err != nil {
			return prepared{}, usageError{err}
		}
	}

	vars := map[string]string{"CLUSTER_NAME": c.name}
	for _, kv := range suitejob.Environment(getenv) {
		vars[kv[0]] = kv[1]
	}
	if vars["DRIVER"] == "" && vars["TESTDRIVER_IMAGE"] == "" && o.registry == "" {
		return prepared{}, usageError{errors.New("the bundled driver's image must reach the nodes: give REGISTRY=host/path, or TESTDRIVER_IMAGE=a pushed driver image, or DRIVER and DEVICE_CLASS (a driver of your own)")}
	}
	job := &jobRun{client: c.client, config: c.config, namespace: o.namespace, say: say}
	if err := job.checkFree(ctx); err != nil {
		return prepared{}, usageError{err}
	}
	return prepared{cluster: c, job: job, vars: vars, platforms: platforms}, nil
}

// variables are the run's variables as make e2e's preflight reads them:
// the environment's (those given on make's command line or exported), the
// kubeconfig and context of the flags, and K8S_VERSION the cluster's own
// release where none is given, as the Job's entrypoint takes it.
func variables(o options, getenv func(string) string, minor, root string) run.Config {
	lookup := func(name string) (string, bool) {
		switch name {
		case "KUBECONFIG":
			return o.kubeconfig, true
		case "KUBECONTEXT":
			return o.kubeContext, true
		case "K8S_VERSION":
			if v := getenv(name); v != "" {
				return v, true
			}
			return minor, true
		}
		v := getenv(name)
		return v, v != ""
	}
	return run.Resolve(lookup, []string{"KUBECONFIG"}, root)
}

// execute builds and pushes the images, then runs the Job, follows it,
// fetches its results and cleans up.
func (p prepared) execute(ctx context.Context, o options, say func(string, ...any), stdout io.Writer, w world) (int, error) {
	job := p.job
	job.stdout = stdout
	suiteRef := o.suiteImage
	if suiteRef == "" {
		var err error
		if suiteRef, err = buildAndPush(ctx, say, w, "suite", o.registry, suitejob.Image(w.root), filepath.Join(o.out, "suite-image"), p.platforms); err != nil {
			return 1, err
		}
	}
	if p.vars["DRIVER"] == "" && p.vars["TESTDRIVER_IMAGE"] == "" {
		ref, err := buildAndPush(ctx, say, w, "bundled driver", o.registry, image.Driver, filepath.Join(o.out, "testdriver"), p.platforms)
		if err != nil {
			return 1, err
		}
		p.vars["TESTDRIVER_IMAGE"] = ref
	}
	env := suitejob.Environment(func(k string) string { return p.vars[k] })

	// From here on the cluster holds what the run made: clean up whatever
	// happens, Ctrl-C included (with a context of its own, since ctx may be
	// the one that was cancelled).
	defer func() {
		if o.keep {
			say("kept namespace %s and ClusterRoleBinding %s-suite (KEEP=1); delete both when done", o.namespace, o.namespace)
			return
		}
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := job.delete(cctx); err != nil {
			say("cleaning up: %v", err)
		}
	}()
	deadline := int(o.wait.Seconds()) + 600 // the output container's wait for the fetch
	if err := job.apply(ctx, suitejob.Values{Image: suiteRef, Namespace: o.namespace, DeadlineSeconds: deadline, Env: env}); err != nil {
		return 1, err
	}
	if err := os.MkdirAll(o.artifacts, 0o755); err != nil {
		return 1, err
	}
	code, err := job.wait(ctx, o.wait, filepath.Join(o.artifacts, "job.log"))
	if err != nil {
		return 1, err
	}
	results := filepath.Join(o.artifacts, "results")
	if err := job.fetch(ctx, results); err != nil {
		return 1, err
	}
	verdict, signed, verr := verdictOf(results)
	say("results in %s: %s", results, listFiles(results))
	if verr != nil {
		return max(code, 1), verr
	}
	say("the suite exited %d", code)
	fmt.Fprintln(stdout, "signoff: "+verdict)
	// The last line and the exit code say the same, as make e2e's do.
	switch {
	case code != 0:
		say("failed: the suite exited %d (its log: %s)", code, filepath.Join(o.artifacts, "job.log"))
	case signed == signoff.ExitLeftOut:
		say("what ran passed (exit 0), but it is not a sign-off: the verdict above says what was left out")
	case signed != signoff.ExitSignedOff:
		say("the specs passed, but the sign-off failed (exit 1): the verdict above says why")
		code = 1
	}
	return code, nil
}

// connect reads the kubeconfig's context ("" its current one) and checks
// that its cluster answers, and which release it runs.
func connect(kubeconfig, kubeContext string) (cluster, error) {
	where := testenv.KubeconfigName(kubeconfig, kubeContext)
	name, server, err := testenv.KubeconfigCluster(kubeconfig, kubeContext)
	if err != nil {
		return cluster{}, err
	}
	cfg, err := kindcluster.ClientConfig(kubeconfig, kubeContext)
	if err != nil {
		return cluster{}, fmt.Errorf("kubeconfig %s: %w", where, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return cluster{}, err
	}
	// A cluster that does not answer is refused in seconds, not after the
	// client's own retries.
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 15 * time.Second
	pc, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return cluster{}, err
	}
	v, err := pc.Discovery().ServerVersion()
	if err != nil {
		return cluster{}, fmt.Errorf("the cluster %s of kubeconfig %s (%s) does not answer: %v", name, where, server, err)
	}
	return cluster{config: cfg, client: client, name: name, minor: v.Major + "." + strings.TrimSuffix(v.Minor, "+")}, nil
}

// buildAndPush builds an image for each platform and pushes it (several
// as an index) to the registry, returning the reference pinned by digest.
func buildAndPush(ctx context.Context, say func(string, ...any), w world, what, registry string, g image.GoImage, outDir string, platforms []image.Platform) (string, error) {
	start := time.Now()
	built, err := w.build(ctx, g, w.root, outDir, platforms)
	if err != nil {
		return "", fmt.Errorf("building the %s image: %w", what, err)
	}
	ref, err := push.Reference(registry, image.IndexTag(built))
	if err != nil {
		return "", err
	}
	pinned, err := w.push(ctx, built, ref)
	if err != nil {
		return "", err
	}
	var names []string
	for _, b := range built {
		names = append(names, b.Platform.String())
	}
	say("pushed the %s image %s for %s (%s)", what, pinned, strings.Join(names, ", "), time.Since(start).Round(time.Second))
	return pinned, nil
}
