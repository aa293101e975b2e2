// SPDX-License-Identifier: Apache-2.0

package observe

import (
	"regexp"
	"strings"
)

// startingAllocation is the line each structured allocator implementation
// logs at level 5 when kube-scheduler asks it to allocate, in klog's text
// header form: "I1125 05:01:02.345678       1 allocator_stable.go:123]
// "Starting allocation" numClaims=1 ...". The file names the implementation
// (allocator_stable.go, allocator_incubating.go, allocator_experimental.go;
// allocator.go where there is one implementation).
// StartingAllocation is that line's message: one per attempt of
// kube-scheduler to allocate a pod's claims on a node.
const StartingAllocation = "Starting allocation"

var startingAllocation = regexp.MustCompile(`\s(allocator(?:_([a-z]+))?)\.go:\d+\] "Starting allocation"`)

// AllocatorsInLog counts kube-scheduler's "Starting allocation" lines in a
// log by implementation: stable, incubating, experimental, or "structured"
// for the single implementation of 1.33.
func AllocatorsInLog(log string) map[string]int {
	return AllocatorsInLogFor(log, "")
}

// AllocatorsInLogFor is AllocatorsInLog for the pods of one namespace
// only (kube-scheduler's logger carries the pod, pod="ns/name"): where
// specs running at once share a kube-scheduler, each counts its own pods'
// allocations. namespace "" counts every line.
func AllocatorsInLogFor(log, namespace string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		m := startingAllocation.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if namespace != "" {
			if p := podValue.FindStringSubmatch(line); p == nil || !strings.HasPrefix(p[1], namespace+"/") {
				continue
			}
		}
		name := m[2]
		if name == "" {
			name = "structured"
		}
		out[name]++
	}
	return out
}

// allocatorLine is a structured allocator's log line in klog's text form:
// `I1126 07:07:17.643412 1 allocator_incubating.go:1350] "Insufficient
// counters" pod="ns/admin" device="driver/pool/whole"`. kube-scheduler's
// logger carries the pod; the line's own values follow it.
var (
	allocatorLine = regexp.MustCompile(`\s(allocator(?:_[a-z]+)?\.go):\d+\] "([^"]+)"(.*)$`)
	podValue      = regexp.MustCompile(`\spod="([^"]+)"`)
	deviceValue   = regexp.MustCompile(`\sdevice="([^"]+)"`)
)

// AllocatorLine is one line the allocator logged while it worked for a pod.
type AllocatorLine struct {
	// File is the implementation's file (allocator_stable.go, ...).
	File string
	// Message is the line's message: "Insufficient counters", "Device
	// capacity not enough", "Device not usable", "Starting allocation".
	Message string
	// Device is the device it names, "driver/pool/device", or "" (a line
	// about no one device, or one that names it as a structure).
	Device string
	// Text is the whole line.
	Text string
}

// AllocatorLinesFor lists, in order, the allocator's lines for the pod
// (namespace/name) in a kube-scheduler log. At --vmodule=allocator*=7 they
// say why each device was passed over.
func AllocatorLinesFor(log, pod string) []AllocatorLine {
	var out []AllocatorLine
	for _, line := range strings.Split(log, "\n") {
		m := allocatorLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		p := podValue.FindStringSubmatch(m[3])
		if p == nil || p[1] != pod {
			continue
		}
		l := AllocatorLine{File: m[1], Message: m[2], Text: strings.TrimSpace(line)}
		if d := deviceValue.FindStringSubmatch(m[3]); d != nil {
			l.Device = d[1]
		}
		out = append(out, l)
	}
	return out
}
