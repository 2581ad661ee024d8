// Capture files through libpcap (see include/ofld/io/pcap.hpp).
#include "ofld/io/pcap.hpp"

#include <sys/stat.h>

#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "pcap_ng.hpp"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

namespace ofld::io {

std::optional<CaptureLink> capture_link_from_dlt(int dlt) noexcept {
  switch (dlt) {
    case DLT_EN10MB: return CaptureLink::Ethernet;
    case DLT_LINUX_SLL: return CaptureLink::LinuxSll;
    case DLT_LINUX_SLL2: return CaptureLink::LinuxSll2;
    case DLT_RAW: return CaptureLink::RawIp;
    case DLT_IPV4: return CaptureLink::Ipv4;
    case DLT_IPV6: return CaptureLink::Ipv6;
    default: break;
  }
#if DLT_RAW != 12
  if (dlt == 12) return CaptureLink::RawIp;  // BSD/Linux value variants of "raw IP"
#endif
#if DLT_RAW != 14
  if (dlt == 14) return CaptureLink::RawIp;
#endif
  return std::nullopt;
}

int dlt_from_capture_link(CaptureLink link) noexcept {
  switch (link) {
    case CaptureLink::Ethernet: return DLT_EN10MB;
    case CaptureLink::LinuxSll: return DLT_LINUX_SLL;
    case CaptureLink::LinuxSll2: return DLT_LINUX_SLL2;
    case CaptureLink::RawIp: return DLT_RAW;
    case CaptureLink::Ipv4: return DLT_IPV4;
    case CaptureLink::Ipv6: return DLT_IPV6;
  }
  return DLT_EN10MB;
}

wire::LinkType to_wire_link(CaptureLink link) noexcept {
  switch (link) {
    case CaptureLink::Ethernet: return wire::LinkType::Ethernet;
    case CaptureLink::LinuxSll: return wire::LinkType::LinuxSll;
    case CaptureLink::LinuxSll2: return wire::LinkType::LinuxSll2;
    case CaptureLink::RawIp:
    case CaptureLink::Ipv4:
    case CaptureLink::Ipv6: return wire::LinkType::RawIp;
  }
  return wire::LinkType::Ethernet;
}

const char* capture_link_name(CaptureLink link) noexcept {
  switch (link) {
    case CaptureLink::Ethernet: return "EN10MB";
    case CaptureLink::LinuxSll: return "LINUX_SLL";
    case CaptureLink::LinuxSll2: return "LINUX_SLL2";
    case CaptureLink::RawIp: return "RAW";
    case CaptureLink::Ipv4: return "IPV4";
    case CaptureLink::Ipv6: return "IPV6";
  }
  return "?";
}

namespace {
struct PcapCloser {
  void operator()(pcap_t* p) const noexcept { pcap_close(p); }
};
struct DumperCloser {
  void operator()(pcap_dumper_t* d) const noexcept { pcap_dump_close(d); }
};
using PcapHandle = std::unique_ptr<pcap_t, PcapCloser>;
using DumperHandle = std::unique_ptr<pcap_dumper_t, DumperCloser>;

std::string dlt_description(int dlt) {
  const char* name = pcap_datalink_val_to_name(dlt);
  const char* desc = pcap_datalink_val_to_description(dlt);
  std::string s = "DLT " + std::to_string(dlt);
  if (name) s += std::string(" (DLT_") + name + (desc ? std::string(", ") + desc : "") + ")";
  return s;
}
}  // namespace

// ---- reader -------------------------------------------------------------------------------

struct PcapReader::Impl {
  std::string path;
  PcapHandle handle;
  // Fallback for valid pcapng files libpcap refuses (e.g. interfaces with different snap
  // lengths in one section); see pcap_ng.hpp.
  std::unique_ptr<detail::PcapngReader> ng;
  CaptureLink link = CaptureLink::Ethernet;
  int dlt = 0;
  std::uint32_t snaplen = 0;
  std::uint64_t count = 0;
  std::string cut_short;  // see PcapReader::cut_short()
};

PcapReader::PcapReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (p) {
    impl_->handle.reset(p);
    impl_->dlt = pcap_datalink(p);
    int snap = pcap_snapshot(p);
    impl_->snaplen = snap > 0 ? std::uint32_t(snap) : 0;
  } else if (detail::is_pcapng_file(path)) {
    std::string why = errbuf;
    try {
      impl_->ng = std::make_unique<detail::PcapngReader>(path);
      impl_->dlt = impl_->ng->first_dlt();
      impl_->snaplen = impl_->ng->first_snaplen();
    } catch (const PcapError& e) {
      throw PcapError("cannot open capture '" + path + "': " + why + "; " + e.what());
    }
  } else {
    throw PcapError("cannot open capture '" + path + "': " + errbuf);
  }
  auto link = capture_link_from_dlt(impl_->dlt);
  if (!link) {
    throw PcapError("capture '" + path + "': unsupported link type " +
                    dlt_description(impl_->dlt) +
                    "; supported: EN10MB, LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6");
  }
  impl_->link = *link;
}

