// SPDX-License-Identifier: Apache-2.0

package adminaccess

// What a run leaves for the reader: a failed spec's namespace, the driver's
// log, the cluster's record.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/test/e2e/framework"

	"github.com/kep5018/adminaccess-conformance/e2e/testenv"
)

func failureMarker() string { return filepath.Join(theRun.Layout.Artifacts, ".failed") }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// failureDir is where a failed spec's artifacts go.
func failureDir(report ginkgo.SpecReport) string {
	dir := filepath.Join(theRun.Layout.Artifacts, "failures", unsafeName.ReplaceAllString(report.FullText(), "_"))
	if len(dir) > 200 {
		dir = dir[:200]
	}
	return dir
}

// dumpNamespace writes what a failed spec's namespace held: every pod's
// phase, conditions and container states, each container's log, and the
// namespace's events, into namespace-<name>.txt of the spec's failure folder.
func dumpNamespace(ctx context.Context, f *framework.Framework, ns string) {
	dir := failureDir(ginkgo.CurrentSpecReport())
	os.MkdirAll(dir, 0o755)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var out strings.Builder
	pods, err := f.ClientSet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&out, "listing pods: %v\n", err)
	} else {
		for _, p := range pods.Items {
			fmt.Fprintf(&out, "===== pod %s on %q: %s; %s\n", p.Name, p.Spec.NodeName, p.Status.Phase, podConditions(&p))
			for _, cs := range p.Status.ContainerStatuses {
				fmt.Fprintf(&out, "container %s: ready=%t restarts=%d state=%+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
			}
			for _, c := range p.Spec.Containers {
				raw, err := f.ClientSet.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				fmt.Fprintf(&out, "----- log of %s (err: %v)\n%s\n", c.Name, err, raw)
			}
		}
	}
	out.WriteString("===== events\n")
	if list, err := f.ClientSet.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err != nil {
		fmt.Fprintf(&out, "listing events: %v\n", err)
	} else {
		for _, e := range list.Items {
			out.WriteString(eventLine(e) + "\n")
		}
	}
	os.WriteFile(filepath.Join(dir, "namespace-"+ns+".txt"), []byte(out.String()), 0o644)
}

// eventLine is one event as the failure artifacts write it.
func eventLine(e corev1.Event) string {
	return fmt.Sprintf("%s %s/%s/%s %s %s (x%d): %s", e.LastTimestamp.Format(time.RFC3339), e.Namespace, e.InvolvedObject.Kind,
		e.InvolvedObject.Name, e.Type, e.Reason, e.Count, e.Message)
}

// saveFailureArtifacts keeps, for a failed spec, the cluster's events of its
// time and the driver's logs, and marks the run failed so the cluster's logs
// are kept.
func saveFailureArtifacts(ctx context.Context, report ginkgo.SpecReport) {
	e := envOf(ctx)
	dir := failureDir(report)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(failureMarker(), []byte(report.FullText()+"\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var events []string
	if list, err := e.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range list.Items {
			if e.LastTimestamp.Time.After(report.StartTime.Add(-time.Minute)) || e.EventTime.Time.After(report.StartTime.Add(-time.Minute)) {
				events = append(events, eventLine(e))
			}
		}
	}
	sort.Strings(events)
	os.WriteFile(filepath.Join(dir, "events.txt"), []byte(strings.Join(events, "\n")+"\n"), 0o644)
	saveDriverLogsOf(ctx, e, filepath.Join(dir, "testdriver.log"))
}

// saveDriverLogs is saveDriverLogsOf for the suite's teardown, which has
// the process's environment, not a spec's context.
func saveDriverLogs(ctx context.Context, path string) { saveDriverLogsOf(ctx, env, path) }

// saveDriverLogsOf writes every driver pod's log into one file; a driver of
// the user's own has a file per pod beside it (saveVendorDriverLogs).
func saveDriverLogsOf(ctx context.Context, e *testenv.Env, path string) {
	if e.Vendor != nil {
		saveVendorDriverLogs(ctx, e, filepath.Dir(path))
		return
	}
	pods, err := e.Client.CoreV1().Pods(e.Driver.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var out strings.Builder
	for _, p := range pods.Items {
		raw, err := e.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		fmt.Fprintf(&out, "===== %s on %s (err: %v)\n%s\n", p.Name, p.Spec.NodeName, err, raw)
	}
	os.WriteFile(path, []byte(out.String()), 0o644)
}

// saveVendorDriverLogs writes, for a driver of the user's own, each of its
// pods' logs (every container, since set-up read the driver) into
// driver-<pod>.log under dir; the pods are found as set-up found them, so
// a pod that replaced one during the run is there too. Where none is
// found, driver-pods.txt says so.
func saveVendorDriverLogs(ctx context.Context, e *testenv.Env, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	pods, _, err := e.Vendor.Pods(ctx, e.Client)
	if err != nil || len(pods) == 0 {
		os.WriteFile(filepath.Join(dir, "driver-pods.txt"), []byte(fmt.Sprintf("driver pods not found (give DRIVER_NAMESPACE); error: %v\n", err)), 0o644)
		return
	}
	var since *metav1.Time
	if !e.Vendor.Started.IsZero() {
		since = &metav1.Time{Time: e.Vendor.Started}
	}
	for _, p := range pods {
		var out strings.Builder
		for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			raw, err := e.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, SinceTime: since}).DoRaw(ctx)
			fmt.Fprintf(&out, "===== %s/%s container %s on %s, since %s (err: %v)\n%s\n", p.Namespace, p.Name, c.Name, p.Spec.NodeName, e.Vendor.Started.UTC().Format(time.RFC3339), err, raw)
		}
		os.WriteFile(filepath.Join(dir, "driver-"+unsafeName.ReplaceAllString(p.Name, "_")+".log"), []byte(out.String()), 0o644)
	}
}

// saveClusterRecord keeps, on every run, the small part of the cluster's
// logs a reader of a green run may still want: each kube-system pod's
// current log (the control plane's components, kube-proxy, CoreDNS) and
// every event the cluster still holds, under dir. A failed run also gets
// kind's whole export (testenv.Teardown).
func saveClusterRecord(ctx context.Context, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	if pods, err := env.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				raw, err := env.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				if err != nil {
					raw = []byte("reading the log: " + err.Error() + "\n")
				}
				os.WriteFile(filepath.Join(dir, p.Name+"_"+c.Name+".log"), raw, 0o644)
			}
		}
	}
	events, err := env.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var out strings.Builder
	for _, e := range events.Items {
		fmt.Fprintf(&out, "%s %s %s/%s %s %s: %s\n", e.LastTimestamp.UTC().Format(time.RFC3339), e.Type,
			e.InvolvedObject.Kind, e.Namespace+"/"+e.InvolvedObject.Name, e.Source.Component, e.Reason, e.Message)
	}
	os.WriteFile(filepath.Join(dir, "events.txt"), []byte(out.String()), 0o644)
}
