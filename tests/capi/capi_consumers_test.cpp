// Consumers of the C API built and run from the tree: the C11 example (compiled with the
// system C compiler in strict C11 mode against include/ofld/ofld.h and the built libofld.so)
// and the Go program (cgo) doing wireguard-go's offload job, whose output must equal, byte
// for byte, what the C++ engines give for the same input. Skipped with a message where the
// tool chain (cc, go) is missing.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/bytes.hpp"
#include "../common/frame_builder.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
namespace fs = std::filesystem;

bool have(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}
int run(const std::string& cmd, std::string* out = nullptr) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::string s;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) s.append(buf, n);
  const int st = pclose(p);
  if (out) *out = s;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
Bytes read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}
void write_file(const fs::path& p, const Bytes& b) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
void append_record(Bytes& out, const Bytes& b) {
  std::uint8_t n[4];
  ofld::wire::store_be32(n, std::uint32_t(b.size()));
  out.insert(out.end(), n, n + 4);
  out.insert(out.end(), b.begin(), b.end());
}

struct TmpDir {
  fs::path p;
  TmpDir() {
    char t[] = "/tmp/ofld-capi-consumer.XXXXXX";
    p = mkdtemp(t);
  }
  ~TmpDir() { fs::remove_all(p); }
};

const std::string kSrc = OFLD_SOURCE_DIR;
const std::string kLibDir = OFLD_SHARED_LIB_DIR;

#ifdef OFLD_CAPI_SANITIZED
#define SKIP_IF_SANITIZED() GTEST_SKIP() << "sanitizer build: consumers run in the release build"
#else
#define SKIP_IF_SANITIZED() (void)0
#endif

TEST(CApiConsumers, CProgramBuildsAsC11AndRuns) {
  SKIP_IF_SANITIZED();
  if (!have("cc")) GTEST_SKIP() << "no C compiler (cc): C consumer not built";
  TmpDir d;
  const std::string exe = (d.p / "offload_c").string();
  std::string log;
  ASSERT_EQ(run("cc -std=c11 -Wall -Wextra -Werror -pedantic -I" + kSrc + "/include " + kSrc +
                    "/examples/c/offload_c.c -o " + exe + " -L" + kLibDir + " -lofld -Wl,-rpath," +
                    kLibDir,
                &log),
            0)
      << log;
  const std::string cap = kSrc + "/tests/data/pcaps/zeek_http-post-large.pcap";
  ASSERT_EQ(run(exe + " " + cap + " 1000 " + (d.p / "seg.pcap").string(), &log), 0) << log;
  EXPECT_NE(log.find("payload 64000 bytes intact"), std::string::npos) << log;
  // The same capture through the command: the segment count agrees.
  std::string js;
  ASSERT_EQ(run(std::string(OFLD_CLI_PATH) + " gso " + cap + " -o " + (d.p / "seg2.pcap").string() +
                    " --mss 1000 --json",
                &js),
            0);
  const auto at = js.find("\"segments\": ");
  ASSERT_NE(at, std::string::npos) << js;
  const std::string segs = js.substr(at + 12, js.find_first_not_of("0123456789", at + 12) - at - 12);
  EXPECT_NE(log.find("gso_segments " + segs + "\n"), std::string::npos) << log << js;
}

