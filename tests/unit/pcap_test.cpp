// io/pcap: reading pcap/pcapng through libpcap, writing pcap, link types, errors.
// Expected values come from the public captures' MANIFEST (packet counts, link types) and
// from tests/data/README.md (hand-made frames).
#include <fstream>
#include <iterator>
#include "ofld/io/pcap.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace ofld::io;

namespace {
const std::string kShared = std::string(OFLD_PCAP_DIR) + "/";
const std::string kData = std::string(OFLD_SOURCE_DIR) + "/tests/data/";

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name)
      : path((fs::temp_directory_path() / ("ofld_pcap_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {}
  ~TempFile() { std::remove(path.c_str()); }
};

void expect_round_trip(const std::string& in) {
  SCOPED_TRACE(in);
  PcapFile a = read_pcap(in);
  ASSERT_FALSE(a.records.empty());
  TempFile out(fs::path(in).filename().string() + ".out.pcap");
  {
    PcapWriter w(out.path, a.link);
    for (const auto& r : a.records) w.write(r);
    EXPECT_EQ(w.records_written(), a.records.size());
    w.close();
  }
  PcapFile b = read_pcap(out.path);
  EXPECT_EQ(b.link, a.link);
  EXPECT_EQ(b.snaplen, PcapWriter::kDefaultSnaplen);
  ASSERT_EQ(b.records.size(), a.records.size());
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(b.records[i], a.records[i]) << "record " << i + 1;
  }
}
}  // namespace

TEST(Pcap, ReadsEthernetCaptureWithManifestCount) {
  // MANIFEST.tsv: tcpdump_vxlan.pcap has 10 packets, Ethernet, snaplen 1500.
  PcapReader r(kShared + "tcpdump_vxlan.pcap");
  EXPECT_EQ(r.link(), CaptureLink::Ethernet);
  EXPECT_EQ(r.snaplen(), 1500u);
  PcapRecord rec;
  std::size_t n = 0;
  while (r.next(rec)) {
    ++n;
    EXPECT_EQ(rec.caplen, rec.data.size());
    EXPECT_LE(rec.caplen, rec.len);
  }
  EXPECT_EQ(n, 10u);
  EXPECT_EQ(r.records_read(), 10u);
  EXPECT_FALSE(r.next(rec));  // stays at end
}

TEST(Pcap, ReadsRawIpCapture) {
  // MANIFEST: four_ipv6_http_streams is LINKTYPE_RAW with 81 packets; first byte is IPv6.
  PcapFile f = read_pcap(kShared + "pcapplusplus_four_ipv6_http_streams.pcap");
  EXPECT_EQ(f.link, CaptureLink::RawIp);
  ASSERT_EQ(f.records.size(), 81u);
  EXPECT_EQ(f.records[0].data[0] >> 4, 6);
}

TEST(Pcap, TruncatedRecordKeepsOriginalLength) {
  // MANIFEST: erspan-type-iii-pb-1 is truncated, 79 of 188109 bytes captured.
  PcapFile f = read_pcap(kShared + "tcpdump_erspan-type-iii-pb-1.pcap");
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_EQ(f.records[0].caplen, 79u);
  EXPECT_EQ(f.records[0].len, 188109u);
  EXPECT_TRUE(f.records[0].truncated());
}

TEST(Pcap, BigTcpFrameReadsWhole) {
  // MANIFEST: bigtcp-ipv4 holds one 80066-byte frame (file 80106 B = 24 + 16 + 80066).
  PcapFile f = read_pcap(kShared + "tcpdump_bigtcp-ipv4.pcap");
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_EQ(f.records[0].caplen, 80066u);
  EXPECT_EQ(f.records[0].len, 80066u);
}

TEST(Pcap, RoundTripSharedCaptures) {
  for (const char* name :
       {"tcpdump_vxlan.pcap", "pcapplusplus_four_ipv6_http_streams.pcap",
        "tcpdump_erspan-type-iii-pb-1.pcap", "tcpdump_bigtcp-ipv6-vxlan-ipv6.pcap",
        "zeek_http-post-large.pcap", "pcapplusplus_ip6_fragments.pcap"}) {
    expect_round_trip(kShared + name);
  }
}

