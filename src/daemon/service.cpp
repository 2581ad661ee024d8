// `ofld tunnel` as a service: sd_notify, privilege drop, log format, drop reports.
#include "ofld/daemon/service.hpp"

#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <vector>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#ifdef OFLD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace ofld::daemon {

bool notify(std::string_view state) noexcept {
#ifdef OFLD_HAVE_SYSTEMD
  try {
    const std::string s(state);
    return ::sd_notify(0, s.c_str()) > 0;
  } catch (...) {
    return false;
  }
#else
  (void)state;
  return false;
#endif
}

std::uint64_t caps_after_start(const DaemonConfig& cfg) noexcept {
  // Transmit sockets opened per flow's source port later (VXLAN) are sized with SO_SNDBUFFORCE.
  if (cfg.offload && tunnel::make_encapsulation(cfg.tunnel)->flow_src_ports()) return cap_bit(CAP_NET_ADMIN);
  return 0;
}

namespace {

std::string err(const std::string& step) { return step + ": " + std::strerror(errno); }

int capset_sets(std::uint64_t eff, std::uint64_t perm, std::uint64_t inh) {
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2]{};
  d[0].effective = std::uint32_t(eff);
  d[1].effective = std::uint32_t(eff >> 32);
  d[0].permitted = std::uint32_t(perm);
  d[1].permitted = std::uint32_t(perm >> 32);
  d[0].inheritable = std::uint32_t(inh);
  d[1].inheritable = std::uint32_t(inh >> 32);
  return int(::syscall(SYS_capset, &h, d));
}

int last_cap() {
  std::ifstream f("/proc/sys/kernel/cap_last_cap");
  int n = CAP_LAST_CAP;
  f >> n;
  return n;
}

}  // namespace

io::Status drop_privileges(const std::string& user, std::uint64_t keep) {
  const std::string who = user.empty() ? "capabilities" : "user " + user;
  // Bounding set first (needs CAP_SETPCAP, which we still have as root); a process without
  // it (already unprivileged) skips this step: its bounding set is then systemd's.
  if (::prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) >= 0) {
    for (int c = 0; c <= last_cap(); ++c)
      if (!(keep & cap_bit(unsigned(c))) && ::prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1 &&
          ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EPERM)
        return io::Status::error(who + ": " + err("PR_CAPBSET_DROP"));
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (!user.empty()) {
    passwd pw{}, *res = nullptr;
    std::vector<char> buf(16384);
    uid_t uid = 0;
    gid_t gid = 0;
    std::string name = user;
    if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &res) == 0 && res) {
      uid = pw.pw_uid, gid = pw.pw_gid;
    } else {
      unsigned long n = 0;
      auto [p, ec] = std::from_chars(user.data(), user.data() + user.size(), n);
      if (ec != std::errc() || p != user.data() + user.size() || n > 0xFFFFFFFEul)
        return io::Status::error(who + ": no such user");
      uid = uid_t(n);
      gid = uid_t(n);
      if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) == 0 && res) gid = pw.pw_gid, name = pw.pw_name;
    }
    if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return io::Status::error(who + ": " + err("PR_SET_KEEPCAPS"));
    int ng = 64;
    std::vector<gid_t> groups(64);
    if (res && ::getgrouplist(name.c_str(), gid, groups.data(), &ng) < 0) {
      groups.resize(std::size_t(ng));
      ::getgrouplist(name.c_str(), gid, groups.data(), &ng);
    }
    if (!res) ng = 0;
    groups.resize(std::size_t(ng));
    if (::setgroups(groups.size(), groups.data()) != 0) return io::Status::error(who + ": " + err("setgroups"));
    if (::setresgid(gid, gid, gid) != 0) return io::Status::error(who + ": " + err("setresgid"));
    if (::setresuid(uid, uid, uid) != 0) return io::Status::error(who + ": " + err("setresuid"));
    ::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  }
  // never more than the process has: a capability not permitted cannot be kept (capset
  // refuses to raise), e.g. an unprivileged process on a device made for it keeps nothing
  {
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2]{};
    if (::syscall(SYS_capget, &h, d) == 0)
      keep &= std::uint64_t(d[0].permitted) | (std::uint64_t(d[1].permitted) << 32);
  }
  if (capset_sets(keep, keep, 0) != 0) return io::Status::error(who + ": " + err("capset"));
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return io::Status::error(who + ": " + err("PR_SET_NO_NEW_PRIVS"));
  return io::ok_status();
}

std::uint64_t effective_caps() noexcept {
  try {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("CapEff:", 0) == 0) return std::stoull(line.substr(7), nullptr, 16);
  } catch (...) {
  }
  return 0;
}

std::optional<LogFormat> parse_log_format(std::string_view s) noexcept {
  if (s == "text") return LogFormat::Text;
  if (s == "json") return LogFormat::Json;
  return std::nullopt;
}

