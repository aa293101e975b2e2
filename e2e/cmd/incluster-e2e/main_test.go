// SPDX-License-Identifier: Apache-2.0

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Bad input is refused in one line, as a usage error (exit 2), before any
// cluster is dialled or image built.
func TestParseRefuses(t *testing.T) {
	for args, want := range map[string]string{
		"":                                  "give KUBECONFIG",
		"--kubeconfig k":                    "give REGISTRY",
		"--kubeconfig k --registry UPPER/x": "REGISTRY=",
		"--kubeconfig k --registry r/x --wait -1s": "positive duration",
		"--kubeconfig k --registry r/x extra":      "unexpected argument",
	} {
		_, err := parse(strings.Fields(args))
		if err == nil || !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), want) {
			t.Errorf("parse(%q) = %v, want a usage error with %q", args, err, want)
		}
	}
	if _, err := parse(strings.Fields("--kubeconfig k --suite-image r/s:1")); err != nil {
		t.Errorf("a pushed suite image needs no registry: %v", err)
	}
}

// A results archive cannot write outside the results folder.
func TestUnpackRefusesEscape(t *testing.T) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, name := range []string{"1.35/report.md", "../evil"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
		tw.Write([]byte("x"))
	}
	tw.Close()
	gz.Close()
	dir := t.TempDir()
	if err := unpack(&b, dir); err == nil || !strings.Contains(err.Error(), "outside the results") {
		t.Errorf("unpack = %v", err)
	}
	if got := listFiles(dir); got != "1.35/report.md" {
		t.Errorf("unpacked %q", got)
	}
}

// A pod that cannot pull its image fails at once; an unscheduled one is
// waited for (a node may yet come).
func TestDescribe(t *testing.T) {
	pull := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "suite", Image: "r/s:1", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "no such host"}}}}}}
	if _, stuck := describe(pull); !strings.HasPrefix(stuck, "!the node cannot pull r/s:1") {
		t.Errorf("pull: %q", stuck)
	}
	unscheduled := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/2 nodes are available"}}}}
	if _, stuck := describe(unscheduled); stuck == "" || strings.HasPrefix(stuck, "!") {
		t.Errorf("unscheduled: %q", stuck)
	}
	running := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "w"}, Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
		{Name: "suite", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	if state, stuck := describe(running); state != "Running on node w, suite running" || stuck != "" {
		t.Errorf("running: %q %q", state, stuck)
	}
}
