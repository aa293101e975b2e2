// SPDX-License-Identifier: Apache-2.0

package builder

import (
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
)

func TestClaimsReadAsTheirOptions(t *testing.T) {
	b := &Builder{Namespace: "ns", Class: "cls", DriverName: "drv.example.com", Image: "img:1"}
	c := b.Claim(AdminAccess(), DeviceIndex(2))
	r := c.Spec.Devices.Requests[0]
	if r.Name != RequestName || r.Exactly.DeviceClassName != "cls" || !*r.Exactly.AdminAccess || r.Exactly.Count != 1 {
		t.Fatalf("request %+v", r.Exactly)
	}
	if got := r.Exactly.Selectors[0].CEL.Expression; got != `device.attributes["drv.example.com"].index == 2` {
		t.Fatal(got)
	}
	all := b.Template(AllDevices()).Spec.Spec.Devices.Requests[0].Exactly
	if all.AllocationMode != resourceapi.DeviceAllocationModeAll || all.Count != 0 || all.AdminAccess != nil {
		t.Fatalf("all %+v", all)
	}
	if c2 := b.Claim(); c2.Name == c.Name {
		t.Fatal("names must be unique")
	}
}

func TestPodUsesEveryClaim(t *testing.T) {
	b := &Builder{Namespace: "ns", Image: "img:1"}
	c := b.Claim()
	tmpl := b.Template()
	pod := b.Pod(UsingClaim(c), FromTemplate(tmpl))
	if len(pod.Spec.ResourceClaims) != 2 || *pod.Spec.ResourceClaims[0].ResourceClaimName != c.Name || *pod.Spec.ResourceClaims[1].ResourceClaimTemplateName != tmpl.Name {
		t.Fatalf("claims %+v", pod.Spec.ResourceClaims)
	}
	got := pod.Spec.Containers[0].Resources.Claims
	if len(got) != 2 || got[0].Name != pod.Spec.ResourceClaims[0].Name {
		t.Fatalf("container claims %+v", got)
	}
}

func TestSeveralRequestsAndAContainerPerRequest(t *testing.T) {
	b := &Builder{Namespace: "ns", Class: "cls", DriverName: "drv", Image: "img:1"}
	c := b.ClaimOf(Request(), Request(AdminAccess(), DeviceIndex(1)))
	reqs := c.Spec.Devices.Requests
	if len(reqs) != 2 || reqs[0].Name != "req-0" || reqs[1].Name != RequestNameAt(1) || reqs[0].Exactly.AdminAccess != nil || !*reqs[1].Exactly.AdminAccess {
		t.Fatalf("requests %+v", reqs)
	}
	if len(reqs[1].Exactly.Selectors) != 1 || len(reqs[0].Exactly.Selectors) != 0 {
		t.Fatal("options must shape only their own request")
	}
	tmpl := b.TemplateOf(Request(AdminAccess()), Request())
	if r := tmpl.Spec.Spec.Devices.Requests; len(r) != 2 || !*r[0].Exactly.AdminAccess || r[1].Exactly.AdminAccess != nil {
		t.Fatalf("template requests %+v", r)
	}
	pod := b.ContainerPerRequest(UsingClaim(c), "req-0", "req-1")
	if len(pod.Spec.Containers) != 2 || len(pod.Spec.ResourceClaims) != 1 {
		t.Fatalf("pod %+v", pod.Spec)
	}
	for i, ctr := range pod.Spec.Containers {
		want := RequestNameAt(i)
		if ctr.Name != want || len(ctr.Resources.Claims) != 1 || ctr.Resources.Claims[0].Request != want || ctr.Resources.Claims[0].Name != pod.Spec.ResourceClaims[0].Name {
			t.Fatalf("container %d: %+v", i, ctr)
		}
	}
}

func TestClaimFirstAvailable(t *testing.T) {
	b := &Builder{Namespace: "ns", Class: "class", DriverName: "drv"}
	c := b.ClaimFirstAvailable([][]RequestOption{{DeviceIndex(9)}, {Count(2)}}, Request(AdminAccess(), DeviceIndex(0)))
	reqs := c.Spec.Devices.Requests
	if len(reqs) != 2 || reqs[0].Name != "req-0" || reqs[0].Exactly != nil || len(reqs[0].FirstAvailable) != 2 {
		t.Fatalf("requests %+v", reqs)
	}
	first, second := reqs[0].FirstAvailable[0], reqs[0].FirstAvailable[1]
	if first.Name != "sub-0" || first.DeviceClassName != "class" || len(first.Selectors) != 1 || first.Count != 1 {
		t.Errorf("sub-0 %+v", first)
	}
	if second.Name != "sub-1" || second.Count != 2 || len(second.Selectors) != 0 {
		t.Errorf("sub-1 %+v", second)
	}
	if reqs[1].Name != "req-1" || reqs[1].Exactly == nil || reqs[1].Exactly.AdminAccess == nil || !*reqs[1].Exactly.AdminAccess {
		t.Errorf("req-1 %+v", reqs[1])
	}
}

func TestTemplateFirstAvailableMakesTheClaimsSpec(t *testing.T) {
	b := &Builder{Namespace: "ns", Class: "class", DriverName: "drv"}
	tmpl := b.TemplateFirstAvailable([][]RequestOption{{DeviceIndex(9)}, {}})
	reqs := tmpl.Spec.Spec.Devices.Requests
	if tmpl.Namespace != "ns" || !strings.HasPrefix(tmpl.Name, "template-") {
		t.Errorf("template %s/%s", tmpl.Namespace, tmpl.Name)
	}
	if len(reqs) != 1 || reqs[0].Exactly != nil || len(reqs[0].FirstAvailable) != 2 || reqs[0].FirstAvailable[1].Name != "sub-1" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestCapacityAsksForAShare(t *testing.T) {
	b := &Builder{Namespace: "ns", Class: "cls", DriverName: "drv"}
	r := b.Claim(Capacity("memory", "2Gi"), Capacity("bandwidth", "1G"), AdminAccess()).Spec.Devices.Requests[0].Exactly
	if r.Capacity == nil || len(r.Capacity.Requests) != 2 {
		t.Fatalf("capacity %+v", r.Capacity)
	}
	if m, bw := r.Capacity.Requests["memory"], r.Capacity.Requests["bandwidth"]; m.String() != "2Gi" || bw.String() != "1G" {
		t.Fatalf("capacity %+v", r.Capacity)
	}
	if plain := b.Claim().Spec.Devices.Requests[0].Exactly; plain.Capacity != nil {
		t.Fatalf("a request that asks for no capacity must leave the field unset: %+v", plain.Capacity)
	}
}

// A pod of a user's own image runs the command it is given; the bundled
// image runs its workload. OnNodes keeps pods to the nodes named.
func TestWorkloadCommandAndNodes(t *testing.T) {
	b := &Builder{Namespace: "ns", Image: "img:1"}
	if c := b.PodSpec().Containers[0].Command; len(c) != 1 || c[0] != "/workload" {
		t.Errorf("bundled image: command %v", c)
	}
	b.Command = []string{"sh", "-c", "exec sleep 86400"}
	spec := b.PodSpec()
	if c := spec.Containers[0].Command; len(c) != 3 || c[2] != "exec sleep 86400" {
		t.Errorf("own image: command %v", c)
	}
	OnNodes(&spec, "a", "b")
	req := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
	if req.Key != "kubernetes.io/hostname" || req.Operator != "In" || len(req.Values) != 2 || req.Values[1] != "b" {
		t.Errorf("affinity %+v", req)
	}
}
