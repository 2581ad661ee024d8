// Test helpers for the wire tests: hex → bytes, and reading captures with libpcap directly
// (the io/pcap module is written concurrently; these tests do not depend on it). libpcap
// refuses pcapng files whose interfaces have different snap lengths, so a minimal pcapng
// reader (SHB / IDB / EPB / SPB blocks, pcapng spec draft-ietf-opsawg-pcapng §4) is the
// fallback.
#pragma once

#include <gtest/gtest.h>
#include <pcap/pcap.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/wire/layout.hpp"

namespace wire_test {

using Bytes = std::vector<std::uint8_t>;

/// "45 00 00 1c" → bytes (spaces, newlines and '|' ignored).
inline Bytes hex(std::string_view s) {
  Bytes out;
  int hi = -1;
  for (char c : s) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else continue;
    if (hi < 0) hi = v;
    else { out.push_back(std::uint8_t(hi * 16 + v)); hi = -1; }
  }
  return out;
}

inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct Frame {
  Bytes data;
  std::uint32_t orig_len = 0;
};
struct Capture {
  ofld::wire::LinkType link = ofld::wire::LinkType::Ethernet;
  int dlt = -1;
  std::vector<Frame> frames;
  std::string error;  // non-empty when the file could not be read
};

inline bool map_dlt(int dlt, ofld::wire::LinkType& lt) {
  switch (dlt) {
    case 1: lt = ofld::wire::LinkType::Ethernet; return true;     // DLT_EN10MB
    case 12: case 14: case 101: case 228: case 229:              // DLT_RAW variants, IPV4/6
      lt = ofld::wire::LinkType::RawIp; return true;
    case 113: lt = ofld::wire::LinkType::LinuxSll; return true;
    case 276: lt = ofld::wire::LinkType::LinuxSll2; return true;
    default: return false;
  }
}

inline Capture read_pcapng(const std::string& path) {
  Capture c;
  std::ifstream f(path, std::ios::binary);
  Bytes b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto u32 = [&](std::size_t o, bool le) -> std::uint32_t {
    return le ? b[o] | b[o + 1] << 8 | b[o + 2] << 16 | std::uint32_t(b[o + 3]) << 24
              : std::uint32_t(b[o]) << 24 | b[o + 1] << 16 | b[o + 2] << 8 | b[o + 3];
  };
  bool le = true;
  std::vector<int> if_dlt;
  std::size_t o = 0;
  while (o + 12 <= b.size()) {
    std::uint32_t type = u32(o, le);
    if (type == 0x0A0D0D0A) le = u32(o + 8, true) == 0x1A2B3C4D;
    std::uint32_t len = u32(o + 4, le);
    if (len < 12 || o + len > b.size()) { c.error = "pcapng: bad block length"; break; }
    if (type == 1) {
      std::uint16_t lt = le ? std::uint16_t(b[o + 8] | b[o + 9] << 8)
                            : std::uint16_t(b[o + 8] << 8 | b[o + 9]);
      if_dlt.push_back(lt);
    } else if (type == 6 && len >= 32) {
      std::uint32_t ifid = u32(o + 8, le), cap = u32(o + 20, le), orig = u32(o + 24, le);
      if (ifid < if_dlt.size() && 28 + cap <= len) {
        c.dlt = if_dlt[ifid];
        c.frames.push_back({Bytes(b.begin() + o + 28, b.begin() + o + 28 + cap), orig});
      }
    }
    o += len;
  }
  if (c.dlt >= 0 && !map_dlt(c.dlt, c.link)) c.error = "unsupported dlt";
  return c;
}

/// Read every frame of a pcap/pcapng file.
inline Capture read_capture(const std::string& path) {
  Capture c;
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (!p) {
    c.error = err;
    return c;
  }
  c.dlt = pcap_datalink(p);
  if (!map_dlt(c.dlt, c.link)) c.error = "unsupported dlt " + std::to_string(c.dlt);
  pcap_pkthdr* h;
  const u_char* d;
  int rc;
  while ((rc = pcap_next_ex(p, &h, &d)) == 1) c.frames.push_back({Bytes(d, d + h->caplen), h->len});
  if (rc == PCAP_ERROR) {
    std::string e = pcap_geterr(p);
    pcap_close(p);
    if (c.frames.empty()) return read_pcapng(path);  // e.g. per-interface snaplen mismatch
    c.error = e;
    return c;
  }
  pcap_close(p);
  return c;
}

inline std::string pcap_path(const std::string& name) {
  return std::string(OFLD_PCAP_DIR) + "/" + name;
}

/// Parse every strict prefix of `b` (shorter than `need`) from an exactly-sized heap copy (so
/// ASan flags any over-read) and require an error value each time.
template <class Parse>
void expect_truncation_errors(const Bytes& b, std::size_t need, Parse parse) {
  for (std::size_t n = 0; n < need; ++n) {
    Bytes cut(b.begin(), b.begin() + n);
    EXPECT_FALSE(parse(std::span<const std::uint8_t>(cut)).ok()) << "prefix " << n;
  }
}

}  // namespace wire_test
