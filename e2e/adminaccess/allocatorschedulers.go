// SPDX-License-Identifier: Apache-2.0

package adminaccess

// A kube-scheduler per other allocator implementation, beside the
// cluster's own: the allocators group's specs (the core promises and the
// feature groups' promises) run under it in the parallel part of the run,
// where moving the cluster's kube-scheduler to another feature set would
// change the allocator of every spec running beside them (and so had to
// wait for the Serial part, alone).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/utils/ptr"

	"github.com/kep5018/adminaccess-conformance/clusters/nodeconfig"
	"github.com/kep5018/adminaccess-conformance/clusters/release"
	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
	"github.com/kep5018/adminaccess-conformance/testdriver/deploy"
)

// allocatorScheduler is a kube-scheduler of the cluster's own binary and
// flags, with one of the release's other feature sets (release.FeatureSets)
// and a scheduler name of its own: only pods that name it are its, so the
// cluster's kube-scheduler keeps the release's defaults for every other
// spec. It runs as a pod in kube-system on a worker, from the image every
// node of a kind cluster has (the static kube-scheduler's), as a
// ServiceAccount bound to the roles kube-scheduler has, without leader
// election (there is one of it).
type allocatorScheduler struct {
	set       release.FeatureSet
	allocator string
	// adminAccess, where set, makes it the cluster's kube-scheduler with
	// only DRAAdminAccess moved to this value (gateScheduler), and set and
	// allocator name nothing but its name.
	adminAccess *bool
	// asCluster makes it the cluster's kube-scheduler with every gate as
	// the cluster has it (a second process of it: freshScheduler), and
	// allocator nothing but its name.
	asCluster bool
	// fresh marks a second process of a scheduler, under a name of its own.
	fresh bool
}

// schedulerSystemNamespace is where the allocator schedulers run.
const schedulerSystemNamespace = "kube-system"

// name is its scheduler name, and the name of each object it is made of.
func (s allocatorScheduler) name() string {
	if s.fresh {
		return "adminaccess-scheduler-" + s.allocator + "-fresh"
	}
	return "adminaccess-scheduler-" + s.allocator
}

// what says, for messages, what it runs with.
func (s allocatorScheduler) what() string {
	switch {
	case s.adminAccess != nil:
		return fmt.Sprintf("%s=%t", release.Gate, *s.adminAccess)
	case s.asCluster:
		return "the cluster's kube-scheduler's gates"
	}
	return s.set.Name
}

// allocatorSchedulers are the release's other feature sets with the
// implementation each selects, one scheduler each (none where the cluster
// was made with a feature set of its own: the group then checks the
// cluster's kube-scheduler as it is); allocatorsMoved walks the same list.
func allocatorSchedulers(rel release.Release) []allocatorScheduler {
	if rel.FeatureSetName != "" {
		return nil
	}
	var out []allocatorScheduler
	for _, set := range rel.FeatureSets()[1:] {
		allocator, err := rel.AllocatorFor(set)
		if err != nil {
			panic(fmt.Sprintf("release table: %v", err)) // a unit test keeps every set resolvable
		}
		out = append(out, allocatorScheduler{set: set, allocator: allocator})
	}
	return out
}

// startAllocatorSchedulers starts every allocator scheduler of the run, on
// process 1 and where the suite may look inside the nodes (the image and
// the flags are the cluster's own kube-scheduler's); the specs that use one
// wait until it is ready (awaitReady).
//
// One that cannot start fails the specs that need it (awaitReady says
// why), not the run: the other groups have nothing to do with it.
func startAllocatorSchedulers(ctx context.Context) {
	// A driver of the user's own runs the group on the cluster's
	// kube-scheduler (allocatorsMoved).
	if ginkgo.GinkgoParallelProcess() != 1 || env.Vendor != nil || !nodesReachable(env) || !willRun(suitePreview, "allocators") {
		return
	}
	for _, s := range allocatorSchedulers(env.Rel) {
		if err := s.start(ctx, env); err != nil {
			framework.Logf("starting kube-scheduler %s (%s): %v", s.name(), s.set.Name, err)
		}
	}
}

// stopAllocatorSchedulers removes the allocator schedulers, so a kept or
// given cluster is left as found; their logs are in the artifacts with
// every kube-system pod's (saveClusterRecord, before this).
func stopAllocatorSchedulers(ctx context.Context) {
	if ginkgo.GinkgoParallelProcess() != 1 || env.Cluster == nil {
		return
	}
	for _, s := range allocatorSchedulers(env.Rel) {
		if err := s.stop(ctx, env); err != nil {
			framework.Logf("removing kube-scheduler %s: %v", s.name(), err)
		}
	}
}

