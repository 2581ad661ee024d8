// Tunnel header codecs: VXLAN + RCO (V-1..V-3), GUE (V-6..V-10), GRE (V-12, V-13),
// ERSPAN II/III (V-14..V-17), Geneve (RFC 8926). Golden bytes written from the spec layouts.
#include <gtest/gtest.h>

#include "ofld/wire/tunnel.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
using wire_test::Bytes;
using wire_test::expect_truncation_errors;
using wire_test::hex;

// ---- VXLAN ----------------------------------------------------------------------------------

TEST(WireVxlan, GoldenParse) {
  // RFC 7348 §5: flags 0x08 (I), 24 reserved bits, VNI 0x123456, 8 reserved bits.
  const Bytes b = hex("08 00 00 00 12 34 56 00");
  auto v = VxlanHeader<>::parse(b);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->vni_valid());
  EXPECT_FALSE(v->rco());
  EXPECT_EQ(v->vni(), 0x123456u);
  EXPECT_EQ(v->flags(), 0x08);
  expect_truncation_errors(b, 8, [](auto s) { return VxlanHeader<>::parse(s); });
}

TEST(WireVxlan, V1_RcoFlagIsBit21FromLsb) {
  // V-1: mask 0x00200000 of word0 = value 0x20 in the second byte.
  EXPECT_EQ(vxlan::kFlagRco, 1u << 21);
  const Bytes b = hex("08 20 00 00 12 34 56 8a");
  auto v = VxlanHeader<>::parse(b);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->rco());
  EXPECT_EQ(v->word0(), vxlan::kFlagVni | vxlan::kFlagRco);
  // V-2: low byte 0x8a = UDP bit | (20 >> 1): start 20, checksum field at 20 + 6.
  EXPECT_EQ(v->rco_data(), (vxlan::Rco{20, 6}));
  EXPECT_EQ(v->rco_data().field(), 26u);
  EXPECT_EQ(v->vni(), 0x123456u);  // VNI unaffected by the RCO byte
}

TEST(WireVxlan, V3_RcoEncodeDecodeExamples) {
  // V-3 hand examples: byte = (start >> 1) | (offset == 6 ? 0x80 : 0).
  EXPECT_EQ(vxlan::rco_encode(0, 16), std::optional<std::uint8_t>(0x00));    // TCP, start 0
  EXPECT_EQ(vxlan::rco_encode(0, 6), std::optional<std::uint8_t>(0x80));     // UDP, start 0
  EXPECT_EQ(vxlan::rco_encode(34, 16), std::optional<std::uint8_t>(0x11));   // eth14+ip20
  EXPECT_EQ(vxlan::rco_encode(34, 6), std::optional<std::uint8_t>(0x91));
  EXPECT_EQ(vxlan::rco_encode(254, 16), std::optional<std::uint8_t>(0x7f));  // max start
  EXPECT_EQ(vxlan::rco_encode(254, 6), std::optional<std::uint8_t>(0xff));
  // Not expressible: odd start, start > 254, offsets other than 6/16.
  EXPECT_FALSE(vxlan::rco_encode(35, 16));
  EXPECT_FALSE(vxlan::rco_encode(256, 16));
  EXPECT_FALSE(vxlan::rco_encode(34, 8));
  // decode: start = (b & 0x7f) << 1; offset = start + (b & 0x80 ? 6 : 16)
  EXPECT_EQ(vxlan::rco_decode(0x11), (vxlan::Rco{34, 16}));
  EXPECT_EQ(vxlan::rco_decode(0x11).field(), 50u);
  EXPECT_EQ(vxlan::rco_decode(0x91).field(), 40u);
  EXPECT_EQ(vxlan::rco_decode(0xff), (vxlan::Rco{254, 6}));
}

TEST(WireVxlan, V3_RcoRoundTripAllEvenStarts) {
  for (std::uint32_t start = 0; start <= 254; start += 2)
    for (std::uint32_t off : {6u, 16u}) {
      auto b = vxlan::rco_encode(start, off);
      ASSERT_TRUE(b) << start;
      EXPECT_EQ(vxlan::rco_decode(*b), (vxlan::Rco{std::uint16_t(start), std::uint16_t(off)}));
    }
}