PcapReader::~PcapReader() = default;
PcapReader::PcapReader(PcapReader&&) noexcept = default;
PcapReader& PcapReader::operator=(PcapReader&&) noexcept = default;

bool PcapReader::next(PcapRecord& out) {
  if (!impl_) return false;
  if (impl_->ng) {
    if (!impl_->ng->next(out)) return false;
    ++impl_->count;
    return true;
  }
  if (!impl_->handle) return false;
  struct pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  int rc = pcap_next_ex(impl_->handle.get(), &hdr, &data);
  if (rc == PCAP_ERROR_BREAK) return false;  // end of file
  if (rc != 1) {
    std::string why = pcap_geterr(impl_->handle.get());
    if (why.find("truncated") != std::string::npos) {  // libpcap: "truncated dump file; ..."
      impl_->cut_short = "cut short in record " + std::to_string(impl_->count + 1) + " (" +
                         why + "); " + std::to_string(impl_->count) + " complete record(s) read";
      impl_->handle.reset();
      return false;
    }
    if (detail::is_pcapng_file(impl_->path)) {
      // libpcap refused a later block of a pcapng file: continue with the fallback reader
      // from the same record on.
      impl_->handle.reset();
      impl_->ng = std::make_unique<detail::PcapngReader>(impl_->path);
      PcapRecord skip;
      for (std::uint64_t i = 0; i < impl_->count; ++i) {
        if (!impl_->ng->next(skip)) throw PcapError("capture '" + impl_->path + "': " + why);
      }
      return next(out);
    }
    throw PcapError("capture '" + impl_->path + "': cannot read record " +
                    std::to_string(impl_->count + 1) + ": " + why);
  }
  out.ts_sec = hdr->ts.tv_sec;
  out.ts_nsec = std::uint32_t(hdr->ts.tv_usec);  // nanoseconds: opened with NANO precision
  out.caplen = hdr->caplen;
  // A record claiming fewer bytes on the wire than it holds (len < caplen; malformed, but
  // libpcap passes it) is at least as long as what was captured — as the pcapng fallback
  // reader does. Keeping the smaller len made every writer refuse the record later, with an
  // error naming the *output* file.
  out.len = hdr->len < hdr->caplen ? hdr->caplen : hdr->len;
  out.data.assign(data, data + hdr->caplen);
  ++impl_->count;
  return true;
}

CaptureLink PcapReader::link() const noexcept { return impl_->link; }
int PcapReader::dlt() const noexcept { return impl_->dlt; }
std::uint32_t PcapReader::snaplen() const noexcept { return impl_->snaplen; }
TsPrecision PcapReader::precision() const noexcept { return TsPrecision::Nano; }
const std::string& PcapReader::path() const noexcept { return impl_->path; }
std::uint64_t PcapReader::records_read() const noexcept { return impl_->count; }
const std::string& PcapReader::cut_short() const noexcept { return impl_->cut_short; }

