// Private to src/io: a small pcapng reader used when libpcap refuses a valid pcapng file
// (libpcap 1.10 rejects sections whose interfaces have different snapshot lengths, e.g.
// PcapPlusPlus's GrePackets.pcap). Format: IETF draft-ietf-opsawg-pcapng (SHB 0x0A0D0D0A,
// IDB 1, EPB 6, SPB 3, obsolete Packet Block 2; other blocks are skipped).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "ofld/io/pcap.hpp"

namespace ofld::io::detail {

/// True if the file starts with the pcapng Section Header Block type.
bool is_pcapng_file(const std::string& path);

class PcapngReader {
 public:
  /// Throws PcapError if the file cannot be opened or does not start with an SHB.
  explicit PcapngReader(const std::string& path);

  /// Next packet record; false at end of file. Throws PcapError on a malformed block, an
  /// interface with an unsupported link type, or one whose link type differs from the first.
  bool next(PcapRecord& out);

  /// Link type of the first interface (reads blocks up to the first IDB).
  int first_dlt();
  std::uint32_t first_snaplen();

 private:
  struct Iface {
    int dlt = 0;
    std::uint32_t snaplen = 0;
    std::uint64_t units_per_sec = 1000000;  // if_tsresol, default microseconds
    std::int64_t ts_offset = 0;             // if_tsoffset, seconds
  };
  bool read_block(std::uint32_t& type, std::vector<std::uint8_t>& body);
  std::uint32_t u32(const std::uint8_t* p) const noexcept;
  std::uint16_t u16(const std::uint8_t* p) const noexcept;
  void handle_shb(const std::vector<std::uint8_t>& body);
  void handle_idb(const std::vector<std::uint8_t>& body);
  void fill(PcapRecord& out, const Iface& ifc, std::uint64_t ts, std::uint32_t caplen,
            std::uint32_t len, const std::uint8_t* data);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::ifstream in_;
  bool big_endian_ = false;
  std::vector<Iface> ifaces_;
  int first_dlt_ = -1;
  std::uint32_t first_snaplen_ = 0;
  std::uint64_t blocks_ = 0;
  // A packet block read while looking for the first IDB, delivered by the next next().
  bool have_pending_ = false;
  PcapRecord pending_;
};

}  // namespace ofld::io::detail