TEST(CApiConsumers, GoOffloadJobMatchesCppEnginesByteForByte) {
  SKIP_IF_SANITIZED();
  if (!have("go")) GTEST_SKIP() << "no Go tool chain (Debian golang-go): Go consumer not built";
  TmpDir d;
  // 1. A TSO read from a TAP: virtio_net_hdr (LE) + a TCPv4 super-frame of 64000 bytes.
  ofld::fb::gso::TcpSpec s;
  s.payload = 64000;
  const Bytes frame = ofld::fb::gso::tcp_frame(s);
  ofld::gso::PrepareOptions po;
  po.gso_size = 1448;
  auto layout = ofld::wire::parse_frame(frame, ofld::wire::LinkType::Ethernet, {});
  ASSERT_TRUE(layout.ok());
  auto pr = ofld::gso::prepare_frame(frame, layout.value(), po);
  ASSERT_EQ(pr.status, ofld::gso::PrepareStatus::Gso);
  const auto h = ofld::offload::virtio::from_packet(pr.pkt, true);
  ASSERT_TRUE(h);
  const Bytes seeded = pr.pkt.to_bytes();
  Bytes tso(10);
  h->store(tso.data(), true);
  tso.insert(tso.end(), seeded.begin(), seeded.end());
  write_file(d.p / "tso.bin", tso);
  // Expected: the C++ engine as a TAP write would set it up, no device features (full sums).
  Bytes split_want;
  {
    auto tp = ofld::offload::virtio::to_packet(*h, seeded);
    ASSERT_TRUE(tp.ok());
    ofld::core::Device dev;
    auto tx = ofld::gso::tx_prepare(std::move(tp.pkt), dev);
    ASSERT_FALSE(tx.dropped());
    ASSERT_EQ(tx.out.size(), 45u);
    for (auto& seg : tx.out) append_record(split_want, seg.to_bytes());
  }
  // 2. Received IP packets (a TUN): two interleaved TCP flows of 20 segments each, one
  // UDP datagram between them, and a segment with PSH that ends its flow's aggregate.
  std::vector<Bytes> rx;
  for (int i = 0; i < 20; ++i)
    for (std::uint8_t flow : {1, 2}) {
      ofld::fb::gro::Tcp t;
      t.payload = 1200;
      t.seq_off = std::uint32_t(i * 1200);
      t.src_last = flow;
      if (i == 12 && flow == 2) t.flags |= 0x08;  // PSH (T-17)
      Bytes b = ofld::fb::gro::tcp_frame(t);
      rx.emplace_back(b.begin() + 14, b.end());
    }
  {
    Bytes u = ofld::fb::gro::udp_frame(false, 300);
    rx.insert(rx.begin() + 7, Bytes(u.begin() + 14, u.end()));
  }
  Bytes rx_file;
  for (const auto& b : rx) append_record(rx_file, b);
  write_file(d.p / "rx.bin", rx_file);
  Bytes coalesced_want;
  {
    ofld::gro::EngineOptions eo;
    eo.link = ofld::gro::LinkLayer::RawIp;
    eo.config.flow_hash_key = 0;
    eo.gso_types = ofld::offload::virtio::kGsoTypes;
    ofld::gro::Engine e(eo);
    std::vector<ofld::core::Packet> batch;
    for (const auto& b : rx) batch.push_back(ofld::core::Packet::from_bytes(b));
    e.receive_batch(batch, 0);
    e.poll_end(0);
    e.flush_all();
    for (auto& p : e.output()) {
      auto vh = ofld::offload::virtio::from_packet(p, true);
      ASSERT_TRUE(vh);
      Bytes w(10);
      vh->store(w.data(), true);
      const Bytes fb = p.to_bytes();
      w.insert(w.end(), fb.begin(), fb.end());
      append_record(coalesced_want, w);
    }
    ASSERT_LT(e.output().size(), rx.size());  // something was coalesced
  }
  // Build and run the Go program against the tree's header and library (no network).
  const std::string env = "cd " + kSrc + "/examples/go/offload && GOPROXY=off GOFLAGS=-mod=mod " +
                          "GOCACHE=/tmp/ofld-capi-gocache GOPATH=" + (d.p / "gopath").string() +
                          " CGO_ENABLED=1 CGO_CFLAGS=-I" + kSrc + "/include CGO_LDFLAGS='-L" +
                          kLibDir + " -Wl,-rpath," + kLibDir + "' ";
  std::string log;
  ASSERT_EQ(run(env + "go build -o " + (d.p / "offload").string() + " .", &log), 0) << log;
  ASSERT_EQ(run((d.p / "offload").string() + " " + d.p.string(), &log), 0) << log;
  EXPECT_EQ(read_file(d.p / "split.go.out"), split_want) << log;
  EXPECT_EQ(read_file(d.p / "coalesced.go.out"), coalesced_want) << log;
}

}  // namespace
