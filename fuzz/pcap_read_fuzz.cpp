// libFuzzer target: arbitrary bytes as a capture file → PcapReader (libpcap, and ofld's own
// pcapng reader where libpcap refuses a pcapng file). A malformed file must end in PcapError or
// a "cut short" note, never a crash, a hang or an over-read (ASan); every record it does return
// must be self-consistent (caplen == data.size() <= len or a truncated record) and no larger than
// the file. The input is written to a memfd and opened by its /proc path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ofld/io/pcap.hpp"

namespace {
int memfd() {
  static int fd = ::memfd_create("ofld-pcap-fuzz", 0);
  return fd;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const int fd = memfd();
  if (fd < 0) return 0;
  if (::ftruncate(fd, 0) != 0) return 0;
  std::size_t off = 0;
  while (off < size) {
    const ssize_t w = ::pwrite(fd, data + off, size - off, off_t(off));
    if (w <= 0) return 0;
    off += std::size_t(w);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    ofld::io::PcapReader r(path);
    ofld::io::PcapRecord rec;
    std::size_t total = 0, n = 0;
    while (r.next(rec)) {
      if (rec.caplen != rec.data.size()) std::abort();
      total += rec.data.size();
      if (total > size) std::abort();  // records cannot hold more bytes than the file
      if (++n > size) std::abort();    // every record takes at least one byte of the file
    }
    (void)r.cut_short();
  } catch (const ofld::io::PcapError&) {
  }
  return 0;
}
