// io::UniqueFd, the one owner of a descriptor in the io layer: it closes what it owns exactly
// once (on destruction, reset or being moved over), and a moved-from owner holds nothing. Whether
// a descriptor is still open is asked of the kernel (fcntl(F_GETFD) fails with EBADF, POSIX).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <type_traits>
#include <utility>

#include "ofld/io/packet_socket.hpp"
#include "ofld/io/raw_ip_socket.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/io/tun.hpp"
#include "ofld/io/udp_socket.hpp"
#include "ofld/io/unique_fd.hpp"

namespace {

using ofld::io::UniqueFd;

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

int open_null() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

TEST(IoUniqueFd, EmptyOwnsNothing) {
  UniqueFd e;
  EXPECT_FALSE(e);
  EXPECT_EQ(e.get(), -1);
  UniqueFd n(-1);
  EXPECT_FALSE(n);
}

TEST(IoUniqueFd, ClosesOnDestruction) {
  const int fd = open_null();
  {
    UniqueFd u(fd);
    EXPECT_TRUE(u);
    EXPECT_EQ(u.get(), fd);
    EXPECT_TRUE(is_open(fd));
  }
  EXPECT_FALSE(is_open(fd));
}

TEST(IoUniqueFd, MoveTransfersOwnershipAndClosesTheOverwrittenOne) {
  const int a = open_null(), b = open_null();
  UniqueFd ua(a), ub(b);
  UniqueFd moved(std::move(ua));
  EXPECT_FALSE(ua);  // NOLINT(bugprone-use-after-move): the moved-from state is the subject
  EXPECT_EQ(moved.get(), a);
  ub = std::move(moved);  // b is closed, a now belongs to ub
  EXPECT_FALSE(is_open(b));
  EXPECT_TRUE(is_open(a));
  EXPECT_EQ(ub.get(), a);
  EXPECT_FALSE(moved);  // NOLINT(bugprone-use-after-move)
  auto& self = ub;
  ub = std::move(self);  // self-move keeps the descriptor open
  EXPECT_TRUE(is_open(a));
  ub.reset();
  EXPECT_FALSE(is_open(a));
  EXPECT_FALSE(ub);
}

TEST(IoUniqueFd, ReleaseGivesUpWithoutClosingResetReplaces) {
  const int a = open_null(), b = open_null();
  UniqueFd u(a);
  const int r = u.release();
  EXPECT_EQ(r, a);
  EXPECT_FALSE(u);
  EXPECT_TRUE(is_open(a));
  u.reset(a);
  u.reset(a);  // the same descriptor again: kept, not closed
  EXPECT_TRUE(is_open(a));
  u.reset(b);
  EXPECT_FALSE(is_open(a));
  EXPECT_TRUE(is_open(b));
  u.reset();
  EXPECT_FALSE(is_open(b));
}

TEST(IoUniqueFd, DescriptorOwnersAreMoveOnly) {
  static_assert(!std::is_copy_constructible_v<UniqueFd> && !std::is_copy_assignable_v<UniqueFd>);
  static_assert(std::is_nothrow_move_constructible_v<UniqueFd> && std::is_nothrow_move_assignable_v<UniqueFd>);
  static_assert(std::is_nothrow_move_constructible_v<ofld::io::UdpSocket> && !std::is_copy_constructible_v<ofld::io::UdpSocket>);
  static_assert(std::is_nothrow_move_assignable_v<ofld::io::RawIpSocket> && !std::is_copy_assignable_v<ofld::io::RawIpSocket>);
  static_assert(std::is_nothrow_move_assignable_v<ofld::io::PacketSocket>);
  static_assert(std::is_nothrow_move_assignable_v<ofld::io::Tap> && std::is_nothrow_move_assignable_v<ofld::io::Tun>);
  SUCCEED();
}

}  // namespace
