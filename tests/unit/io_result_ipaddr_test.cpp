// Types in the layers that own them: the I/O outcome type has its own io header
// (ofld/io/result.hpp, usable without the netns machinery) and the IP address is a wire
// value (ofld/wire/ip_addr.hpp); tunnel::IpAddr names the same type.
#include <gtest/gtest.h>

#include <type_traits>

#include "ofld/io/result.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/wire/ip_addr.hpp"

TEST(LayerOwnedTypes, IpAddrIsAWireValue) {
  EXPECT_TRUE((std::is_same_v<ofld::tunnel::IpAddr, ofld::wire::IpAddr>));
  // RFC 5952 §4.2.2 / §4.3: the canonical text of 2001:db8:0:0:1:0:0:1 is 2001:db8::1:0:0:1,
  // lower case; the bytes are the address in network order (RFC 4291 §2.2).
  auto a = ofld::wire::IpAddr::parse("2001:DB8:0:0:1:0:0:1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->is_v6());
  EXPECT_EQ(a->to_string(), "2001:db8::1:0:0:1");
  EXPECT_EQ(a->bytes[0], 0x20);
  EXPECT_EQ(a->bytes[1], 0x01);
  EXPECT_EQ(a->bytes[15], 0x01);
  auto b = ofld::wire::IpAddr::parse("192.0.2.1");  // RFC 5737 documentation address
  ASSERT_TRUE(b);
  EXPECT_EQ(b->family, 4);
  EXPECT_EQ((std::array<std::uint8_t, 4>{b->bytes[0], b->bytes[1], b->bytes[2], b->bytes[3]}),
            (std::array<std::uint8_t, 4>{192, 0, 2, 1}));
  EXPECT_FALSE(ofld::wire::IpAddr::parse("192.0.2.256"));
  EXPECT_EQ(ofld::wire::IpAddr{}.to_string(), "unset");
}

TEST(LayerOwnedTypes, IoResultStandsAlone) {
  ofld::io::Status ok = ofld::io::ok_status();
  EXPECT_TRUE(ok.ok());
  auto e = ofld::io::Result<int>::error("TUNSETIFF: Operation not permitted");
  EXPECT_TRUE(e.is_error());
  EXPECT_EQ(e.describe(), "error: TUNSETIFF: Operation not permitted");
  auto s = ofld::io::Status::from(ofld::io::Result<int>::skipped("not root"));
  EXPECT_TRUE(s.is_skipped());
  EXPECT_EQ(s.message(), "not root");
}
