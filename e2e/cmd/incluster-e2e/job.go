// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kep5018/adminaccess-conformance/e2e/suitejob"
)

// jobRun is the Job of one run in the cluster: what it made and how it
// reaches it (the API only).
type jobRun struct {
	client    kubernetes.Interface
	config    *rest.Config
	namespace string
	say       func(string, ...any)
	stdout    io.Writer
	// pod is the Job's pod, once it has one.
	pod string
}

// checkFree refuses a namespace that exists: an earlier run's that is
// still going, or someone else's, which the cleanup would delete.
func (j *jobRun) checkFree(ctx context.Context) error {
	_, err := j.client.CoreV1().Namespaces().Get(ctx, j.namespace, metav1.GetOptions{})
	switch {
	case err == nil:
		return fmt.Errorf("namespace %s exists already (a run still going, or one that was kept): delete it (kubectl delete namespace %s) or give another with --namespace", j.namespace, j.namespace)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading namespace %s: %w", j.namespace, err)
	}
	return nil
}

// apply creates the Job's objects as suitejob renders them.
func (j *jobRun) apply(ctx context.Context, v suitejob.Values) error {
	data, err := suitejob.Job(v)
	if err != nil {
		return err
	}
	decode := scheme.Codecs.UniversalDeserializer().Decode
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		obj, _, err := decode(doc, nil, nil)
		if err != nil {
			return fmt.Errorf("the Job's manifest: %w", err)
		}
		switch o := obj.(type) {
		case *corev1.Namespace:
			_, err = j.client.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = j.client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = j.client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.Job:
			_, err = j.client.BatchV1().Jobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			err = fmt.Errorf("unexpected object %T in the Job's manifest", obj)
		}
		if err != nil {
			return fmt.Errorf("applying the Job: %w", err)
		}
	}
	j.say("started Job %s/%s with image %s", j.namespace, suitejob.JobName, v.Image)
	return nil
}

// delete removes the namespace (the Job, its pod and results with it) and
// the binding, and waits until the namespace is gone, so the next run finds
// its name free.
func (j *jobRun) delete(ctx context.Context) error {
	bg := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &bg}
	err1 := j.client.RbacV1().ClusterRoleBindings().Delete(ctx, j.namespace+"-suite", opts)
	err2 := j.client.CoreV1().Namespaces().Delete(ctx, j.namespace, opts)
	for _, err := range []error{err1, err2} {
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := j.client.CoreV1().Namespaces().Get(ctx, j.namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("namespace %s was not gone in time: %w", j.namespace, err)
	}
	j.say("deleted namespace %s and ClusterRoleBinding %s-suite", j.namespace, j.namespace)
	return nil
}

// wait follows the Job's pod until its suite container ended, printing
// each change of the pod's state and the suite's output (also written to
// logPath), and returns the suite's exit code. A pod the nodes cannot start
// (an image they cannot pull, no node that takes it) fails in one line
// instead of waiting out the run's time.
func (j *jobRun) wait(ctx context.Context, timeout time.Duration, logPath string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	code, streaming, pendingSince := -1, false, time.Now()
	logDone := make(chan error, 1)
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		pod, err := j.jobPod(ctx)
		if err != nil || pod == nil {
			return false, err
		}
		state, stuck := describe(pod)
		if state != last {
			j.say("pod %s: %s", pod.Name, state)
			last = state
		}
		if stuck != "" {
			if time.Since(pendingSince) > 5*time.Minute || strings.HasPrefix(stuck, "!") {
				return false, fmt.Errorf("the Job's pod %s cannot start: %s", pod.Name, strings.TrimPrefix(stuck, "!"))
			}
		} else {
			pendingSince = time.Now()
		}
		suite := containerStatus(pod, suitejob.SuiteContainer)
		if !streaming && suite != nil && (suite.State.Running != nil || suite.State.Terminated != nil) {
			streaming = true
			go func() { logDone <- j.streamLog(ctx, pod.Name, logPath) }()
		}
		if suite != nil && suite.State.Terminated != nil {
			code = int(suite.State.Terminated.ExitCode)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return -1, fmt.Errorf("waiting for the suite: %w", err)
	}
	if streaming {
		if err := <-logDone; err != nil {
			j.say("the suite's log could not be read to its end: %v", err)
		}
	}
	return code, nil
}

func (j *jobRun) jobPod(ctx context.Context) (*corev1.Pod, error) {
	pods, err := j.client.CoreV1().Pods(j.namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + suitejob.JobName})
	if err != nil || len(pods.Items) == 0 {
		return nil, err
	}
	j.pod = pods.Items[0].Name
	return &pods.Items[0], nil
}

// streamLog copies the suite container's output, from its start to its
// end, to standard output and to path.
func (j *jobRun) streamLog(ctx context.Context, pod, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	stream, err := j.client.CoreV1().Pods(j.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: suitejob.SuiteContainer, Follow: true}).Stream(ctx)
	if err != nil {
		return err
	}
	defer stream.Close()
	_, err = io.Copy(io.MultiWriter(j.stdout, f), stream)
	return err
}

// describe is the pod's state in a few words, and why it cannot start
// where it cannot: "!" first where waiting longer cannot help.
func describe(pod *corev1.Pod) (state, stuck string) {
	state = string(pod.Status.Phase)
	if pod.Spec.NodeName != "" {
		state += " on node " + pod.Spec.NodeName
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return state + ", not scheduled: " + c.Message, "no node takes it: " + c.Message
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil:
			state += fmt.Sprintf(", %s waiting (%s)", cs.Name, cs.State.Waiting.Reason)
			switch cs.State.Waiting.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName":
				return state, "!the node cannot pull " + cs.Image + ": " + cs.State.Waiting.Message
			case "CreateContainerConfigError", "CreateContainerError":
				return state, "!" + cs.State.Waiting.Message
			}
		case cs.State.Running != nil:
			state += ", " + cs.Name + " running"
		case cs.State.Terminated != nil:
			state += fmt.Sprintf(", %s exited %d", cs.Name, cs.State.Terminated.ExitCode)
		}
	}
	return state, ""
}

func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}