PcapFile read_pcap(const std::string& path) {
  PcapReader r(path);
  PcapFile f;
  f.link = r.link();
  f.snaplen = r.snaplen();
  PcapRecord rec;
  while (r.next(rec)) f.records.push_back(rec);
  if (!r.cut_short().empty()) throw PcapError("capture '" + path + "': " + r.cut_short());
  return f;
}

// ---- writer -------------------------------------------------------------------------------

struct PcapWriter::Impl {
  std::string path;
  PcapHandle dead;
  DumperHandle dumper;
  std::uint32_t snaplen = 0;
  std::uint64_t count = 0;
};

void refuse_same_file(const std::string& in, const std::string& out) {
  struct stat a {}, b {};
  if (::stat(in.c_str(), &a) != 0 || ::stat(out.c_str(), &b) != 0) return;  // out is new
  if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    throw PcapError("output '" + out + "' is the input capture '" + in +
                    "': writing it would destroy the input; choose another output file");
}

PcapWriter::PcapWriter(const std::string& path, CaptureLink link, std::uint32_t snaplen)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->snaplen = snaplen;
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(dlt_from_capture_link(link), int(snaplen),
                                                      PCAP_TSTAMP_PRECISION_NANO);
  if (!dead) throw PcapError("cannot create pcap handle for '" + path + "'");
  impl_->dead.reset(dead);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  if (!d) throw PcapError("cannot create capture '" + path + "': " + pcap_geterr(dead));
  impl_->dumper.reset(d);
}

PcapWriter::~PcapWriter() = default;  // pcap_dump_close flushes; then pcap_close
PcapWriter::PcapWriter(PcapWriter&&) noexcept = default;
PcapWriter& PcapWriter::operator=(PcapWriter&&) noexcept = default;

void PcapWriter::write(const PcapRecord& rec) {
  if (!impl_ || !impl_->dumper) throw PcapError("capture writer is closed");
  if (rec.data.size() != rec.caplen) {
    throw PcapError("capture '" + impl_->path + "': record " + std::to_string(impl_->count + 1) +
                    " has caplen " + std::to_string(rec.caplen) + " but " +
                    std::to_string(rec.data.size()) + " data bytes");
  }
  if (rec.caplen > rec.len) {
    throw PcapError("capture '" + impl_->path + "': record " + std::to_string(impl_->count + 1) +
                    " has caplen " + std::to_string(rec.caplen) + " > original length " +
                    std::to_string(rec.len));
  }
  if (rec.caplen > impl_->snaplen) {
    throw PcapError("capture '" + impl_->path + "': record " + std::to_string(impl_->count + 1) +
                    " of " + std::to_string(rec.caplen) + " bytes exceeds the snap length " +
                    std::to_string(impl_->snaplen));
  }
  struct pcap_pkthdr hdr {};
  hdr.ts.tv_sec = static_cast<decltype(hdr.ts.tv_sec)>(rec.ts_sec);
  hdr.ts.tv_usec = static_cast<decltype(hdr.ts.tv_usec)>(rec.ts_nsec);  // NANO precision
  hdr.caplen = rec.caplen;
  hdr.len = rec.len;
  pcap_dump(reinterpret_cast<u_char*>(impl_->dumper.get()), &hdr, rec.data.data());
  ++impl_->count;
}

void PcapWriter::close() {
  if (!impl_ || !impl_->dumper) return;
  bool ok = pcap_dump_flush(impl_->dumper.get()) == 0;
  FILE* f = pcap_dump_file(impl_->dumper.get());
  ok = ok && f && !std::ferror(f);
  impl_->dumper.reset();
  impl_->dead.reset();
  if (!ok) throw PcapError("capture '" + impl_->path + "': write failed");
}

std::uint64_t PcapWriter::records_written() const noexcept { return impl_->count; }

}  // namespace ofld::io
