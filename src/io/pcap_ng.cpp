// Minimal pcapng reader (see pcap_ng.hpp); used only when libpcap refuses a pcapng file.
#include "pcap_ng.hpp"

#include <pcap/dlt.h>

#include <cstring>

namespace ofld::io::detail {

namespace {
constexpr std::uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kOpb = 2, kSpb = 3, kEpb = 6;
constexpr std::uint32_t kByteOrderMagic = 0x1A2B3C4D;
constexpr std::uint32_t kMaxBlock = 64u << 20;  // refuse absurd block lengths (64 MiB)
constexpr std::uint16_t kOptEnd = 0, kOptTsresol = 9, kOptTsoffset = 14;
}  // namespace

bool is_pcapng_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::uint8_t m[4] = {};
  if (!f.read(reinterpret_cast<char*>(m), 4)) return false;
  return m[0] == 0x0A && m[1] == 0x0D && m[2] == 0x0D && m[3] == 0x0A;
}

PcapngReader::PcapngReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
  if (!in_) fail("cannot open");
  if (!is_pcapng_file(path)) fail("not a pcapng file");
}

void PcapngReader::fail(const std::string& what) const {
  throw PcapError("capture '" + path_ + "' (pcapng): " + what);
}

std::uint32_t PcapngReader::u32(const std::uint8_t* p) const noexcept {
  return big_endian_ ? (std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 |
                        std::uint32_t(p[2]) << 8 | p[3])
                     : (std::uint32_t(p[3]) << 24 | std::uint32_t(p[2]) << 16 |
                        std::uint32_t(p[1]) << 8 | p[0]);
}
std::uint16_t PcapngReader::u16(const std::uint8_t* p) const noexcept {
  return big_endian_ ? std::uint16_t(p[0] << 8 | p[1]) : std::uint16_t(p[1] << 8 | p[0]);
}

bool PcapngReader::read_block(std::uint32_t& type, std::vector<std::uint8_t>& body) {
  std::uint8_t hdr[8];
  in_.read(reinterpret_cast<char*>(hdr), 8);
  if (in_.gcount() == 0 && in_.eof()) return false;
  if (in_.gcount() != 8) fail("truncated block header at block " + std::to_string(blocks_ + 1));
  // The SHB's own byte-order magic decides the endianness of the section.
  if (hdr[0] == 0x0A && hdr[1] == 0x0D && hdr[2] == 0x0D && hdr[3] == 0x0A) {
    std::uint8_t bom[4];
    if (!in_.read(reinterpret_cast<char*>(bom), 4)) fail("truncated section header");
    if (bom[0] == 0x1A && bom[1] == 0x2B && bom[2] == 0x3C && bom[3] == 0x4D) big_endian_ = true;
    else if (bom[3] == 0x1A && bom[2] == 0x2B && bom[1] == 0x3C && bom[0] == 0x4D) big_endian_ = false;
    else fail("bad byte-order magic");
    in_.seekg(-4, std::ios::cur);
  }
  type = u32(hdr);
  std::uint32_t total = u32(hdr + 4);
  if (total < 12 || total % 4 != 0 || total > kMaxBlock)
    fail("bad block length " + std::to_string(total) + " at block " + std::to_string(blocks_ + 1));
  body.resize(total - 12);
  if (!in_.read(reinterpret_cast<char*>(body.data()), std::streamsize(body.size())))
    fail("truncated block " + std::to_string(blocks_ + 1));
  std::uint8_t trailer[4];
  if (!in_.read(reinterpret_cast<char*>(trailer), 4) || u32(trailer) != total)
    fail("block " + std::to_string(blocks_ + 1) + " has a bad trailing length");
  ++blocks_;
  return true;
}

void PcapngReader::handle_shb(const std::vector<std::uint8_t>& body) {
  if (body.size() < 16 || u32(body.data()) != kByteOrderMagic) fail("malformed section header");
  ifaces_.clear();  // interface ids are per section
}