TEST(WireVxlan, EmitRoundTrip) {
  Bytes out(8);
  EXPECT_EQ((VxlanRepr{0x00abcd, std::nullopt}).emit(out), 8u);
  EXPECT_EQ(out, hex("08 00 00 00 00 ab cd 00"));
  EXPECT_EQ((VxlanRepr{0x00abcd, vxlan::Rco{34, 6}}).emit(out), 8u);
  EXPECT_EQ(out, hex("08 20 00 00 00 ab cd 91"));
  auto v = VxlanHeader<>::parse(out);
  EXPECT_EQ(v->rco_data(), (vxlan::Rco{34, 6}));
  EXPECT_EQ((VxlanRepr{1, vxlan::Rco{33, 6}}).emit(out), 0u);  // unencodable
  Bytes small(7);
  EXPECT_EQ((VxlanRepr{1, std::nullopt}).emit(small), 0u);
  // mutable view
  auto m = VxlanHeader<std::uint8_t>::parse(std::span<std::uint8_t>(out));
  m->set_vni(0xffffff);
  EXPECT_EQ(VxlanHeader<>::parse(out)->vni(), 0xffffffu);
  EXPECT_EQ(out[7], 0x91);  // set_vni leaves the RCO byte alone
}

// ---- GUE ------------------------------------------------------------------------------------

TEST(WireGue, V6_BaseHeaderFields) {
  // ver 0, C 0, hlen 0 → byte 0x00; proto 4 (IPIP); flags 0.
  const Bytes b = hex("00 04 00 00");
  auto g = GueHeader<>::parse(b);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->version(), 0);
  EXPECT_FALSE(g->control());
  EXPECT_EQ(g->hlen(), 0);
  EXPECT_EQ(g->proto_ctype(), 4);
  EXPECT_EQ(g->header_len(), 4u);
  EXPECT_FALSE(g->remcsum());
  // control message: C bit (0x20), ctype 1
  const Bytes cb = hex("20 01 00 00");
  auto c = GueHeader<>::parse(cb);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->control());
}

TEST(WireGue, V9_ControlMessageFlagsAreNotReadAsRcoOption) {
  // A control message (C bit) with hlen 1: 8 header bytes whose flags word says P and whose
  // "private flags" say REMCSUM. parse() does not validate a control message's flags (V-9), so
  // they are not interpreted: no private flags, no RCO option (whose start/offset would lie past
  // the 8-byte header; the fuzzer found that read, wire_parse_fuzz found-crash-*).
  const Bytes b = hex("21 02 00 01  80 00 00 00");
  auto c = GueHeader<>::parse(b);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->control());
  EXPECT_EQ(c->header_len(), 8u);
  EXPECT_EQ(c->priv_flags(), 0u);
  EXPECT_FALSE(c->has_remcsum());
  EXPECT_FALSE(c->remcsum());
}

TEST(WireGue, V8_PrivateFlagsAndRcoOption) {
  // hlen 2 (8 option bytes); proto 41; flags 0x0001 (P); private flags 0x80000000 (REMCSUM);
  // RCO start 0x0028 (40), offset 0x0038 (56 = 40 + 16, TCP check in an IPv6/TCP inner).
  const Bytes b = hex("02 29 00 01  80 00 00 00  00 28 00 38");
  auto g = GueHeader<>::parse(b);
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  EXPECT_EQ(g->header_len(), 12u);
  EXPECT_TRUE(g->has_priv());
  EXPECT_TRUE(g->has_remcsum());
  ASSERT_TRUE(g->remcsum());
  EXPECT_EQ(g->remcsum()->start, 40);
  EXPECT_EQ(g->remcsum()->offset, 56);
  expect_truncation_errors(b, 12, [](auto s) { return GueHeader<>::parse(s); });
}

