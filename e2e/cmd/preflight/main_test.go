package main

import (
	"context"
	"strings"
	"testing"
)

func TestCheckRefusesEachBadArgumentInOneLine(t *testing.T) {
	good := args{releases: "1.33 1.35", profile: "default", nodeImage: "auto", upgradeImage: "kindest/node:v1.36.4@sha256:" + strings.Repeat("a", 64), clusterName: "dra-e2e"}
	if p := good.checkArgs(); len(p) != 0 {
		t.Fatalf("good arguments refused: %v", p)
	}
	for name, c := range map[string]struct {
		mutate func(*args)
		want   string
	}{
		"release":      {func(a *args) { a.releases = "1.35 1.32" }, `unknown Kubernetes release "1.32"`},
		"no release":   {func(a *args) { a.releases = " " }, "no release given"},
		"profile":      {func(a *args) { a.profile = "bogus" }, `"bogus"`},
		"locked":       {func(a *args) { a.releases = "1.36"; a.profile = "apiserver-off" }, "1.36"},
		"labels":       {func(a *args) { a.labels = "nosuch" }, "unknown label nosuch"},
		"focus":        {func(a *args) { a.focus = "(" }, "FOCUS \"(\" is not a regular expression"},
		"node image":   {func(a *args) { a.nodeImage = "latest" }, `NODE_IMAGE: "latest" is neither a source`},
		"cluster name": {func(a *args) { a.clusterName = "Bad_Name" }, `CLUSTER_NAME "Bad_Name"`},
	} {
		a := good
		c.mutate(&a)
		p := a.checkArgs()
		if len(p) != 1 || !strings.Contains(p[0], c.want) || strings.Contains(p[0], "\n") {
			t.Errorf("%s: %q, want one line containing %q", name, p, c.want)
		}
	}
	if p := (args{releases: "1.35", profile: "default", nodeImage: "auto", upgradeImage: "auto", clusterName: "x", kubeconfig: "/nonexistent"}).check(context.Background()); len(p) != 1 || !strings.Contains(p[0], "/nonexistent") {
		t.Errorf("kubeconfig: %q", p)
	}
}