TEST(Pcap, RoundTripEveryLinkTypeFromTestData) {
  expect_round_trip(kData + "sll_udp4.pcap");
  expect_round_trip(kData + "sll2_udp4.pcap");
  expect_round_trip(kData + "dlt_ipv4_udp4.pcapng");
}

TEST(Pcap, LinuxCookedAndIpv4LinkTypes) {
  // tests/data/README.md: the same 32-byte IPv4/UDP datagram behind SLL (16 B), SLL2 (20 B)
  // and no link header.
  PcapFile sll = read_pcap(kData + "sll_udp4.pcap");
  PcapFile sll2 = read_pcap(kData + "sll2_udp4.pcap");
  PcapFile v4 = read_pcap(kData + "dlt_ipv4_udp4.pcapng");
  EXPECT_EQ(sll.link, CaptureLink::LinuxSll);
  EXPECT_EQ(sll2.link, CaptureLink::LinuxSll2);
  EXPECT_EQ(v4.link, CaptureLink::Ipv4);
  ASSERT_EQ(sll.records.size(), 1u);
  ASSERT_EQ(sll2.records.size(), 1u);
  ASSERT_EQ(v4.records.size(), 1u);
  EXPECT_EQ(sll.records[0].caplen, 16u + 32u);
  EXPECT_EQ(sll2.records[0].caplen, 20u + 32u);
  EXPECT_EQ(v4.records[0].caplen, 32u);
  EXPECT_TRUE(std::equal(v4.records[0].data.begin(), v4.records[0].data.end(),
                         sll.records[0].data.begin() + 16));
}

TEST(Pcap, PcapngMatchesPcapOfSameTraffic) {
  // tests/data/tcpdump_vxlan.pcapng = editcap -F pcapng of the shared tcpdump_vxlan.pcap.
  PcapFile ng = read_pcap(kData + "tcpdump_vxlan.pcapng");
  PcapFile classic = read_pcap(kShared + "tcpdump_vxlan.pcap");
  EXPECT_EQ(ng.link, CaptureLink::Ethernet);
  ASSERT_EQ(ng.records.size(), classic.records.size());
  for (std::size_t i = 0; i < ng.records.size(); ++i) {
    EXPECT_EQ(ng.records[i], classic.records[i]) << "record " << i + 1;
  }
  expect_round_trip(kData + "tcpdump_vxlan.pcapng");
}

TEST(Pcap, UnsupportedLinkTypeNamesTheDlt) {
  try {
    PcapReader r(kData + "dlt105_ieee802_11.pcap");
    FAIL() << "expected PcapError";
  } catch (const PcapError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unsupported link type"), std::string::npos) << msg;
    EXPECT_NE(msg.find("105"), std::string::npos) << msg;
    EXPECT_NE(msg.find("IEEE802_11"), std::string::npos) << msg;
  }
}

TEST(Pcap, MissingFileIsAnError) {
  EXPECT_THROW(PcapReader("/nonexistent/dir/x.pcap"), PcapError);
  EXPECT_THROW(PcapWriter("/nonexistent/dir/x.pcap", CaptureLink::Ethernet), PcapError);
}

TEST(Pcap, WriterRejectsInconsistentRecords) {
  TempFile out("bad.pcap");
  PcapWriter w(out.path, CaptureLink::Ethernet, 100);
  PcapRecord r;
  r.data.assign(10, 0);
  r.caplen = 9;  // != data.size()
  r.len = 10;
  EXPECT_THROW(w.write(r), PcapError);
  r.caplen = 10;
  r.len = 5;  // caplen > len
  EXPECT_THROW(w.write(r), PcapError);
  r.data.assign(101, 0);
  r.caplen = r.len = 101;  // > snaplen 100: libpcap would cut it on read-back
  EXPECT_THROW(w.write(r), PcapError);
  EXPECT_EQ(w.records_written(), 0u);
}

