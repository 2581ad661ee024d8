// The control socket of an `ofld tunnel` endpoint, served off the data path: one thread with
// its own epoll loop, non-blocking client sockets, a bound on time and size per client and on
// the number of clients, replies written from a buffer as the client drains it. Requests are
// one line ("stats", "fdb", "who", ...); handlers run on the control thread and may answer
// later (a stats request waits for the workers' published snapshot).
//
// One owner per socket path: open() refuses a path on which a live endpoint answers, takes
// over only a stale socket file, creates the socket 0660 (optionally with a configured
// group) and the destructor unlinks the path only if it is still the socket it bound.
// Access: every request is Read (anyone allowed to connect: owner, group, root) or Owner
// (changes state: the endpoint's uid or root only, checked with SO_PEERCRED in one place,
// control_allowed). Other listeners (a future metrics endpoint) can share the loop via watch().
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/io/result.hpp"

namespace ofld::daemon {

/// The credentials of a connected client (SO_PEERCRED, taken when it connected).
struct ControlPeer {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

/// Who may send a request (README "Control socket: who may do what").
enum class ControlAccess : std::uint8_t {
  Read,   ///< reads state: anyone the socket's mode and group let connect
  Owner,  ///< changes state: the endpoint's own uid or root (uid 0) only
};

/// The access policy, in one place: may `peer` send a request of kind `a` to an endpoint
/// running as `owner`?
bool control_allowed(ControlAccess a, const ControlPeer& peer, uid_t owner) noexcept;

/// Per-client and overall bounds. Times in milliseconds.
struct ControlLimits {
  unsigned max_clients = 64;            ///< at the cap, the oldest client without a request is closed
  std::uint32_t request_timeout_ms = 2000;  ///< a client without a complete request line is closed
  std::uint32_t answer_timeout_ms = 5000;   ///< a handler that does not answer: the client is closed
  std::uint32_t drain_timeout_ms = 5000;    ///< a reply that does not drain for this long: closed
  std::size_t max_request = 1024;       ///< bytes of a request line (longer: an error reply)
  std::size_t max_buffered = 256u << 20;  ///< bytes of unwritten replies, all clients together
};

struct ControlSocketOptions {
  std::string path;         ///< the socket file (AF_UNIX, SOCK_STREAM)
  std::string group;        ///< `control-group`: the socket's group ("" = the process's)
  ControlLimits limits;
  nlohmann::json identity;  ///< answered to "who" (plus "pid" and "uid"); names the endpoint
};

/// Counters of the control server (stats "control"); every closed client has a reason.
struct ControlCounters {
  std::uint64_t accepted = 0, requests = 0, replies = 0;
  std::uint64_t closed_idle = 0;      ///< no complete request within request_timeout_ms
  std::uint64_t closed_stalled = 0;   ///< reply not draining for drain_timeout_ms
  std::uint64_t closed_unanswered = 0;  ///< handler did not answer within answer_timeout_ms
  std::uint64_t evicted = 0;          ///< closed without a request to make room (max_clients)
  std::uint64_t refused_busy = 0;     ///< at max_clients with every client busy: refused
  std::uint64_t denied = 0;           ///< Owner request from another uid
  std::uint64_t bad_requests = 0;     ///< unknown or too long
  std::uint64_t over_buffer = 0;      ///< reply refused: max_buffered reached
  nlohmann::json to_json() const;
};

/// Ask whoever listens on `path`: nullopt when nothing does (no file, or a stale socket:
/// ECONNREFUSED), else its "who" answer (an empty object when it does not say who it is).
std::optional<nlohmann::json> probe_control(const std::string& path, int timeout_ms = 1000);

class ControlServer {
 public:
  /// The answer to one request: send() once, on the control thread (from the handler or
  /// later, e.g. from a watch() callback). Dropping it unsent leaves the client to time out.
  class Reply {
   public:
    Reply() = default;
    /// Queue `body` (one JSON document and a newline) for the client; false if it is gone.
    bool send(std::string body);
    /// A large answer in pieces: `more(out)` appends the next piece to the (empty) `out`
    /// each time the client has taken the previous one, and returns false with the last.
    /// Only one piece is buffered per client; the control thread makes a piece at a time.
    bool stream(std::function<bool(std::string& out)> more);
    const ControlPeer& peer() const noexcept { return peer_; }

   private:
    friend class ControlServer;
    ControlServer* srv_ = nullptr;
    std::uint64_t id_ = 0;
    ControlPeer peer_;
  };
  /// A request handler: `args` is the rest of the line after the request's name.
  using Handler = std::function<void(const std::string& args, Reply reply)>;

  /// Own the socket at opts.path (see the file comment); errors name the path and, when a
  /// live endpoint holds it, that endpoint.
  static io::Result<std::unique_ptr<ControlServer>> open(ControlSocketOptions opts);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  /// Register request `name` (before start()). The empty request (a client that only shuts
  /// its side) is "stats".
  void handle(const std::string& name, ControlAccess access, Handler h);
  /// Call `on_ready` on the control thread when `fd` is readable (before start()).
  void watch(int fd, std::function<void()> on_ready);
  /// Called on the control thread every loop iteration (at least every `max_wait_ms`).
  void on_tick(std::function<void()> f) { tick_ = std::move(f); }
  /// Wake the loop no later than `ns` (CLOCK_MONOTONIC); control thread only.
  void wake_at(std::uint64_t ns) noexcept {
    if (!wake_at_ || ns < wake_at_) wake_at_ = ns;
  }

  void start();
  void stop() noexcept;
  const std::string& path() const noexcept { return path_; }
  uid_t owner() const noexcept { return owner_; }
  /// A copy of the counters (any thread).
  ControlCounters counters() const;
  /// Clients connected now (any thread).
  unsigned clients() const noexcept { return nclients_.load(std::memory_order_relaxed); }

 private:
  struct Client;
  struct Route {
    ControlAccess access;
    Handler h;
  };
  ControlServer() = default;
  void loop();
  static void guarded(const char* what, const std::function<void()>& f) noexcept;
  void accept_all();
  void on_client(std::uint64_t id, std::uint32_t events);
  void dispatch(Client& c, std::string line);
  bool queue_reply(std::uint64_t id, std::string body,
                   std::function<bool(std::string&)> more = nullptr);
  void flush(Client& c);
  void close_client(std::uint64_t id);
  void expire(std::uint64_t now);
  void set_events(Client& c, std::uint32_t ev);

  int lfd_ = -1, ep_ = -1, wake_ = -1;
  std::string path_;
  dev_t st_dev_ = 0;
  ino_t st_ino_ = 0;
  uid_t owner_ = 0;
  ControlLimits lim_;
  nlohmann::json identity_;
  std::map<std::string, Route> routes_;
  std::vector<std::pair<int, std::function<void()>>> watches_;
  std::function<void()> tick_;
  std::map<std::uint64_t, std::unique_ptr<Client>> clients_;  // by id: oldest first
  std::uint64_t next_id_ = 16;  // epoll keys below 16: listener, wake, watches
  std::uint64_t wake_at_ = 0;
  std::size_t buffered_ = 0;
  std::atomic<unsigned> nclients_{0};
  std::atomic<bool> stop_{false};
  std::thread th_;
  struct Counts {  // ControlCounters, written by the control thread, read by any
    std::atomic<std::uint64_t> accepted{0}, requests{0}, replies{0}, closed_idle{0},
        closed_stalled{0}, closed_unanswered{0}, evicted{0}, refused_busy{0}, denied{0},
        bad_requests{0}, over_buffer{0};
  } n_;
};

}  // namespace ofld::daemon
