// Command incluster-e2e runs the suite from inside an existing cluster and
// brings its results back, reaching the cluster only through its API and a
// registry its nodes pull from: what works on a managed cluster (no Docker,
// no node shell, no control-plane node). make incluster-e2e runs it:
//
//	make incluster-e2e KUBECONFIG=path REGISTRY=host/path [FEATURES=… LABELS=… DRIVER=… …]
//
// Its steps, each named in its output: build the suite's image and push it
// to REGISTRY (and the bundled driver's, unless DRIVER or TESTDRIVER_IMAGE
// says which driver to use); apply the Job (e2e/suitejob) with every variable
// of make e2e that is set; wait for it, printing the pod's progress and the
// suite's output; copy the results out of its output container; delete
// everything it made (KEEP=1 keeps the namespace). Ctrl-C cleans up too.
//
// Bad input exits 2 in one line before anything is built: no kubeconfig or
// one whose cluster does not answer, no REGISTRY, a namespace in use. The
// run's exit code is the suite's; its last line is the sign-off's verdict.
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
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kep5018/adminaccess-conformance/e2e/signoff"
	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/image"
	"github.com/kep5018/adminaccess-conformance/testdriver/push"
)

// usageError is bad input: exit 2.
type usageError struct{ error }

func main() {
	code, err := run(os.Args[1:], os.Getenv, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "incluster-e2e:", err)
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
	kubeconfig, registry, suiteImage, artifacts, out, namespace string
	keep                                                        bool
	wait                                                        time.Duration
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("incluster-e2e", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (KUBECONFIG)")
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

// run is the whole command; the int is the suite's exit code.
func run(args []string, getenv func(string) string, stdout io.Writer) (int, error) {
	o, err := parse(args)
	if err != nil {
		return 2, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	say := func(format string, a ...any) { fmt.Fprintf(stdout, "incluster-e2e: "+format+"\n", a...) }

	cfg, client, cluster, err := connect(o.kubeconfig)
	if err != nil {
		return 2, usageError{err}
	}
	job := &jobRun{client: client, config: cfg, namespace: o.namespace, say: say, stdout: stdout}
	if err := job.checkFree(ctx); err != nil {
		return 2, usageError{err}
	}
	say("cluster %s (kubeconfig %s), reached through its API only", cluster, o.kubeconfig)

	// The variables the Job carries: the caller's, with the cluster named as
	// the kubeconfig names it and the images as pushed.
	vars := map[string]string{"CLUSTER_NAME": cluster}
	for _, kv := range suitejob.Environment(getenv) {
		vars[kv[0]] = kv[1]
	}
	suiteRef := o.suiteImage
	if suiteRef == "" {
		if suiteRef, err = buildAndPush(ctx, say, "suite", o.registry, func() (image.Built, error) {
			return suitejob.BuildImage(".", filepath.Join(o.out, "suite-image"))
		}); err != nil {
			return 1, err
		}
	}
	if vars["DRIVER"] == "" && vars["TESTDRIVER_IMAGE"] == "" {
		if o.registry == "" {
			return 2, usageError{errors.New("the bundled driver's image must reach the nodes: give REGISTRY=host/path, or TESTDRIVER_IMAGE=a pushed driver image, or DRIVER and DEVICE_CLASS (a driver of your own)")}
		}
		ref, err := buildAndPush(ctx, say, "bundled driver", o.registry, func() (image.Built, error) {
			return image.Build(".", filepath.Join(o.out, "testdriver"))
		})
		if err != nil {
			return 1, err
		}
		vars["TESTDRIVER_IMAGE"] = ref
	}
	env := suitejob.Environment(func(k string) string { return vars[k] })

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

// connect reads the kubeconfig and checks that its cluster answers.
func connect(kubeconfig string) (*rest.Config, kubernetes.Interface, string, error) {
	name, server, err := testenv.KubeconfigCluster(kubeconfig, "")
	if err != nil {
		return nil, nil, "", err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, "", fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	// A cluster that does not answer is refused in seconds, not after the
	// client's own retries.
	probe := rest.CopyConfig(cfg)
	probe.Timeout = 15 * time.Second
	if pc, err := kubernetes.NewForConfig(probe); err != nil {
		return nil, nil, "", err
	} else if _, err := pc.Discovery().ServerVersion(); err != nil {
		return nil, nil, "", fmt.Errorf("the cluster %s of kubeconfig %s (%s) does not answer: %v", name, kubeconfig, server, err)
	}
	return cfg, client, name, nil
}

// buildAndPush builds an image and pushes it to the registry, returning
// the reference pinned by digest.
func buildAndPush(ctx context.Context, say func(string, ...any), what, registry string, build func() (image.Built, error)) (string, error) {
	start := time.Now()
	built, err := build()
	if err != nil {
		return "", fmt.Errorf("building the %s image: %w", what, err)
	}
	ref, err := push.Reference(registry, built.Tag)
	if err != nil {
		return "", err
	}
	pinned, err := push.Push(ctx, built.Archive, built.Tag, ref)
	if err != nil {
		return "", err
	}
	say("pushed the %s image %s (%s)", what, pinned, time.Since(start).Round(time.Second))
	return pinned, nil
}
