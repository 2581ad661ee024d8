#!/usr/bin/env bash
# Installs, with apt, whatever ofld needs to build and test that is not installed yet.
# Idempotent; does nothing (and needs no network) when everything is present.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
      libpcap-dev libssl-dev libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libtomlplusplus-dev
      libgtest-dev libgmock-dev libbenchmark-dev nftables
      tshark tcpdump iproute2 ethtool iperf3 libdpdk-dev
      sockperf gnuplot-nox   # bench/tunnel: request/response latency, PNG chart
      openvswitch-switch     # bench/tunnel: OVS userspace datapath as a peer
      fastd                  # bench/tunnel: fastd (tap, null method) as a peer
      valgrind               # bench/seeds table 2: callgrind instruction counts
      dpkg-dev groff-base    # scripts/test-install: cpack's dpkg-shlibdeps, ofld.8 check
      libsystemd-dev         # sd_notify for the systemd unit (docs/service.md)
      libcpp-httplib-dev prometheus  # metrics endpoint; promtool and a scraping Prometheus in its tests
      libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc golang-github-osrg-gobgp-dev gobgpd  # EVPN client (docs/evpn.md)
      frr                    # EVPN interop test (tests/kernel/evpn_frr_test.cpp)
      python3-venv python3-setuptools python3-pytest python3-numpy python3-dev python3-pybind11 pybind11-dev  # Python package (docs/python.md)
      golang-go abigail-tools  # C API: Go consumer, ABI baseline check (docs/c-api.md)
      )
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer no, without a prompt.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections || true
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
