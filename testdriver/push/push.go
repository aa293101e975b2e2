// Package push puts the test driver's image into a registry and checks
// that a reference resolves there, for clusters whose nodes pull images
// instead of having an archive loaded into them (a vendor's cluster, CI
// with a registry). It uses go-containerregistry; the archive is the one
// testdriver/image writes.
package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nameOptions allow plain HTTP only where no one else can listen: a
// registry on a loopback or private address. Any other is HTTPS.
func nameOptions(ref string) []name.Option {
	host, _, _ := strings.Cut(ref, "/")
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	if h == "localhost" {
		return []name.Option{name.Insecure}
	}
	if ip := net.ParseIP(h); ip != nil && (ip.IsLoopback() || ip.IsPrivate()) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// Reference is where the built image (tag "kind-e2e/testdriver:abc") goes
// in REGISTRY ("localhost:5001/dra"): "localhost:5001/dra/testdriver:abc".
func Reference(registry, tag string) (string, error) {
	registry = strings.TrimSuffix(strings.TrimSpace(registry), "/")
	if registry == "" || strings.ContainsAny(registry, "@ ") {
		return "", fmt.Errorf("REGISTRY=%q is not a registry and path such as localhost:5001/dra or registry.example.com/team", registry)
	}
	if _, err := name.NewRepository(registry+"/testdriver", nameOptions(registry)...); err != nil {
		return "", fmt.Errorf("REGISTRY=%q is not a registry and path such as localhost:5001/dra or registry.example.com/team: %v", registry, err)
	}
	_, version, ok := strings.Cut(tag, ":")
	if !ok || version == "" {
		return "", fmt.Errorf("image tag %q has no version", tag)
	}
	repo := tag[:len(tag)-len(version)-1]
	base := repo[strings.LastIndex(repo, "/")+1:]
	return registry + "/" + base + ":" + version, nil
}

// Push writes the image tag from the docker-save archive to reference and
// returns reference pinned by the digest the registry stored.
func Push(ctx context.Context, archive, tag, reference string) (string, error) {
	src, err := name.NewTag(tag)
	if err != nil {
		return "", fmt.Errorf("image tag %q: %w", tag, err)
	}
	img, err := tarball.ImageFromPath(archive, &src)
	if err != nil {
		return "", fmt.Errorf("reading %s from %s: %w", tag, archive, err)
	}
	dst, err := name.NewTag(reference, nameOptions(reference)...)
	if err != nil {
		return "", fmt.Errorf("reference %q: %w", reference, err)
	}
	if err := remote.Write(dst, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", reference, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return reference + "@" + digest.String(), nil
}

// Resolve checks that reference names an image in its registry and returns
// it pinned by digest. The error says, in one line, whether the registry
// did not answer or the image is not there.
func Resolve(ctx context.Context, reference string) (string, error) {
	ref, err := name.ParseReference(reference, nameOptions(reference)...)
	if err != nil {
		return "", fmt.Errorf("%q is not an image reference: %v", reference, err)
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == 404 {
			return "", fmt.Errorf("%s: no such image in %s", reference, ref.Context().RegistryStr())
		}
		if errors.As(err, &te) {
			return "", fmt.Errorf("%s: the registry %s refused it (HTTP %d)", reference, ref.Context().RegistryStr(), te.StatusCode)
		}
		return "", fmt.Errorf("%s: the registry %s did not answer: %v", reference, ref.Context().RegistryStr(), firstLine(err.Error()))
	}
	return ref.Context().Name() + "@" + desc.Digest.String(), nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