TEST(WireGue, V9_Validation) {
  auto code = [](const char* h) {
    auto r = GueHeader<>::parse(hex(h));
    return r.ok() ? std::optional<Errc>() : std::optional<Errc>(r.error().code);
  };
  EXPECT_EQ(code("00 04 80 00"), Errc::BadFlags);                            // unknown std flag
  EXPECT_EQ(code("01 04 00 01  40 00 00 00"), Errc::BadFlags);               // unknown priv flag
  EXPECT_EQ(code("00 04 00 01"), Errc::BadOption);                           // P but hlen 0
  EXPECT_EQ(code("01 04 00 01  80 00 00 00"), Errc::BadOption);              // RCO needs hlen 2
  EXPECT_EQ(code("02 04 00 01  80 00 00 00  00 20 00 10"), Errc::BadRcoOffset);  // 16 < 32
  EXPECT_EQ(code("02 04 00 01  80 00 00 00  00 20 00 20"), std::nullopt);    // offset == start ok
  EXPECT_EQ(code("01 04 00 01  00 00 00 00"), std::nullopt);                 // P, no priv flags
  EXPECT_EQ(code("03 04 00 00  00 00 00 00"), Errc::Truncated);              // hlen 3 > data
  EXPECT_EQ(code("40 04 00 00"), Errc::BadVersion);  // version 1 has no header (V-7)
  auto r = GueHeader<>::parse(hex("02 04 00 01  80 00 00 00  00 20 00 10"));
  EXPECT_EQ(r.error().to_string(), "gue: rco offset 16 < start 32 at offset 0");
}

TEST(WireGue, V10_EmitSizes) {
  Bytes out(12);
  GueRepr bare{6, std::nullopt};
  EXPECT_EQ(bare.length(), 4u);
  EXPECT_EQ(bare.emit(out), 4u);
  EXPECT_EQ(Bytes(out.begin(), out.begin() + 4), hex("00 06 00 00"));
  GueRepr rco{4, GueHeader<>::Remcsum{20, 36}};
  EXPECT_EQ(rco.length(), 12u);  // 4 base + 4 private flags + 4 RCO (V-10)
  EXPECT_EQ(rco.emit(out), 12u);
  EXPECT_EQ(out, hex("02 04 00 01  80 00 00 00  00 14 00 24"));
  auto g = GueHeader<>::parse(out);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->remcsum()->start, 20);
  EXPECT_EQ(g->remcsum()->offset, 36);
  Bytes small(11);
  EXPECT_EQ(rco.emit(small), 0u);
}

// ---- GRE ------------------------------------------------------------------------------------

TEST(WireGre, V12_FlagMasks) {
  EXPECT_EQ(gre::kCsum, 0x8000);
  EXPECT_EQ(gre::kRouting, 0x4000);
  EXPECT_EQ(gre::kKey, 0x2000);
  EXPECT_EQ(gre::kSeq, 0x1000);
  EXPECT_EQ(gre::kVersionMask, 0x0007);
  EXPECT_EQ(gre::kCsumOffset, 4u);  // V-13 GSO offset of the checksum field
}