// schedulerConfig is its KubeSchedulerConfiguration: one profile under its
// own name, no leader election, the in-cluster client.
func (s allocatorScheduler) schedulerConfig() string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
`, s.name())
}

// command is the cluster's kube-scheduler's, with the feature set's gates
// moved as the cluster's would be (kindcluster's MoveSchedulerTo), or only
// DRAAdminAccess set where adminAccess is (as SetAdminAccess would), the
// allocator's files logged, and the configuration instead of the flags
// that only a static pod on the node can use (its kubeconfig files, leader
// election, its host port).
func (s allocatorScheduler) command(cluster []string, movable []string) ([]string, error) {
	if len(cluster) == 0 {
		return nil, fmt.Errorf("kube-scheduler's pod has no command")
	}
	gates, err := nodeconfig.CommandGates(cluster)
	if err != nil {
		return nil, err
	}
	switch {
	case s.asCluster:
	case s.adminAccess != nil:
		gates[release.Gate] = *s.adminAccess
	default:
		for _, g := range movable {
			if _, named := s.set.SchedulerGates[g]; !named {
				delete(gates, g)
			}
		}
		for g, v := range s.set.SchedulerGates {
			gates[g] = v
		}
	}
	dropped := []string{"kubeconfig", "authentication-kubeconfig", "authorization-kubeconfig", "leader-elect", "bind-address", "secure-port", "config", "feature-gates", "vmodule"}
	out := []string{cluster[0]}
	for _, arg := range cluster[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !slices.Contains(dropped, name) {
			out = append(out, arg)
		}
	}
	out = append(out, "--config="+schedulerConfigDir+"/config.yaml", "--vmodule="+release.AllocatorVModule)
	if len(gates) > 0 {
		out = append(out, "--feature-gates="+nodeconfig.FormatGates(gates))
	}
	return out, nil
}

const schedulerConfigDir = "/etc/adminaccess-scheduler"

// start creates its ServiceAccount and role bindings, its configuration and
// its pod; it does not wait.
func (s allocatorScheduler) start(ctx context.Context, e *testenv.Env) error {
	c := e.Client
	cluster, err := clusterScheduler(ctx, e)
	if err != nil {
		return err
	}
	own := cluster.Spec.Containers[0]
	command, err := s.command(own.Command, e.Rel.MovableGates())
	if err != nil {
		return err
	}
	// On a worker: kindcluster's restarts find the control-plane node's
	// kube-scheduler by its process, which a second one there would be
	// taken for (seen: a move waited 3 minutes on this one's pid). Every
	// node of a kind cluster has the control plane's images.
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	node := ""
	for _, n := range nodes.Items {
		if !deploy.IsControlPlane(n) {
			node = n.Name
			break
		}
	}
	if node == "" {
		return fmt.Errorf("no worker node to run it on (the control-plane node's kube-scheduler is found by its process)")
	}
	name := s.name()
	meta := metav1.ObjectMeta{Name: name, Namespace: schedulerSystemNamespace, Labels: map[string]string{"app.kubernetes.io/managed-by": deploy.ManagedBy}}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: schedulerSystemNamespace}}
	// The roles the cluster's kube-scheduler has (schedulerRoles), and the
	// reader of the authentication configuration its secure port needs.
	creates := []func() error{
		func() error {
			_, err := c.CoreV1().ServiceAccounts(schedulerSystemNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
			return err
		},
		func() error {
			reader := &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}, Subjects: subject}
			_, err := c.RbacV1().RoleBindings(schedulerSystemNamespace).Create(ctx, reader, metav1.CreateOptions{})
			return err
		},
		func() error {
			config := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"config.yaml": s.schedulerConfig()}}
			_, err := c.CoreV1().ConfigMaps(schedulerSystemNamespace).Create(ctx, config, metav1.CreateOptions{})
			return err
		},
	}
	for _, role := range schedulerRoles {
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: s.bindingName(role), Labels: meta.Labels},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}, Subjects: subject}
		creates = append(creates, func() error {
			_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
			return err
		})
	}
	// One a killed run left is taken as it is.
	for _, create := range creates {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	podMeta := meta
	podMeta.Labels = map[string]string{"app.kubernetes.io/managed-by": deploy.ManagedBy, "component": name}
	pod := &corev1.Pod{ObjectMeta: podMeta, Spec: corev1.PodSpec{
		NodeName:           node,
		ServiceAccountName: name,
		Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{
			Name: "kube-scheduler", Image: own.Image, Command: command,
			// Every node of a kind cluster has it (the node image's).
			ImagePullPolicy: corev1.PullNever,
			VolumeMounts:    []corev1.VolumeMount{{Name: "config", MountPath: schedulerConfigDir, ReadOnly: true}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(10259), Scheme: corev1.URISchemeHTTPS}}, PeriodSeconds: 1},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}},
		TerminationGracePeriodSeconds: ptr.To(int64(1)),
	}}
	if _, err := c.CoreV1().Pods(schedulerSystemNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// schedulerRoles are the ClusterRoles the cluster's kube-scheduler has.
var schedulerRoles = []string{"system:kube-scheduler", "system:volume-scheduler"}

// bindingName names its binding to role.
func (s allocatorScheduler) bindingName(role string) string {
	return s.name() + "-" + strings.TrimPrefix(role, "system:")
}

// awaitReady waits until its pod is ready (its secure port answers).
func (s allocatorScheduler) awaitReady(ctx context.Context) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	gomega.Eventually(ctx, func(ctx context.Context) (string, error) {
		p, err := e.Client.CoreV1().Pods(schedulerSystemNamespace).Get(ctx, s.name(), metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return "ready", nil
			}
		}
		return fmt.Sprintf("%s: %s", p.Status.Phase, podConditions(p)), nil
	}).WithTimeout(podStartTimeout).Should(gomega.Equal("ready"), "kube-scheduler %s (%s) is ready (the suite's log says why it did not start, if it did not)", s.name(), s.what())
}

// stop ends its process (removePod) and deletes what else start made.
func (s allocatorScheduler) stop(ctx context.Context, e *testenv.Env) error {
	c, name := e.Client, s.name()
	var errs []string
	keep := func(err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err.Error())
		}
	}
	// A failed spec's artifacts keep its log, which goes with its pod.
	if report := ginkgo.CurrentSpecReport(); report.Failed() {
		s.saveLog(ctx, e, failureDir(report))
	}
	// The process first, so that it never runs without its roles; all of
	// it gone before the cluster is, so that a kept cluster is left as found.
	keep(s.removePod(ctx, e))
	keep(c.CoreV1().ConfigMaps(schedulerSystemNamespace).Delete(ctx, name, metav1.DeleteOptions{}))
	keep(c.RbacV1().RoleBindings(schedulerSystemNamespace).Delete(ctx, name, metav1.DeleteOptions{}))
	for _, role := range schedulerRoles {
		keep(c.RbacV1().ClusterRoleBindings().Delete(ctx, s.bindingName(role), metav1.DeleteOptions{}))
	}
	keep(c.CoreV1().ServiceAccounts(schedulerSystemNamespace).Delete(ctx, name, metav1.DeleteOptions{}))
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// saveLog writes its pod's log into dir, as kube-scheduler-<name>.log.
func (s allocatorScheduler) saveLog(ctx context.Context, e *testenv.Env, dir string) {
	raw, err := e.Client.CoreV1().Pods(schedulerSystemNamespace).GetLogs(s.name(), &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		framework.Logf("reading kube-scheduler %s's log: %v", s.name(), err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(dir, "kube-scheduler-"+s.name()+".log"), raw, 0o644)
	}
	if err != nil {
		framework.Logf("saving kube-scheduler %s's log: %v", s.name(), err)
	}
}

// removePod deletes its pod (1 s grace period) and returns once the pod is
// gone, not only terminating: the process has ended, and a pod of the same
// name can be created.
func (s allocatorScheduler) removePod(ctx context.Context, e *testenv.Env) error {
	pods, name := e.Client.CoreV1().Pods(schedulerSystemNamespace), s.name()
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		return fmt.Errorf("pod %s still there", name)
	}
	return nil
}

// underScheduler has the running spec's pods scheduled by s (newBuilder),
// after it is ready, and its report row name s's allocator and set.
func underScheduler(ctx context.Context, s allocatorScheduler) {
	ginkgo.GinkgoHelper()
	e := envOf(ctx)
	s.awaitReady(ctx)
	specScheduler = s.name()
	e.SetFeatureSet(s.set)
	ginkgo.DeferCleanup(func() {
		specScheduler = ""
		e.SetFeatureSet(e.Rel.DefaultFeatures())
	})
	reportAllocator(s.allocator, s.set)
}

// specScheduler is the scheduler the running spec's pods name (empty: the
// cluster's default-scheduler); see specSlot for why one variable serves.
var specScheduler string
