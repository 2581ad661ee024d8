// Kernel oracle: veth GRO (spec K-3, K-7). See kernel_oracle.hpp.
#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "ofld/lab/kernel_oracle.hpp"
#include "ofld/lab/kernel_oracle_vxlan_gro.hpp"

namespace ofld::lab {

using namespace oracle_detail;

namespace {

/// pid of the kernel thread named "napi/<dev>-<id>" (comm is cut at 15 characters).
std::vector<int> find_napi_threads(const std::string& dev) {
  std::vector<int> pids;
  std::string prefix = ("napi/" + dev + "-").substr(0, 15);
  DIR* d = ::opendir("/proc");
  if (!d) return pids;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/comm");
    std::string comm;
    if (f && std::getline(f, comm) && comm.compare(0, prefix.size(), prefix) == 0)
      pids.push_back(std::atoi(e->d_name));
  }
  ::closedir(d);
  return pids;
}

Status pin_napi(int cpu, const std::string& dev) {
  auto pids = find_napi_threads(dev);
  if (pids.empty()) return Status::skipped("no napi/" + dev + "-* kernel thread found");
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  for (int pid : pids)
    if (::sched_setaffinity(pid, sizeof set, &set) != 0)
      return Status::error("sched_setaffinity(napi thread " + std::to_string(pid) + "): " + strerror(errno));
  return io::ok_status();
}

}  // namespace

Result<KernelGro> KernelGro::create(const Options& opts) {
  using R = Result<KernelGro>;
  if (auto s = require_ethtool(); !s) return R::from(s);
  auto ns = io::Netns::create("ofld-gro");
  if (!ns) return R::from(ns);
  KernelGro g(std::move(*ns));
  g.opts_ = opts;
  const io::Netns& n = g.ns_;
  if (auto s = disable_ipv6(n); !s) return R::from(s);
  if (auto s = add_veth_pair(n, "oveth0", kVeth0Mac, "oveth1", kVeth1Mac, opts.mtu); !s)
    return R::from(s);
  if (auto s = n.exec({"ethtool", "-K", "oveth1", "gro", "on"}); !s)
    return R::skipped("cannot enable GRO on veth: " + s.message());
  // veth only hands a frame to the peer's NAPI (and so to GRO) when the sending device has
  // no TSO feature (veth_skb_is_eligible_for_gro), so TSO goes off on the sender.
  if (auto s = n.exec({"ethtool", "-K", "oveth0", "tso", "off"}); !s) return R::from(s);
  if (opts.promiscuous)
    if (auto s = n.ip({"link", "set", "oveth1", "promisc", "on"}); !s) return R::from(s);
  if (auto s = n.run([&] { return io::set_link_size_limits("oveth1", opts.sizes); }); !s)
    return R::skipped("cannot set the GRO size limits: " + s.message());
  if (auto s = n.ip({"link", "set", "oveth1", "up"}); !s) return R::from(s);
  if (auto s = n.ip({"link", "set", "oveth0", "up"}); !s) return R::from(s);
  const std::string sys = "/sys/class/net/oveth1/";
  if (opts.mode == Mode::FlushTimeout) {
    if (auto s = n.write_file(sys + "gro_flush_timeout", std::to_string(opts.gro_flush_timeout_ns)); !s)
      return R::skipped("gro_flush_timeout not settable: " + s.message());
    if (auto s = n.write_file(sys + "napi_defer_hard_irqs", "1"); !s)
      return R::skipped("napi_defer_hard_irqs not settable: " + s.message());
  } else {
    if (auto s = n.write_file(sys + "threaded", "1"); !s)
      return R::skipped("threaded NAPI not available: " + s.message());
  }

  auto tx = open_packet_socket(n, "oveth0", true);
  if (!tx) return R::from(tx);
  auto rx = open_packet_socket(n, "oveth1", true);
  if (!rx) return R::from(rx);
  g.tx_.emplace(std::move(*tx));
  g.rx_.emplace(std::move(*rx));
  return g;
}

Status KernelGro::pin_napi_thread(int cpu) { return pin_napi(cpu, "oveth1"); }

Status oracle_detail::send_burst_threaded(io::PacketSocket& tx, std::span<const Frame> burst,
                                          const std::string& napi_dev) {
  Status sent = io::ok_status();
  // Pin sender and napi thread to one CPU; the SCHED_FIFO sender keeps the CPU until the
  // whole burst sits in the veth ring, then the napi thread polls it at once (K-3 (a)).
  Status setup = io::ok_status();
  std::thread t([&] {
    int cpu = ::sched_getcpu();
    if (cpu < 0) cpu = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
      setup = Status::error("pthread_setaffinity_np failed");
      return;
    }
    if (setup = pin_napi(cpu, napi_dev); !setup) return;
    sched_param sp{};
    sp.sched_priority = 10;
    if (::pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0) {
      setup = Status::skipped("cannot switch the sender to SCHED_FIFO");
      return;
    }
    for (const Frame& f : burst) {
      const VnetHdr zero{};
      sent = tx.send(f.data, f.vnet == zero ? nullptr : &f.vnet);
      if (!sent) break;
    }
    sp.sched_priority = 0;
    ::pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
  });
  t.join();
  if (!setup) return setup;
  return sent;
}

Result<std::vector<Frame>> KernelGro::receive(std::span<const Frame> burst) {
  using R = Result<std::vector<Frame>>;
  rx_->drain();
  Status sent = io::ok_status();
  if (opts_.mode == Mode::FlushTimeout) {
    for (const Frame& f : burst) {
      const VnetHdr zero{};
      sent = tx_->send(f.data, f.vnet == zero ? nullptr : &f.vnet);
      if (!sent) break;
    }
  } else {
    sent = send_burst_threaded(*tx_, burst, "oveth1");
  }
  if (!sent) return R::from(sent);
  return collect(
      [&](int t) -> Result<std::optional<Frame>> {
        auto r = rx_->recv(t);
        if (!r) return Result<std::optional<Frame>>::from(r);
        if (!*r) return std::optional<Frame>{};
        if ((*r)->truncated) return Result<std::optional<Frame>>::error("GRO output longer than 256 KiB");
        return std::optional<Frame>(std::move((*r)->frame));
      },
      [](const Frame&) { return true; }, opts_.timing);
}

Result<std::vector<Frame>> KernelGro::receive(const std::vector<std::vector<std::uint8_t>>& burst) {
  std::vector<Frame> frames;
  frames.reserve(burst.size());
  for (const auto& b : burst) frames.push_back(Frame{VnetHdr{}, b});
  return receive(std::span<const Frame>(frames));
}

}  // namespace ofld::lab