TEST(Pcap, LinkTypeMappingIsBijective) {
  for (CaptureLink l : {CaptureLink::Ethernet, CaptureLink::LinuxSll, CaptureLink::LinuxSll2,
                        CaptureLink::RawIp, CaptureLink::Ipv4, CaptureLink::Ipv6}) {
    auto back = capture_link_from_dlt(dlt_from_capture_link(l));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, l);
  }
  // pcap/dlt.h values: EN10MB 1, LINUX_SLL 113, LINUX_SLL2 276, IPV4 228, IPV6 229.
  EXPECT_EQ(capture_link_from_dlt(1), CaptureLink::Ethernet);
  EXPECT_EQ(capture_link_from_dlt(113), CaptureLink::LinuxSll);
  EXPECT_EQ(capture_link_from_dlt(276), CaptureLink::LinuxSll2);
  EXPECT_EQ(capture_link_from_dlt(228), CaptureLink::Ipv4);
  EXPECT_EQ(capture_link_from_dlt(229), CaptureLink::Ipv6);
  EXPECT_FALSE(capture_link_from_dlt(105).has_value());  // IEEE 802.11
}

// ---- pcapng fallback (src/io/pcap_ng.*) --------------------------------------------------
#include <pcap/dlt.h>

#include "../../src/io/pcap_ng.hpp"

TEST(Pcap, PcapngWithDifferingSnaplensFallsBack) {
  // MANIFEST: pcapplusplus_GrePackets.pcap is a pcapng file (2 interfaces, snap lengths 262144
  // and 65535) with 7 packets; libpcap 1.10 refuses the second interface.
  PcapFile f = read_pcap(kShared + "pcapplusplus_GrePackets.pcap");
  EXPECT_EQ(f.link, CaptureLink::Ethernet);
  ASSERT_EQ(f.records.size(), 7u);
  for (const auto& r : f.records) EXPECT_EQ(r.caplen, r.data.size());
  // Frame 7 (interface 1) is IPv4 GRE TEB: ethertype 0x0800 at bytes 12..13.
  EXPECT_EQ(f.records[6].data[12], 0x08);
  EXPECT_EQ(f.records[6].data[13], 0x00);
  expect_round_trip(kShared + "pcapplusplus_GrePackets.pcap");
}

TEST(Pcap, PcapngFallbackReaderAgreesWithLibpcap) {
  // Both readers on a pcapng file libpcap reads: identical records, timestamps included.
  const std::string path = kData + "tcpdump_vxlan.pcapng";
  PcapFile lib = read_pcap(path);
  ofld::io::detail::PcapngReader ng(path);
  EXPECT_EQ(ng.first_dlt(), 1);
  PcapRecord r;
  std::size_t n = 0;
  while (ng.next(r)) {
    ASSERT_LT(n, lib.records.size());
    EXPECT_EQ(r, lib.records[n]) << "record " << n + 1;
    ++n;
  }
  EXPECT_EQ(n, lib.records.size());
}

// Found by a new-user try-out: the fallback reader took the IDB's LINKTYPE_RAW (101) for a
// DLT value and refused raw-IP pcapng files. pcapng §4.2: the IDB holds a LINKTYPE_* value.
TEST(Pcap, PcapngFallbackMapsLinktypeRaw) {
  const std::string path = kData + "linktype_raw_udp4.pcapng";
  PcapFile lib = read_pcap(path);  // libpcap: raw IP
  EXPECT_EQ(lib.link, CaptureLink::RawIp);
  ofld::io::detail::PcapngReader ng(path);
  EXPECT_EQ(ng.first_dlt(), DLT_RAW);
  PcapRecord r;
  ASSERT_TRUE(ng.next(r));
  ASSERT_EQ(lib.records.size(), 1u);
  EXPECT_EQ(r, lib.records[0]);
  EXPECT_EQ(r.data[0], 0x45);  // the IPv4 header starts the record: no link header
}