namespace {

bool key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'; }

/// Split "words k=v k2="a b"" into the leading message and the trailing fields. Only a run of
/// key=value words at the end counts as fields; anything else stays in the message.
void split_fields(std::string_view m, std::string_view& msg,
                  std::vector<std::pair<std::string_view, std::string>>& fields) {
  fields.clear();
  std::size_t end = m.size();
  while (end > 0) {
    std::size_t eq;
    std::string_view val;
    if (end >= 2 && m[end - 1] == '"') {  // key="quoted value" (no quote inside)
      const auto q = m.rfind('"', end - 2);
      if (q == std::string_view::npos || q == 0 || m[q - 1] != '=') break;
      eq = q - 1;
      val = m.substr(q + 1, end - q - 2);
    } else {  // key=word
      const auto sp = m.rfind(' ', end - 1);
      const std::size_t ws = sp == std::string_view::npos ? 0 : sp + 1;
      const auto e = m.substr(ws, end - ws).find('=');
      if (e == std::string_view::npos) break;
      eq = ws + e;
      val = m.substr(eq + 1, end - eq - 1);
      if (val.empty() || val.find('"') != std::string_view::npos) break;
    }
    if (eq == 0) break;
    const auto sp = m.rfind(' ', eq - 1);
    const std::size_t ks = sp == std::string_view::npos ? 0 : sp + 1;
    const auto key = m.substr(ks, eq - ks);
    bool ok = !key.empty();
    for (char c : key) ok &= key_char(c);
    if (!ok) break;
    fields.insert(fields.begin(), {key, std::string(val)});
    end = ks ? ks - 1 : 0;
  }
  msg = m.substr(0, end);
}

void json_escape(std::string_view s, spdlog::memory_buf_t& out) {
  static const char* hex = "0123456789abcdef";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(char(c));
    } else if (c < 0x20) {
      const char e[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      out.append(e, e + 6);
    } else {
      out.push_back(char(c));
    }
  }
}
void quote(std::string_view s, spdlog::memory_buf_t& out) {
  out.push_back('"');
  json_escape(s, out);
  out.push_back('"');
}
void append(spdlog::memory_buf_t& out, std::string_view s) { out.append(s.data(), s.data() + s.size()); }

class ServiceFormatter final : public spdlog::formatter {
 public:
  explicit ServiceFormatter(LogFormat f) : f_(f) {}
  void format(const spdlog::details::log_msg& m, spdlog::memory_buf_t& out) override {
    const std::string_view text(m.payload.data(), m.payload.size());
    std::string_view msg;
    split_fields(text, msg, fields_);
    // ts: RFC 3339, UTC, milliseconds
    const auto t = m.time.time_since_epoch();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t).count();
    const std::time_t secs = std::time_t(ms / 1000);
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char ts[40];
    const int n = std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
    const std::string_view tsv(ts, std::size_t(n > 0 ? n : 0));
    const auto lvl = spdlog::level::to_string_view(m.level);
    const std::string_view level(lvl.data(), lvl.size());
    if (f_ == LogFormat::Json) {
      append(out, "{\"ts\":\"");
      append(out, tsv);
      append(out, "\",\"level\":\"");
      append(out, level);
      append(out, "\",\"msg\":");
      quote(msg, out);
      for (const auto& [k, v] : fields_) {
        if (k == "ts" || k == "level" || k == "msg") continue;
        append(out, ",");
        quote(k, out);
        append(out, ":");
        quote(v, out);
      }
      append(out, "}\n");
      return;
    }
    append(out, "ts=");
    append(out, tsv);
    append(out, " level=");
    append(out, level);
    append(out, " msg=");
    quote(msg, out);
    for (const auto& [k, v] : fields_) {
      append(out, " ");
      append(out, k);
      append(out, "=");
      // bare only when nothing in it could end or split the line (control characters,
      // quotes, spaces, '=' and backslashes are quoted and escaped)
      bool bare = !v.empty();
      for (unsigned char ch : v) bare &= ch > 0x20 && ch != 0x7f && ch != '"' && ch != '=' && ch != '\\';
      if (bare) append(out, v);
      else quote(v, out);
    }
    append(out, "\n");
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<ServiceFormatter>(f_); }

 private:
  LogFormat f_;
  std::vector<std::pair<std::string_view, std::string>> fields_;
};

}  // namespace

void set_log_format(LogFormat f) { spdlog::set_formatter(std::make_unique<ServiceFormatter>(f)); }

unsigned DropReporter::report(const nlohmann::json& st) {
  std::map<std::string, std::uint64_t> now;
  if (auto d = st.find("drops"); d != st.end() && d->is_object())
    for (auto it = d->begin(); it != d->end(); ++it)
      if (it->is_number_unsigned()) now[it.key()] = it->get<std::uint64_t>();
  if (auto s = st.find("socket"); s != st.end() && s->is_object())
    if (auto q = s->find("rx_queue_drops"); q != s->end() && q->is_number_unsigned())
      now["socket.rx_queue_drops"] = q->get<std::uint64_t>();
  for (const char* w : {"tap_write", "tun_write"})
    if (auto s = st.find(w); s != st.end() && s->is_object())
      if (auto q = s->find("failed"); q != s->end() && q->is_number_unsigned())
        now[std::string(w) + ".failed"] = q->get<std::uint64_t>();
  unsigned lines = 0;
  std::uint64_t other = 0;
  for (const auto& [reason, total] : now) {
    const std::uint64_t before = last_.count(reason) ? last_[reason] : 0;
    if (total <= before) continue;
    if (lines < max_lines_) {
      spdlog::warn("drop reason={} count={} total={}", reason, total - before, total);
      ++lines;
    } else {
      other += total - before;
    }
  }
  if (other) {
    spdlog::warn("drop reason=other count={}", other);
    ++lines;
  }
  last_ = std::move(now);
  return lines;
}

}  // namespace ofld::daemon
