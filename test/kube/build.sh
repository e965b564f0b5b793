#!/bin/sh
# Builds the kube-apiserver and etcd the tests start (kubetest) from the
# wrapper modules beside this script, into a cache directory outside the
# repository keyed by the wrappers' go.sum files:
#
#	${GPUGRAPH_KUBE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpugraph-kube}/<sha256 of apiserver/go.sum then etcd/go.sum>/
#
# so a machine pays the cold build (20 to 50 minutes on 2 cores) once per
# version; when both binaries are there it does nothing. Needs only Go and
# the module proxy. Prints the directory it built or found.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="${GPUGRAPH_KUBE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gpugraph-kube}"
key="$(cat "$here/apiserver/go.sum" "$here/etcd/go.sum" | sha256sum | cut -d' ' -f1)"
dir="$root/$key"

if [ -x "$dir/kube-apiserver" ] && [ -x "$dir/etcd" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$root"
# Built beside the final directory and renamed into place, so a build cut
# short never leaves a directory that looks complete.
tmp="$(mktemp -d "$root/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

echo "kube: building etcd into $dir (about a minute)" >&2
go -C "$here/etcd" build -o "$tmp/etcd" .

# kube-apiserver refuses to serve with the unstamped v0.0.0 a plain go build
# leaves, so it gets the version Kubernetes' own build stamps, read from the
# wrapper's go.mod (v1.37.2: major 1, minor 37).
version="$(go -C "$here/apiserver" list -m -f '{{.Version}}' k8s.io/kubernetes)"
major="$(echo "$version" | sed 's/^v\([0-9]*\)\..*/\1/')"
minor="$(echo "$version" | sed 's/^v[0-9]*\.\([0-9]*\)\..*/\1/')"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags="$ldflags -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
echo "kube: building kube-apiserver $version into $dir (a cold build takes 20 to 50 minutes on 2 cores, 3 GB of memory)" >&2
go -C "$here/apiserver" build -ldflags "$ldflags" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver

rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
