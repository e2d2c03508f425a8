#!/bin/sh
# Installs what the local sandbox engine (packages/engine) needs on a Debian/Ubuntu host.
# Idempotent and noninteractive; for CI and for `tarmac up` hosts. Needs root.
#   runc        the OCI runtime
#   iproute2    bridge, veth, netns (ip -batch)
#   iptables    firewall between sandboxes and the host
#   nftables    nft: pins each sandbox's bridge port to its MAC and IPv4 address and drops IPv6 from
#               the bridge (packages/engine/src/port-filter.ts, issue 19 items 3 and 4)
#   tini        tini-static is the PID 1 injected into every sandbox
#   busybox-static  the static busybox whose shell restarts sandboxd if it dies (issue 19 item 6)
#   mmdebstrap  builds the base image tarmac/base:latest from Debian packages
#   e2fsprogs   mkfs.ext4 for size-limited volumes
#   umoci       unpacks imported image layers (whiteouts, every path kept inside the rootfs)
#   buildah     builds uploaded code into images (issue 15; planes/builds), rootful, RUN steps in runc
#   wireguard-go, wireguard-tools   sandbox tunnels (PUT /network/tunnel/config): the kernel may have
#               no wireguard module, so the userspace daemon (apps/platform/src/planes/sandbox/tunnel/wireguard.ts)
#   tar, mount, util-linux (losetup behind mount -o loop) are in every Debian base system.
set -eu

PACKAGES="runc iproute2 iptables nftables tini busybox-static mmdebstrap e2fsprogs umoci wireguard-go wireguard-tools buildah"

if [ "$(id -u)" -ne 0 ]; then
  echo "engine-install: must run as root" >&2
  exit 1
fi

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done

if [ -n "$missing" ]; then
  echo "engine-install: installing$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing
else
  echo "engine-install: all present ($PACKAGES)"
fi

# The overlay and loop drivers are built in or loaded on demand; fail early if they are absent.
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || {
  echo "engine-install: overlayfs not available in this kernel" >&2
  exit 1
}
runc --version | head -1