TEST(WireGre, V13_OptionalFieldOrder) {
  // C|K|S = 0xb000, proto 0x0800; checksum 0x1234 + reserved1 0; key 42; sequence 7.
  const Bytes b = hex("b0 00 08 00  12 34 00 00  00 00 00 2a  00 00 00 07");
  auto g = GreHeader<>::parse(b);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->header_len(), 16u);
  EXPECT_EQ(g->protocol(), 0x0800);
  EXPECT_EQ(g->checksum(), std::optional<std::uint16_t>(0x1234));
  EXPECT_EQ(g->key_offset(), 8u);
  EXPECT_EQ(g->seq_offset(), 12u);
  EXPECT_EQ(g->key(), std::optional<std::uint32_t>(42));
  EXPECT_EQ(g->seq(), std::optional<std::uint32_t>(7));
  Bytes out(16);
  EXPECT_EQ((GreRepr{0x0800, 0x1234, 42u, 7u}).emit(out), 16u);
  EXPECT_EQ(out, b);
  expect_truncation_errors(b, 16, [](auto s) { return GreHeader<>::parse(s); });

  // K only (TEB): key directly after the base header.
  const Bytes kb = hex("20 00 65 58  00 00 00 01");
  auto k = GreHeader<>::parse(kb);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->key_offset(), 4u);
  EXPECT_EQ(k->key(), std::optional<std::uint32_t>(1));
  EXPECT_FALSE(k->checksum());
  // S only (ERSPAN II framing, V-14): sequence directly after the base header.
  const Bytes sb = hex("10 00 88 be  00 00 00 05");
  auto s = GreHeader<>::parse(sb);
  EXPECT_EQ(s->seq(), std::optional<std::uint32_t>(5));
  // C only: 4 + 4.
  Bytes c(8);
  EXPECT_EQ((GreRepr{0x86dd, std::uint16_t(0), std::nullopt, std::nullopt}).emit(c), 8u);
  EXPECT_EQ(c, hex("80 00 86 dd 00 00 00 00"));
  auto cm = GreHeader<std::uint8_t>::parse(std::span<std::uint8_t>(c));
  cm->set_check(0xbeef);
  EXPECT_EQ(GreHeader<>::parse(c)->checksum(), std::optional<std::uint16_t>(0xbeef));
}

TEST(WireGre, V12_RoutingAndVersion1) {
  // R bit: routing present; the parser keeps C/R's 4-byte section and flags it.
  const Bytes rb = hex("40 00 08 00  00 00 00 00");
  auto r = GreHeader<>::parse(rb);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->routing_present());
  EXPECT_EQ(r->header_len(), 8u);
  // PPTP enhanced GRE (RFC 2637 §4.1): 0x3081 = K|S|A, version 1, proto 0x880b,
  // payload length 0x0010, call id 0x0001, sequence 3, ack 2 → 16 bytes.
  const Bytes pb = hex("30 81 88 0b  00 10 00 01  00 00 00 03  00 00 00 02");
  auto p = GreHeader<>::parse(pb);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->version(), 1);
  EXPECT_EQ(p->header_len(), 16u);
  EXPECT_EQ(p->seq(), std::optional<std::uint32_t>(3));
  EXPECT_EQ(p->ack(), std::optional<std::uint32_t>(2));
}

// ---- ERSPAN ---------------------------------------------------------------------------------

TEST(WireErspan, V15_TypeIIGolden) {
  // Ver 1, VLAN 0x123 → 0x1123; COS 5, En 3, T 1, Session 0x2aa → 101 11 1 10 | 0xaa = be aa;
  // Reserved 0, Index 0x54321.
  const Bytes b = hex("11 23 be aa 00 05 43 21");
  auto e = ErspanIIHeader<>::parse(b);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->ver(), 1);
  EXPECT_EQ(e->vlan(), 0x123);
  EXPECT_EQ(e->cos(), 5);
  EXPECT_EQ(e->en(), 3);
  EXPECT_TRUE(e->t());
  EXPECT_EQ(e->session_id(), 0x2aa);
  EXPECT_EQ(e->index(), 0x54321u);
  Bytes out(8);
  EXPECT_EQ((ErspanIIRepr{0x123, 0x2aa, 5, 3, true, 0x54321}).emit(out), 8u);
  EXPECT_EQ(out, b);
  expect_truncation_errors(b, 8, [](auto s) { return ErspanIIHeader<>::parse(s); });
  EXPECT_EQ(ErspanIIHeader<>::parse(hex("21 23 be aa 00 05 43 21")).error().code,
            Errc::BadVersion);
}

