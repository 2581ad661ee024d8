// rtnetlink link attributes (rtnetlink(7); do_setlink, net/core/rtnetlink.c).
#include "ofld/io/link.hpp"

#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace ofld::io {

namespace {

std::string sys_error(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Attribute numbers newer than Debian 12's <linux/if_link.h> (Linux 6.3, enum ifla order:
// IFLA_ALLMULTI 61, IFLA_DEVLINK_PORT 62, then these two).
constexpr unsigned short kIflaGsoIpv4MaxSize = 63;
constexpr unsigned short kIflaGroIpv4MaxSize = 64;

Status set_link_u32(const std::string& name, unsigned short type, std::uint32_t value,
                    const std::string& what);

}  // namespace

Status set_link_gso_max_segs(std::string_view ifname, std::uint32_t segs) {
  const std::string name(ifname);
  const std::string what = "gso_max_segs " + std::to_string(segs) + " on " + name;
  if (segs == 0 || segs > 65535) return Status::error(what + ": outside 1..65535");
  return set_link_u32(name, IFLA_GSO_MAX_SEGS, segs, what);
}

Status set_link_size_limits(std::string_view ifname, const LinkSizeLimits& l) {
  const std::string name(ifname);
  const struct {
    std::uint32_t v;
    unsigned short type;
    const char* word;
  } attrs[] = {{l.gso_max_size, IFLA_GSO_MAX_SIZE, "gso_max_size"},
               {l.gro_max_size, IFLA_GRO_MAX_SIZE, "gro_max_size"},
               {l.gso_ipv4_max_size, kIflaGsoIpv4MaxSize, "gso_ipv4_max_size"},
               {l.gro_ipv4_max_size, kIflaGroIpv4MaxSize, "gro_ipv4_max_size"}};
  for (const auto& a : attrs) {
    if (a.v == 0) continue;
    const std::string what = std::string(a.word) + " " + std::to_string(a.v) + " on " + name;
    if (a.v > kLinkMaxSize) return Status::error(what + ": above " + std::to_string(kLinkMaxSize));
    if (Status s = set_link_u32(name, a.type, a.v, what); !s) return s;
  }
  return ok_status();
}

namespace {

Status set_link_u32(const std::string& name, unsigned short type, std::uint32_t value,
                    const std::string& what) {
  const unsigned idx = ::if_nametoindex(name.c_str());
  if (idx == 0) return Status::error(sys_error(what, errno));
  struct {
    nlmsghdr nh;
    ifinfomsg ifi;
    alignas(NLA_ALIGNTO) std::uint8_t attrs[NLA_HDRLEN + 4];
  } req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(ifinfomsg)) + NLA_HDRLEN + 4;
  req.nh.nlmsg_type = RTM_NEWLINK;
  req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.nh.nlmsg_seq = 1;
  req.ifi.ifi_family = AF_UNSPEC;
  req.ifi.ifi_index = int(idx);
  nlattr a{};
  a.nla_len = NLA_HDRLEN + 4;
  a.nla_type = type;
  std::memcpy(req.attrs, &a, sizeof a);
  std::memcpy(req.attrs + NLA_HDRLEN, &value, 4);
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return Status::error(sys_error(what + ": netlink socket", errno));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  Status st = Status::error(what + ": no answer from the kernel");
  if (::sendto(fd, &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    st = Status::error(sys_error(what + ": netlink send", errno));
  } else {
    alignas(nlmsghdr) std::uint8_t buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0) {
      st = Status::error(sys_error(what + ": netlink receive", errno));
    } else {
      for (auto* nh = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(nh, n);
           nh = NLMSG_NEXT(nh, n)) {
        if (nh->nlmsg_type != NLMSG_ERROR) continue;
        if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) break;
        const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(nh));
        st = e->error == 0 ? ok_status() : Status::error(sys_error(what, -e->error));
        break;
      }
    }
  }
  ::close(fd);
  return st;
}

}  // namespace

