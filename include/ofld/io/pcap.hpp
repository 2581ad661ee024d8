// ofld/io/pcap.hpp — reading and writing capture files through libpcap.
//
// Reader: pcap and pcapng (libpcap's pcap_open_offline recognises both), nanosecond
// timestamps preserved. Writer: classic pcap (pcap_open_dead + pcap_dump_open).
// Supported link types: Ethernet (DLT_EN10MB), Linux cooked SLL (DLT_LINUX_SLL) and SLL2
// (DLT_LINUX_SLL2), raw IP (DLT_RAW = LINKTYPE_RAW 101, DLT_IPV4 228, DLT_IPV6 229).
//
// Errors: opening/creating a file, an unsupported link type, or a corrupt record header is
// reported by throwing PcapError with a message naming the file and the cause (these are
// set-up/file-format errors, not per-packet hot-path decisions). Everything is RAII: the
// pcap_t / pcap_dumper_t handles are closed by the destructors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ofld/wire/layout.hpp"

namespace ofld::io {

/// Thrown for file open/create failures, unsupported link types and unreadable records.
class PcapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The link-layer framing of a capture, reduced to what ofld decodes.
/// (libpcap DLT_* values, see pcap/dlt.h and https://www.tcpdump.org/linktypes.html)
enum class CaptureLink : std::uint8_t {
  Ethernet,   ///< DLT_EN10MB: 14-byte Ethernet header (+ optional 802.1Q tags)
  LinuxSll,   ///< DLT_LINUX_SLL: 16-byte Linux cooked header, protocol at bytes 14..15
  LinuxSll2,  ///< DLT_LINUX_SLL2: 20-byte Linux cooked v2 header, protocol at bytes 0..1
  RawIp,      ///< DLT_RAW / LINKTYPE_RAW: IPv4 or IPv6 by the version nibble
  Ipv4,       ///< DLT_IPV4: IPv4 only
  Ipv6,       ///< DLT_IPV6: IPv6 only
};

/// Map a libpcap data-link type (pcap_datalink()) to CaptureLink; nullopt if unsupported.
std::optional<CaptureLink> capture_link_from_dlt(int dlt) noexcept;
/// The DLT value to hand to pcap_open_dead for `link` (DLT_RAW for RawIp, which libpcap
/// writes as LINKTYPE_RAW 101).
int dlt_from_capture_link(CaptureLink link) noexcept;
/// The framing wire::parse_frame expects for `link` (DLT_IPV4/DLT_IPV6 → RawIp).
wire::LinkType to_wire_link(CaptureLink link) noexcept;
/// Short name: "EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "IPV4", "IPV6".
const char* capture_link_name(CaptureLink link) noexcept;

/// Timestamp precision of a capture file.
enum class TsPrecision : std::uint8_t { Micro, Nano };

/// One captured frame. `caplen == data.size()`; `len` is the original length on the wire
/// (len > caplen means the capture was truncated by the snap length).
struct PcapRecord {
  std::int64_t ts_sec = 0;
  std::uint32_t ts_nsec = 0;  ///< nanoseconds within the second (micro files: usec × 1000)
  std::uint32_t caplen = 0;   ///< bytes captured (== data.size())
  std::uint32_t len = 0;      ///< original frame length in bytes
  std::vector<std::uint8_t> data;

  bool truncated() const noexcept { return caplen < len; }
  std::span<const std::uint8_t> bytes() const noexcept { return {data.data(), data.size()}; }
  friend bool operator==(const PcapRecord&, const PcapRecord&) = default;
};

/// Sequential reader of a pcap or pcapng file.
class PcapReader {
 public:
  /// Open `path`. Throws PcapError if the file cannot be opened/parsed by libpcap or its
  /// link type is not one of the supported ones (the message names the DLT).
  explicit PcapReader(const std::string& path);
  ~PcapReader();
  PcapReader(PcapReader&&) noexcept;
  PcapReader& operator=(PcapReader&&) noexcept;
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  /// Read the next record into `out`. Returns false at end of file. Throws PcapError if a
  /// record cannot be read (truncated/corrupt file); the message names the file and record.
  bool next(PcapRecord& out);

  CaptureLink link() const noexcept;
  int dlt() const noexcept;                 ///< libpcap data-link type
  std::uint32_t snaplen() const noexcept;   ///< snapshot length from the file header
  TsPrecision precision() const noexcept;   ///< precision the reader delivers (always Nano)
  const std::string& path() const noexcept;
  std::uint64_t records_read() const noexcept;
  /// Non-empty when the file ended inside a record (a capture cut short, as tshark calls it):
  /// next() then returned false after the last complete record, and this says where and why.
  /// Callers that write results must report it; read_pcap() throws instead.
  const std::string& cut_short() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Read a whole file. Throws PcapError as PcapReader does.
struct PcapFile {
  CaptureLink link = CaptureLink::Ethernet;
  std::uint32_t snaplen = 0;
  std::vector<PcapRecord> records;
};
/// Whole-file read. Throws PcapError on any error, including a file cut short mid-record.
PcapFile read_pcap(const std::string& path);

/// Throws PcapError when `out` names the same file as `in` (same device and inode, so also
/// through links): a writer truncates its file before the reader has read it.
void refuse_same_file(const std::string& in, const std::string& out);

/// Writer of a classic pcap file with nanosecond timestamps.
class PcapWriter {
 public:
  /// Largest snapshot length libpcap reads back for these link types (MAXIMUM_SNAPLEN);
  /// large enough for 64 KB TSO and BIG TCP frames up to 256 KiB.
  static constexpr std::uint32_t kDefaultSnaplen = 262144;

  /// Create/truncate `path`. Throws PcapError if it cannot be created.
  PcapWriter(const std::string& path, CaptureLink link, std::uint32_t snaplen = kDefaultSnaplen);
  ~PcapWriter();  ///< flushes and closes
  PcapWriter(PcapWriter&&) noexcept;
  PcapWriter& operator=(PcapWriter&&) noexcept;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  /// Append one record. Throws PcapError if rec.data.size() != rec.caplen, caplen > len,
  /// caplen exceeds the snap length (libpcap would truncate it on read-back), or the write
  /// fails.
  void write(const PcapRecord& rec);
  /// Flush and close now (the destructor does it otherwise). Throws PcapError on failure.
  void close();

  std::uint64_t records_written() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ofld::io