TEST(WireErspan, V16_TypeIIIGoldenWithPlatform) {
  // Ver 2, VLAN 0x064 → 20 64; COS 0 BSO 0 T 0 SessionID 1 → 00 01; Timestamp 0x11223344;
  // SGT 0x0102; P 1, FT 0, HwID 0x2d (10 1101) → byte10 = 1 00000 10 = 0x82,
  // byte11 = 1101 1 10 1 (HwID low 4, D 1, Gra 2, O 1) = 0xdd; platform sub-header 8 bytes.
  const Bytes b = hex("20 64 00 01  11 22 33 44  01 02 82 dd  0c 00 00 00 00 00 00 01");
  auto e = ErspanIIIHeader<>::parse(b);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->ver(), 2);
  EXPECT_EQ(e->vlan(), 0x64);
  EXPECT_EQ(e->session_id(), 1);
  EXPECT_EQ(e->timestamp(), 0x11223344u);
  EXPECT_EQ(e->sgt(), 0x0102);
  EXPECT_TRUE(e->p());
  EXPECT_EQ(e->ft(), 0);
  EXPECT_EQ(e->hw_id(), 0x2d);
  EXPECT_TRUE(e->d());
  EXPECT_EQ(e->gra(), 2);
  EXPECT_TRUE(e->o());
  EXPECT_EQ(e->header_len(), 20u);
  EXPECT_EQ(e->platform_id(), 3);
  ErspanIIIRepr r;
  r.vlan = 0x64; r.session_id = 1; r.timestamp = 0x11223344; r.sgt = 0x0102; r.p = true;
  r.hw_id = 0x2d; r.d = true; r.gra = 2; r.platform = 0x0c00000000000001ull;
  Bytes out(20);
  EXPECT_EQ(r.emit(out), 20u);
  EXPECT_EQ(out, b);
  expect_truncation_errors(b, 20, [](auto s) { return ErspanIIIHeader<>::parse(s); });
}

TEST(WireErspan, V17_MetadataSizes) {
  EXPECT_EQ(erspan::kV1MdSize, 4u);
  EXPECT_EQ(erspan::kV2MdSize, 8u);
  EXPECT_EQ(erspan::kIILen, 4 + erspan::kV1MdSize);
  EXPECT_EQ(erspan::kIIILen, 4 + erspan::kV2MdSize);
}

// ---- Geneve ---------------------------------------------------------------------------------

TEST(WireGeneve, GoldenWithOption) {
  // GN-1, RFC 8926 §3.4: Ver 0, Opt Len 2 (8 bytes) → 0x02; O 0, C 1 → 0x40; Protocol 0x6558;
  // VNI 0x00abcd, reserved; option class 0x0102, type 0x80, R 0, length 1 (4 data bytes).
  const Bytes b = hex("02 40 65 58  00 ab cd 00  01 02 80 01  de ad be ef");
  auto g = GeneveHeader<>::parse(b);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->opt_len(), 2);
  EXPECT_EQ(g->header_len(), 16u);
  EXPECT_FALSE(g->oam());
  EXPECT_TRUE(g->critical());
  EXPECT_EQ(g->protocol(), 0x6558);
  EXPECT_EQ(g->vni(), 0xabcdu);
  int n = 0;
  EXPECT_TRUE(g->for_each_option([&](std::uint16_t cls, std::uint8_t type, auto data) {
    EXPECT_EQ(cls, 0x0102);
    EXPECT_EQ(type, 0x80);
    EXPECT_EQ(data.size(), 4u);
    ++n;
  }));
  EXPECT_EQ(n, 1);
  Bytes bad = b;
  bad[11] = 0x02;  // option claims 8 data bytes, only 4 in opt_len
  EXPECT_FALSE(GeneveHeader<>::parse(bad)->for_each_option([](auto, auto, auto) {}));
  expect_truncation_errors(b, 16, [](auto s) { return GeneveHeader<>::parse(s); });
  EXPECT_EQ(GeneveHeader<>::parse(hex("42 40 65 58 00 00 00 00")).error().code, Errc::BadVersion);
}

TEST(WireGeneve, EmitRoundTrip) {
  Bytes out(8);
  EXPECT_EQ((GeneveRepr{0x0800, 0x123456, true, false}).emit(out), 8u);
  EXPECT_EQ(out, hex("00 80 08 00 12 34 56 00"));
  auto g = GeneveHeader<>::parse(out);
  EXPECT_TRUE(g->oam());
  EXPECT_EQ(g->protocol(), 0x0800);
  EXPECT_EQ(g->vni(), 0x123456u);
}