TEST(Pcap, PcapngFallbackRejectsGarbage) {
  TempFile bad("garbage.pcapng");
  {
    FILE* f = std::fopen(bad.path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    // SHB type, then a block length of 7 (not a multiple of 4, < 12).
    const unsigned char bytes[] = {0x0A, 0x0D, 0x0D, 0x0A, 7, 0, 0, 0, 0x4D, 0x3C, 0x2B, 0x1A};
    std::fwrite(bytes, 1, sizeof bytes, f);
    std::fclose(f);
  }
  EXPECT_THROW(ofld::io::detail::PcapngReader(bad.path).first_dlt(), PcapError);
  EXPECT_THROW(read_pcap(bad.path), PcapError);
}

// Found by a new-user try-out: a capture cut off inside a record gave no summary, only an
// error. Now the reader stops after the last complete record and says so (cut_short), tools
// write what they read, and whole-file reads still fail (nothing is lost silently).
TEST(Pcap, CutShortCaptureReadsCompleteRecordsAndSaysSo) {
  const fs::path src = fs::path(OFLD_SOURCE_DIR) / "data" / "zeek_chksums_ip4-tcp-bad-chksum.pcap";
  PcapFile whole = read_pcap(src.string());
  ASSERT_GE(whole.records.size(), 1u);
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TempFile cut("cut.pcap");
  {
    std::ofstream out(cut.path, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size() - 3));  // 3 bytes short of the end
  }
  ofld::io::PcapReader r(cut.path);
  PcapRecord rec;
  std::size_t n = 0;
  while (r.next(rec)) {
    EXPECT_EQ(rec, whole.records[n]);
    ++n;
  }
  EXPECT_EQ(n, whole.records.size() - 1);
  EXPECT_NE(r.cut_short().find("cut short in record " + std::to_string(whole.records.size())),
            std::string::npos)
      << r.cut_short();
  EXPECT_THROW(read_pcap(cut.path), PcapError);
  EXPECT_TRUE(ofld::io::PcapReader(src.string()).cut_short().empty());
}

// Found by a new-user try-out: `ofld csum fix X -o X` truncated X before reading it. Writing
// over the input (by the same path, or another name of the same file) is refused up front.
TEST(Pcap, OutputThatIsTheInputIsRefused) {
  const fs::path dir = fs::temp_directory_path() / ("ofld-same-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path in = dir / "in.pcap", link = dir / "link.pcap", other = dir / "other.pcap";
  fs::copy_file(fs::path(OFLD_SOURCE_DIR) / "data" / "zeek_chksums_ip4-tcp-bad-chksum.pcap", in,
                fs::copy_options::overwrite_existing);
  const auto size = fs::file_size(in);
  fs::create_hard_link(in, link);
  EXPECT_THROW(refuse_same_file(in.string(), in.string()), PcapError);
  EXPECT_THROW(refuse_same_file(in.string(), link.string()), PcapError);
  EXPECT_NO_THROW(refuse_same_file(in.string(), other.string()));  // a new file is fine
  EXPECT_EQ(fs::file_size(in), size);                               // input untouched
  fs::remove_all(dir);
}

// QA: a pcap record with len (bytes on the wire) smaller than caplen is malformed; libpcap
// returns it as it is. `ofld gso|csum fix` then failed at the end with "capture 'OUT.pcap':
// record 1 has caplen 54 > original length 10" — naming the output, after writing part of
// it. The reader now reports len = caplen (as the pcapng fallback reader does), so the record
// is read, processed and written.
TEST(Pcap, RecordShorterOnTheWireThanCapturedReadsAsCaptured) {
  const fs::path src = fs::path(OFLD_SOURCE_DIR) / "data" / "zeek_chksums_ip4-tcp-bad-chksum.pcap";
  PcapFile whole = read_pcap(src.string());
  ASSERT_EQ(whole.records.size(), 1u);
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 40u);
  ASSERT_EQ(bytes[0], '\xd4');  // little-endian microsecond pcap
  bytes[36] = 10;                // record 1: len = 10 (little-endian u32 at 24 + 12)
  bytes[37] = bytes[38] = bytes[39] = 0;
  TempFile bad("lenlt.pcap"), out("lenlt_out.pcap");
  {
    std::ofstream o(bad.path, std::ios::binary);
    o.write(bytes.data(), std::streamsize(bytes.size()));
  }
  PcapFile f = read_pcap(bad.path);
  ASSERT_EQ(f.records.size(), 1u);
  EXPECT_EQ(f.records[0].data, whole.records[0].data);
  EXPECT_EQ(f.records[0].caplen, whole.records[0].caplen);
  EXPECT_EQ(f.records[0].len, f.records[0].caplen);
  EXPECT_FALSE(f.records[0].truncated());
  {
    PcapWriter w(out.path, f.link);
    EXPECT_NO_THROW(w.write(f.records[0]));
  }
  EXPECT_EQ(read_pcap(out.path).records.size(), 1u);
}
