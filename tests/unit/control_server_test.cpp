// The control socket's server (src/daemon/control_server.hpp): bounds per client (idle, not
// reading, too many), streamed large replies beside other clients, one owner per socket path
// (a live endpoint refuses a second, a stale file is taken over, only our own file is
// unlinked), mode 0660 and control-group, and the access policy checked with SO_PEERCRED for
// a client running under another uid. No network namespace needed: AF_UNIX sockets in a
// private temporary directory.
#include <gtest/gtest.h>

#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "../../src/daemon/control_server.hpp"
#include "ofld/daemon/config.hpp"

namespace {

using namespace ofld::daemon;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct TmpDir {
  std::string dir;
  TmpDir() {
    char t[] = "/tmp/ofld-ctlsrv-XXXXXX";
    dir = ::mkdtemp(t);
    ::chmod(dir.c_str(), 0755);  // a client under another uid must reach the socket
  }
  ~TmpDir() { std::filesystem::remove_all(dir); }
  std::string path(const std::string& n) const { return dir + "/" + n; }
};

int connect_to(const std::string& path) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) {
    ::close(s);
    return -1;
  }
  return s;
}

/// Read until EOF or `ms`; the bytes and whether EOF came.
std::pair<std::string, bool> read_all(int s, int ms) {
  std::string out;
  const auto end = Clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
    if (left <= 0) return {out, false};
    pollfd pf{s, POLLIN, 0};
    if (::poll(&pf, 1, int(left)) <= 0) return {out, false};
    char b[65536];
    ssize_t n = ::read(s, b, sizeof b);
    if (n == 0) return {out, true};
    if (n < 0) return {out, true};  // reset by the server: closed
    out.append(b, std::size_t(n));
  }
}

/// One request, the whole answer (within `ms`).
std::string ask(const std::string& path, const std::string& req, int ms = 2000) {
  int s = connect_to(path);
  if (s < 0) return "connect failed";
  if (!req.empty()) {
    std::string l = req + "\n";
    if (::send(s, l.data(), l.size(), MSG_NOSIGNAL) < 0) return "send failed";
  }
  ::shutdown(s, SHUT_WR);
  auto [out, eof] = read_all(s, ms);
  ::close(s);
  return eof ? out : "timeout: " + out;
}

std::unique_ptr<ControlServer> open_server(const std::string& path, ControlLimits lim = {},
                                           const std::string& group = "") {
  ControlSocketOptions o;
  o.path = path;
  o.limits = lim;
  o.group = group;
  o.identity = {{"ofld", "tunnel"}, {"dev", "ctlsrv0"}};
  auto r = ControlServer::open(o);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return nullptr;
  auto s = std::move(r.value());
  s->handle("stats", ControlAccess::Read,
            [](const std::string&, ControlServer::Reply r) { r.send("{\"tx\":1}\n"); });
  s->handle("big", ControlAccess::Read, [](const std::string& a, ControlServer::Reply r) {
    const std::size_t n = a.empty() ? 32u << 20 : std::stoul(a);
    std::string body = "\"" + std::string(n, 'x') + "\"\n";
    r.send(std::move(body));
  });
  s->handle("pieces", ControlAccess::Read, [](const std::string& a, ControlServer::Reply r) {
    auto left = std::make_shared<int>(std::stoi(a));  // pieces of 100,000 bytes: '0'..'9'
    r.stream([left](std::string& out) {
      out.append(100000, char('0' + *left % 10));
      return --*left > 0;
    });
  });
  s->handle("set", ControlAccess::Owner,
            [](const std::string&, ControlServer::Reply r) { r.send("{\"ok\":true}\n"); });
  return s;
}

TEST(ControlAccessPolicy, ReadForAnyConnectedPeerOwnerOnlyForOwnerUidOrRoot) {
  const uid_t owner = 1000;
  EXPECT_TRUE(control_allowed(ControlAccess::Read, {1, 4242, 4242}, owner));
  EXPECT_TRUE(control_allowed(ControlAccess::Owner, {1, 1000, 4242}, owner));
  EXPECT_TRUE(control_allowed(ControlAccess::Owner, {1, 0, 0}, owner));
  EXPECT_FALSE(control_allowed(ControlAccess::Owner, {1, 4242, 1000}, owner));  // group is not enough
  EXPECT_FALSE(control_allowed(ControlAccess::Owner, {1, uid_t(-1), gid_t(-1)}, owner));
}