void PcapngReader::handle_idb(const std::vector<std::uint8_t>& body) {
  if (body.size() < 8) fail("malformed interface description block");
  Iface ifc;
  // The IDB holds a LINKTYPE_* value (pcapng spec §4.2); the link mapping takes DLT_* values.
  // They are equal except for raw IP: LINKTYPE_RAW 101 is DLT_RAW (12 or 14 by platform).
  const std::uint16_t linktype = u16(body.data());
  ifc.dlt = linktype == 101 ? DLT_RAW : linktype;
  ifc.snaplen = u32(body.data() + 4);
  std::size_t i = 8;
  while (i + 4 <= body.size()) {
    std::uint16_t code = u16(&body[i]), len = u16(&body[i + 2]);
    i += 4;
    if (code == kOptEnd || i + len > body.size()) break;
    if (code == kOptTsresol && len >= 1) {
      std::uint8_t r = body[i];
      std::uint64_t u = 1;
      if (r & 0x80) {
        unsigned e = r & 0x7f;
        if (e > 63) fail("if_tsresol 2^-" + std::to_string(e) + " not supported");
        u = std::uint64_t(1) << e;
      } else {
        if (r > 19) fail("if_tsresol 10^-" + std::to_string(r) + " not supported");
        for (unsigned k = 0; k < r; ++k) u *= 10;
      }
      ifc.units_per_sec = u;
    } else if (code == kOptTsoffset && len >= 8) {
      std::uint64_t v = big_endian_ ? (std::uint64_t(u32(&body[i])) << 32 | u32(&body[i + 4]))
                                    : (std::uint64_t(u32(&body[i + 4])) << 32 | u32(&body[i]));
      ifc.ts_offset = std::int64_t(v);
    }
    i += (len + 3u) & ~3u;
  }
  auto link = capture_link_from_dlt(ifc.dlt);
  if (!link)
    fail("interface " + std::to_string(ifaces_.size()) + ": unsupported link type DLT " +
         std::to_string(ifc.dlt));
  if (first_dlt_ < 0) {
    first_dlt_ = ifc.dlt;
    first_snaplen_ = ifc.snaplen;
  } else if (capture_link_from_dlt(first_dlt_) != link) {
    fail("interface " + std::to_string(ifaces_.size()) + " has link type DLT " +
         std::to_string(ifc.dlt) + ", different from the first interface's DLT " +
         std::to_string(first_dlt_));
  }
  ifaces_.push_back(ifc);
}

void PcapngReader::fill(PcapRecord& out, const Iface& ifc, std::uint64_t ts, std::uint32_t caplen,
                        std::uint32_t len, const std::uint8_t* data) {
  std::uint64_t sec = ts / ifc.units_per_sec, rem = ts % ifc.units_per_sec;
  out.ts_sec = std::int64_t(sec) + ifc.ts_offset;
  out.ts_nsec = std::uint32_t((unsigned __int128)rem * 1000000000u / ifc.units_per_sec);
  out.caplen = caplen;
  out.len = len < caplen ? caplen : len;
  out.data.assign(data, data + caplen);
}

bool PcapngReader::next(PcapRecord& out) {
  if (have_pending_) {
    have_pending_ = false;
    out = std::move(pending_);
    return true;
  }
  std::uint32_t type = 0;
  std::vector<std::uint8_t> b;
  while (read_block(type, b)) {
    switch (type) {
      case kShb: handle_shb(b); break;
      case kIdb: handle_idb(b); break;
      case kEpb: {
        if (b.size() < 20) fail("malformed enhanced packet block");
        std::uint32_t id = u32(&b[0]);
        if (id >= ifaces_.size()) fail("packet for undeclared interface " + std::to_string(id));
        std::uint64_t ts = std::uint64_t(u32(&b[4])) << 32 | u32(&b[8]);
        std::uint32_t cap = u32(&b[12]), len = u32(&b[16]);
        if (cap > b.size() - 20) fail("enhanced packet block data past the block end");
        fill(out, ifaces_[id], ts, cap, len, &b[20]);
        return true;
      }
      case kOpb: {
        if (b.size() < 20) fail("malformed packet block");
        std::uint32_t id = u16(&b[0]);
        if (id >= ifaces_.size()) fail("packet for undeclared interface " + std::to_string(id));
        std::uint64_t ts = std::uint64_t(u32(&b[4])) << 32 | u32(&b[8]);
        std::uint32_t cap = u32(&b[12]), len = u32(&b[16]);
        if (cap > b.size() - 20) fail("packet block data past the block end");
        fill(out, ifaces_[id], ts, cap, len, &b[20]);
        return true;
      }
      case kSpb: {
        if (b.size() < 4) fail("malformed simple packet block");
        if (ifaces_.empty()) fail("simple packet block before any interface");
        std::uint32_t len = u32(&b[0]);
        std::uint32_t cap = std::uint32_t(b.size() - 4);
        if (len < cap) cap = len;
        if (ifaces_[0].snaplen && cap > ifaces_[0].snaplen) cap = ifaces_[0].snaplen;
        fill(out, ifaces_[0], 0, cap, len, &b[4]);
        return true;
      }
      default: break;  // NRB, ISB, DSB, custom blocks: not needed
    }
  }
  return false;
}

int PcapngReader::first_dlt() {
  if (first_dlt_ < 0 && !have_pending_) {
    PcapRecord r;
    if (next(r)) {  // the first packet needs an IDB before it; keep it for the next next()
      pending_ = std::move(r);
      have_pending_ = true;
    }
  }
  if (first_dlt_ < 0) fail("no interface description block");
  return first_dlt_;
}

std::uint32_t PcapngReader::first_snaplen() {
  first_dlt();
  return first_snaplen_;
}

}  // namespace ofld::io::detail
