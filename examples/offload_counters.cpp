// A program that uses the installed libofld: read a capture, segment every TCP/UDP frame whose
// payload exceeds the MSS with software GSO (as a device without offloads is handed it), run
// GRO over the segments, and print the counters of both.
//
//   offload_counters CAPTURE [MSS]        (MSS default 1000)
//
// Built against the installed tree only: CMakeLists.txt (find_package(ofld CONFIG)) or
// Makefile (pkg-config ofld).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <ofld/core/features.hpp>
#include <ofld/core/packet.hpp>
#include <ofld/gro/engine.hpp>
#include <ofld/gso/gso.hpp>
#include <ofld/io/pcap.hpp>
#include <ofld/version.hpp>
#include <ofld/wire/layout.hpp>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s CAPTURE [MSS]\n", argv[0]);
    return 2;
  }
  const std::uint16_t mss = argc == 3 ? std::uint16_t(std::atoi(argv[2])) : 1000;
  if (mss == 0 || mss == 0xFFFF) {
    std::fprintf(stderr, "MSS must be in 1..65534\n");
    return 2;
  }
  try {
    ofld::io::PcapReader rd(argv[1]);
    const ofld::core::Device dev{};  // no features: every segment's checksum is completed
    ofld::gso::GsoCounters gso_counters;
    ofld::gso::PrepareOptions prep;
    prep.gso_size = mss;
    ofld::gro::EngineOptions eo;
    eo.batch = 64;  // a NAPI poll of 64 packets, then a flush
    ofld::gro::Engine gro(eo);

    std::uint64_t frames = 0, passed = 0, dropped = 0, segments = 0;
    ofld::io::PcapRecord rec;
    while (rd.next(rec)) {
      ++frames;
      std::vector<ofld::core::Packet> out;
      auto layout = ofld::wire::parse_frame(rec.bytes(), ofld::io::to_wire_link(rd.link()), {});
      if (rec.truncated() || !layout) {
        ++passed;
        out.push_back(ofld::core::Packet::from_bytes(rec.bytes()));
      } else {
        auto pr = ofld::gso::prepare_frame(rec.bytes(), layout.value(), prep);
        if (pr.status == ofld::gso::PrepareStatus::PassThrough) {
          ++passed;
          out.push_back(ofld::core::Packet::from_bytes(rec.bytes()));
        } else {
          auto tx = ofld::gso::tx_prepare(std::move(pr.pkt), dev, &gso_counters);
          if (tx.dropped()) {
            ++dropped;
            continue;
          }
          segments += tx.out.size();
          out = std::move(tx.out);
        }
      }
      // What the wire carries goes to GRO as a receiving NIC would hand it up.
      if (rd.link() != ofld::io::CaptureLink::Ethernet) continue;
      for (auto& p : out) gro.receive(ofld::core::Packet::from_bytes(p.to_bytes()));
    }
    gro.flush_all();
    const auto& g = gro.counters();
    std::printf("libofld %s\n", ofld::version());
    std::printf("frames %llu passed %llu dropped %llu gso_segments %llu\n",
                (unsigned long long)frames, (unsigned long long)passed,
                (unsigned long long)dropped, (unsigned long long)segments);
    std::printf("gso packets_in %llu packets_segmented %llu segments_out %llu\n",
                (unsigned long long)gso_counters.packets_in,
                (unsigned long long)gso_counters.packets_segmented,
                (unsigned long long)gso_counters.segments_out);
    std::printf("gro packets_in %llu merged %llu held %llu aggregates %llu singles %llu "
                "frames_out %zu\n",
                (unsigned long long)g.packets_in, (unsigned long long)g.merged,
                (unsigned long long)g.held, (unsigned long long)g.aggregates,
                (unsigned long long)g.singles, gro.output().size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[1], e.what());
    return 2;
  }
}