TEST(ControlServer, AnswersRequestsWhoAndUnknown) {
  TmpDir t;
  auto s = open_server(t.path("a.sock"));
  ASSERT_TRUE(s);
  s->start();
  EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");
  EXPECT_EQ(ask(s->path(), ""), "{\"tx\":1}\n");  // no request: the stats
  auto who = json::parse(ask(s->path(), "who"));
  EXPECT_EQ(who["dev"], "ctlsrv0");
  EXPECT_EQ(who["pid"], long(::getpid()));
  auto e = json::parse(ask(s->path(), "nosuch"));
  EXPECT_NE(e["error"].get<std::string>().find("unknown request 'nosuch'"), std::string::npos);
  // a request that is not UTF-8: an error document, not an exception on the control thread
  auto bin = json::parse(ask(s->path(), "\xff\xfe\x80 x"), nullptr, false);
  ASSERT_TRUE(bin.is_object());
  EXPECT_TRUE(bin.contains("error"));
  EXPECT_EQ(s->counters().bad_requests, 2u);
  EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");
}

TEST(ControlServer, IdleClientIsClosedAfterRequestTimeoutOthersServedMeanwhile) {
  TmpDir t;
  ControlLimits lim;
  lim.request_timeout_ms = 1500;
  auto s = open_server(t.path("a.sock"), lim);
  ASSERT_TRUE(s);
  s->start();
  int idle = connect_to(s->path());
  ASSERT_GE(idle, 0);
  const auto t0 = Clock::now();
  // while it idles, another client is answered at once
  const auto q0 = Clock::now();
  EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");
  EXPECT_LT(Clock::now() - q0, std::chrono::milliseconds(1000));  // not after the idle one
  auto [out, eof] = read_all(idle, 6000);
  const auto waited = Clock::now() - t0;
  EXPECT_TRUE(eof);
  EXPECT_EQ(out, "");  // closed without an answer
  EXPECT_GE(waited, std::chrono::milliseconds(1400));
  EXPECT_LT(waited, std::chrono::milliseconds(5000));
  ::close(idle);
  for (int i = 0; i < 100 && s->counters().closed_idle == 0; ++i)  // counted just after the close
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(s->counters().closed_idle, 1u);
}

TEST(ControlServer, LongRequestLineIsAnErrorNotABuffer) {
  TmpDir t;
  auto s = open_server(t.path("a.sock"));
  ASSERT_TRUE(s);
  s->start();
  auto e = json::parse(ask(s->path(), std::string(5000, 'a')), nullptr, false);
  ASSERT_TRUE(e.is_object());
  EXPECT_NE(e.value("error", "").find("longer than 1024"), std::string::npos);
}