namespace {

/// The attributes in [p, p + len) (RTA_ALIGNed nlattr records), each handed to f(type, data,
/// length); a record that claims more than is left ends the walk.
template <class F>
void each_attr(const std::uint8_t* p, std::size_t len, F&& f) {
  while (len >= NLA_HDRLEN) {
    nlattr a;
    std::memcpy(&a, p, sizeof a);
    if (a.nla_len < NLA_HDRLEN || a.nla_len > len) return;
    f(a.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN, std::size_t(a.nla_len - NLA_HDRLEN));
    const std::size_t step = NLA_ALIGN(a.nla_len);
    if (step >= len) return;
    p += step;
    len -= step;
  }
}

}  // namespace

Result<TunLinkInfo> tun_link_info(std::string_view ifname) {
  using R = Result<TunLinkInfo>;
  const std::string name(ifname);
  const std::string what = "link " + name;
  TunLinkInfo info;
  if (name.empty() || name.size() >= IFNAMSIZ) return info;  // no such link can exist
  struct {
    nlmsghdr nh;
    ifinfomsg ifi;
    alignas(NLA_ALIGNTO) std::uint8_t attrs[NLA_HDRLEN + IFNAMSIZ];
  } req{};
  const std::size_t alen = NLA_HDRLEN + name.size() + 1;
  req.nh.nlmsg_len = std::uint32_t(NLMSG_LENGTH(sizeof(ifinfomsg)) + NLA_ALIGN(alen));
  req.nh.nlmsg_type = RTM_GETLINK;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = 1;
  req.ifi.ifi_family = AF_UNSPEC;
  nlattr a{};
  a.nla_len = std::uint16_t(alen);
  a.nla_type = IFLA_IFNAME;
  std::memcpy(req.attrs, &a, sizeof a);
  std::memcpy(req.attrs + NLA_HDRLEN, name.c_str(), name.size() + 1);
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return R::error(sys_error(what + ": netlink socket", errno));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, &req, req.nh.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    const int e = errno;
    ::close(fd);
    return R::error(sys_error(what + ": netlink send", e));
  }
  std::vector<std::uint32_t> words(32768 / 4);  // nlmsghdr-aligned
  auto* buf = reinterpret_cast<std::uint8_t*>(words.data());
  const ssize_t got = ::recv(fd, buf, words.size() * 4, 0);
  const int rerr = errno;
  ::close(fd);
  if (got < 0) return R::error(sys_error(what + ": netlink receive", rerr));
  ssize_t n = got;  // signed and wider than nlmsg_len (NLMSG_OK compares the two)
  for (auto* nh = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
    if (nh->nlmsg_type == NLMSG_ERROR) {
      if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) break;
      const auto* e = static_cast<const nlmsgerr*>(NLMSG_DATA(nh));
      if (e->error == -ENODEV) return info;  // no such link
      return R::error(sys_error(what, -e->error));
    }
    if (nh->nlmsg_type != RTM_NEWLINK || nh->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) continue;
    info.exists = true;
    const auto* base = static_cast<const std::uint8_t*>(NLMSG_DATA(nh)) + NLMSG_ALIGN(sizeof(ifinfomsg));
    const std::size_t len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(ifinfomsg));
    each_attr(base, len, [&](unsigned type, const std::uint8_t* d, std::size_t dl) {
      if (type != IFLA_LINKINFO) return;
      each_attr(d, dl, [&](unsigned t2, const std::uint8_t* d2, std::size_t l2) {
        if (t2 == IFLA_INFO_KIND) info.kind.assign(reinterpret_cast<const char*>(d2), ::strnlen(reinterpret_cast<const char*>(d2), l2));
        if (t2 != IFLA_INFO_DATA) return;
        each_attr(d2, l2, [&](unsigned t3, const std::uint8_t* d3, std::size_t l3) {
          if (t3 == IFLA_TUN_TYPE && l3 >= 1) info.tap = (d3[0] & IFF_TAP) != 0;
          if (t3 == IFLA_TUN_MULTI_QUEUE && l3 >= 1) info.multi_queue = d3[0] != 0;
          if (t3 == IFLA_TUN_NUM_QUEUES && l3 >= 4) std::memcpy(&info.queues, d3, 4);
        });
      });
    });
    return info;
  }
  return R::error(what + ": no answer from the kernel");
}

}  // namespace ofld::io
