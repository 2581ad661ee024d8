// libFuzzer target: arbitrary bytes from a control-socket client (src/daemon/control_server),
// written in arbitrary pieces, then the client's side shut. One server for the whole run on
// a private socket path. Whatever the bytes, the server answers one JSON document (an answer
// or an error) and closes, and stays up for the next client; a missing or non-JSON answer
// aborts (a finding).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "../src/daemon/control_server.hpp"

namespace {

using ofld::daemon::ControlAccess;
using ofld::daemon::ControlServer;

ControlServer* server() {
  static std::unique_ptr<ControlServer> s = [] {
    ofld::daemon::ControlSocketOptions o;
    o.path = "/tmp/ofld-ctlfuzz-" + std::to_string(::getpid()) + ".sock";
    o.limits.max_request = 256;
    o.identity = {{"ofld", "fuzz"}};
    auto r = ControlServer::open(o);
    if (!r.ok()) std::abort();
    auto srv = std::move(r.value());
    srv->handle("stats", ControlAccess::Read,
                [](const std::string&, ControlServer::Reply r) { r.send("{\"tx\":1}\n"); });
    srv->handle("echo", ControlAccess::Read, [](const std::string& a, ControlServer::Reply r) {
      r.send(nlohmann::json{{"args_bytes", a.size()}}.dump() + "\n");
    });
    srv->handle("pieces", ControlAccess::Read, [](const std::string& a, ControlServer::Reply r) {
      // one JSON array in pieces: "[", then "1," per piece, then "1]\n"
      auto left = std::make_shared<std::size_t>(a.size() % 5 + 1);
      r.stream([left, first = true](std::string& out) mutable {
        if (first) out += "[";
        first = false;
        if (--*left == 0) {
          out += "1]\n";
          return false;
        }
        out += "1,";
        return true;
      });
    });
    srv->start();
    return srv;
  }();
  return s.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ControlServer* srv = server();
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 64;  // how the bytes are cut into writes
  ++data, --size;
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, srv->path().c_str(), sizeof sa.sun_path - 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0) std::abort();
  for (std::size_t off = 0; off < size; off += piece) {
    const std::size_t n = std::min(piece, size - off);
    if (::send(s, data + off, n, MSG_NOSIGNAL) < 0) break;  // the server answered and closed
  }
  ::shutdown(s, SHUT_WR);
  std::string out;
  for (;;) {
    pollfd pf{s, POLLIN, 0};
    // no answer and no close within 20 s: a hang (the server answers in microseconds; the
    // margin is for a loaded machine)
    if (::poll(&pf, 1, 20000) <= 0) std::abort();
    char b[4096];
    ssize_t n = ::read(s, b, sizeof b);
    if (n <= 0) break;
    out.append(b, std::size_t(n));
  }
  ::close(s);
  // The answer of a request line: what comes after the first line is never read.
  if (out.empty() || out.back() != '\n') std::abort();
  if (nlohmann::json::parse(out, nullptr, false).is_discarded()) std::abort();
  return 0;
}