TEST(ControlServer, ClientThatNeverReadsIsClosedWhenItsReplyStopsDraining) {
  TmpDir t;
  ControlLimits lim;
  lim.drain_timeout_ms = 3000;
  auto s = open_server(t.path("a.sock"), lim);
  ASSERT_TRUE(s);
  s->start();
  int slow = connect_to(s->path());
  ASSERT_GE(slow, 0);
  const std::string req = "big 33554432\n";  // 32 MiB: far more than the socket buffers
  ASSERT_EQ(::send(slow, req.data(), req.size(), MSG_NOSIGNAL), ssize_t(req.size()));
  const auto t0 = Clock::now();
  while (s->counters().replies == 0 && Clock::now() - t0 < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the 32 MiB reply is queued
  ASSERT_EQ(s->counters().replies, 1u);
  // the stalled reply blocks nobody: each answer comes well before the drain timeout
  for (int i = 0; i < 5; ++i) {
    const auto q0 = Clock::now();
    EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");
    EXPECT_LT(Clock::now() - q0, std::chrono::milliseconds(1000));
  }
  EXPECT_EQ(s->counters().closed_stalled, 0u);
  while (s->counters().closed_stalled == 0 && Clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(s->counters().closed_stalled, 1u);
  EXPECT_EQ(s->clients(), 0u);
  ::close(slow);
}

TEST(ControlServer, LargeReplyIsStreamedWhole) {
  TmpDir t;
  auto s = open_server(t.path("a.sock"));
  ASSERT_TRUE(s);
  s->start();
  int c = connect_to(s->path());
  ASSERT_GE(c, 0);
  const std::string req = "big 20000000\n";
  ASSERT_EQ(::send(c, req.data(), req.size(), MSG_NOSIGNAL), ssize_t(req.size()));
  // read it slowly in pieces while other clients are answered
  std::string got;
  for (int i = 0; i < 4; ++i) {
    char b[65536];
    ssize_t n = ::read(c, b, sizeof b);
    ASSERT_GT(n, 0);
    got.append(b, std::size_t(n));
    EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto [rest, eof] = read_all(c, 10000);
  ::close(c);
  EXPECT_TRUE(eof);
  got += rest;
  ASSERT_EQ(got.size(), 20000000u + 3u);
  EXPECT_EQ(got.front(), '"');
  EXPECT_EQ(got.substr(got.size() - 2), "\"\n");
  EXPECT_EQ(got.find_first_not_of('x', 1), got.size() - 2);
}

TEST(ControlServer, StreamedReplyComesWholeAndInOrderWhileOthersAreServed) {
  TmpDir t;
  ControlLimits lim;
  lim.max_buffered = 1 << 20;  // one piece at a time: 30 pieces of 100 kB never exceed it
  auto s = open_server(t.path("a.sock"), lim);
  ASSERT_TRUE(s);
  s->start();
  int c = connect_to(s->path());
  ASSERT_GE(c, 0);
  ASSERT_EQ(::send(c, "pieces 30\n", 10, MSG_NOSIGNAL), 10);
  std::string got;
  char b[4096];
  ssize_t n = ::read(c, b, sizeof b);
  ASSERT_GT(n, 0);
  got.append(b, std::size_t(n));
  EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");  // served while the stream waits
  auto [rest, eof] = read_all(c, 10000);
  ::close(c);
  EXPECT_TRUE(eof);
  got += rest;
  ASSERT_EQ(got.size(), 30u * 100000u);
  for (int p = 0; p < 30; ++p)  // piece p carries the digit (30 - p) % 10
    EXPECT_EQ(got.find_first_not_of(char('0' + (30 - p) % 10), std::size_t(p) * 100000),
              p == 29 ? std::string::npos : std::size_t(p + 1) * 100000) << p;
  EXPECT_EQ(s->counters().over_buffer, 0u);
}

TEST(ControlServer, ReplyOverTheBufferBoundIsRefusedWithAnError) {
  TmpDir t;
  ControlLimits lim;
  lim.max_buffered = 1 << 20;
  auto s = open_server(t.path("a.sock"), lim);
  ASSERT_TRUE(s);
  s->start();
  auto e = json::parse(ask(s->path(), "big 2000000"), nullptr, false);
  ASSERT_TRUE(e.is_object());
  EXPECT_NE(e.value("error", "").find("busy"), std::string::npos);
  EXPECT_EQ(s->counters().over_buffer, 1u);
  EXPECT_EQ(ask(s->path(), "big 1000"), "\"" + std::string(1000, 'x') + "\"\n");
}

TEST(ControlServer, FloodOfIdleConnectionsDoesNotLockOutARequest) {
  TmpDir t;
  ControlLimits lim;
  lim.max_clients = 8;
  auto s = open_server(t.path("a.sock"), lim);
  ASSERT_TRUE(s);
  s->start();
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    int c = connect_to(s->path());
    ASSERT_GE(c, 0) << i;
    idle.push_back(c);
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ask(s->path(), "stats"), "{\"tx\":1}\n");
  EXPECT_LE(s->clients(), 8u);
  EXPECT_GE(s->counters().evicted, 92u);
  for (int c : idle) ::close(c);
}

TEST(ControlServer, SecondOwnerIsRefusedWhileTheFirstLivesAndTheFirstStillAnswers) {
  TmpDir t;
  const std::string p = t.path("a.sock");
  auto first = open_server(p);
  ASSERT_TRUE(first);
  first->start();
  ControlSocketOptions o;
  o.path = p;
  auto second = ControlServer::open(o);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find(p), std::string::npos) << second.message();
  EXPECT_NE(second.message().find("ofld tunnel dev ctlsrv0"), std::string::npos) << second.message();
  EXPECT_NE(second.message().find("pid " + std::to_string(::getpid())), std::string::npos);
  EXPECT_EQ(ask(p, "stats"), "{\"tx\":1}\n");
}

TEST(ControlServer, StaleSocketFileIsTakenOver) {
  TmpDir t;
  const std::string p = t.path("a.sock");
  {  // a socket file nobody listens on (an endpoint that was killed)
    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::strncpy(sa.sun_path, p.c_str(), sizeof sa.sun_path - 1);
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    ::close(s);
  }
  auto srv = open_server(p);
  ASSERT_TRUE(srv);
  srv->start();
  EXPECT_EQ(ask(p, "stats"), "{\"tx\":1}\n");
}

TEST(ControlServer, PathThatIsNotASocketIsLeftAlone) {
  TmpDir t;
  const std::string p = t.path("a.sock");
  { std::FILE* f = std::fopen(p.c_str(), "w"); std::fputs("keep", f); std::fclose(f); }
  ControlSocketOptions o;
  o.path = p;
  auto r = ControlServer::open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("not a socket"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_regular_file(p));
}

TEST(ControlServer, ExitUnlinksThePathOnlyIfItIsStillItsSocket) {
  TmpDir t;
  const std::string p = t.path("a.sock");
  {
    auto s = open_server(p);
    ASSERT_TRUE(s);
  }
  EXPECT_FALSE(std::filesystem::exists(p));  // ours: removed
  auto s = open_server(p);
  ASSERT_TRUE(s);
  // someone else's socket now sits at the path (replaced behind our back)
  ::unlink(p.c_str());
  int other = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, p.c_str(), sizeof sa.sun_path - 1);
  ASSERT_EQ(::bind(other, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  s.reset();
  EXPECT_TRUE(std::filesystem::exists(p));  // not ours: kept
  ::close(other);
}

TEST(ControlServer, SocketIsMode0660WhateverTheUmaskWithTheConfiguredGroup) {
  TmpDir t;
  const std::string p = t.path("a.sock");
  group* g = ::getgrnam("nogroup");
  if (!g) GTEST_SKIP() << "no group 'nogroup' on this system";
  const gid_t gid = g->gr_gid;
  const mode_t old = ::umask(0);
  auto s = open_server(p, {}, "nogroup");
  ::umask(old);
  ASSERT_TRUE(s);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, gid);
  ControlSocketOptions o;
  o.path = t.path("b.sock");
  o.group = "no-such-group-ofld";
  auto r = ControlServer::open(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("control-group no-such-group-ofld: no such group"), std::string::npos);
}

/// In a forked child running as uid/gid: connect and send each request; the exit code has
/// bit i set when request i was answered without "error" (255: could not connect).
int as_user(const std::string& path, uid_t uid, gid_t gid, const std::vector<std::string>& reqs) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0)
      ::_exit(254);
    int bits = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      int s = connect_to(path);
      if (s < 0) ::_exit(255);
      std::string l = reqs[i] + "\n";
      if (::send(s, l.data(), l.size(), MSG_NOSIGNAL) < 0) ::_exit(253);
      ::shutdown(s, SHUT_WR);
      auto [out, eof] = read_all(s, 2000);
      ::close(s);
      if (eof && !out.empty() && out.find("\"error\"") == std::string::npos) bits |= 1 << i;
    }
    ::_exit(bits);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(ControlServer, StateChangingRequestNeedsTheOwnerUidOrRootPeerCredentials) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (a client under another uid via setresuid)";
  group* g = ::getgrnam("nogroup");
  if (!g) GTEST_SKIP() << "no group 'nogroup' on this system";
  const gid_t gid = g->gr_gid;
  TmpDir t;
  auto s = open_server(t.path("a.sock"), {}, "nogroup");
  ASSERT_TRUE(s);
  s->start();
  // a member of the control group: reads, but may not change state
  EXPECT_EQ(as_user(s->path(), 65534, gid, {"stats", "set", "who"}), 0b101);
  EXPECT_EQ(s->counters().denied, 1u);
  // neither owner nor group: the file mode (0660) keeps it out
  EXPECT_EQ(as_user(s->path(), 65534, gid + 1 == 0 ? 1 : gid - 1, {"stats"}), 255);
  // the owner (root here)
  EXPECT_EQ(ask(s->path(), "set"), "{\"ok\":true}\n");
}

}  // namespace

namespace {

TEST(ControlGroupSetting, TomlKeyAndOptionSetTheGroup) {
  auto p = ofld::daemon::parse_toml(
      "control-group = \"ofld\"\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<ofld::daemon::DaemonConfig>(p));
  EXPECT_EQ(std::get<ofld::daemon::DaemonConfig>(p).control_group, "ofld");
  ofld::daemon::DaemonConfig c;
  EXPECT_FALSE(ofld::daemon::apply_setting(c, "control-group", {"adm"}));
  EXPECT_EQ(c.control_group, "adm");
  auto e = ofld::daemon::apply_setting(c, "control-group", {""});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("control-group"), std::string::npos);
}

}  // namespace
