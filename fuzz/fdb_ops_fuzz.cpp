// libFuzzer target: arbitrary sequences of FDB operations (learning from known and unknown
// remotes, static and EVPN entries, withdrawals, local learning, lookups, ageing, limit
// changes) on a tunnel::Fdb, checked against a reference model (std::map with the same
// vxlan_snoop / bound rules): the flat table (probing, backward-shift deletion, growth,
// shrinking) never loses or invents an entry, lookups agree, and the learned-entry count
// never passes `maxaddress`. Input: byte 0-1 limits, then 3-byte operations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>

#include "ofld/tunnel/fdb.hpp"

namespace {

namespace tn = ofld::tunnel;

struct Ref {
  std::uint8_t remote;
  tn::FdbSource source;
  std::uint64_t updated;
};

tn::IpAddr remote(unsigned i) {
  tn::IpAddr a;
  a.family = 4;
  a.bytes = {10, 0, 0, std::uint8_t(1 + i)};
  return a;
}
tn::Mac mac(unsigned i) { return tn::Mac{0x02, 0, 0, 0, std::uint8_t(i >> 8), std::uint8_t(i)}; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  constexpr std::uint64_t kAgeing = 40;
  tn::Fdb f(kAgeing);
  tn::FdbLimits lim;
  lim.maxaddress = data[0] % 64;  // 0 = unbounded
  lim.from = (data[1] & 1) ? tn::LearnFrom::Remotes : tn::LearnFrom::Any;
  lim.per_remote = 0;
  f.set_limits(lim);
  // remotes 0..3 are configured (known); 4..7 are not
  for (unsigned r = 0; r < 4; ++r) f.add_default_remote(remote(r));
  std::map<tn::Mac, Ref> ref;
  std::uint64_t now = 1;
  std::size_t learned = 0;
  bool known_remote[8] = {true, true, true, true, false, false, false, false};
  auto live = [&](const Ref& e) { return !(e.source == tn::FdbSource::Learned && now >= e.updated + kAgeing); };
  auto drop_expired = [&](std::map<tn::Mac, Ref>::iterator it) {
    if (it->second.source == tn::FdbSource::Learned) --learned;
    ref.erase(it);
  };
  for (std::size_t i = 2; i + 3 <= size; i += 3) {
    const unsigned op = data[i] % 8, m = data[i + 1] % 200, r = data[i + 2] % 8;
    const tn::Mac k = mac(m);
    auto it = ref.find(k);
    switch (op) {
      case 0:
      case 1: {  // learn
        const bool known = known_remote[r] || lim.from == tn::LearnFrom::Any;
        auto res = f.learn_ex(k, remote(r), now);
        if (it != ref.end() && it->second.source != tn::FdbSource::Learned) {
          if (res != tn::LearnResult::Ignored) std::abort();
          break;
        }
        if (!known) {
          if (res != tn::LearnResult::RefusedUnknownSource) std::abort();
          break;
        }
        if (it != ref.end()) {  // present (maybe expired, still in the table): refresh / move
          const bool moved = it->second.remote != r;
          if (res != (moved ? tn::LearnResult::Moved : tn::LearnResult::Refreshed)) std::abort();
          it->second.remote = std::uint8_t(r), it->second.updated = now;
        } else if (lim.maxaddress && learned >= lim.maxaddress) {
          if (res != tn::LearnResult::RefusedFull) std::abort();
        } else {
          if (res != tn::LearnResult::Created) std::abort();
          ref[k] = {std::uint8_t(r), tn::FdbSource::Learned, now};
          ++learned;
        }
        break;
      }
      case 2:  // static (its remote becomes known)
        known_remote[r] = true;
        f.add_static(k, remote(r));
        if (it != ref.end() && it->second.source == tn::FdbSource::Learned) --learned;
        ref[k] = {std::uint8_t(r), tn::FdbSource::Static, 0};
        break;
      case 3:  // EVPN type-2 (seq 0: never older than what it replaces; its next hop is known)
        known_remote[r] = true;
        if (f.set_evpn(k, remote(r), 0, now) != (it == ref.end() || it->second.source == tn::FdbSource::Learned ||
                                                  (it->second.source == tn::FdbSource::Evpn && it->second.remote != r)))
          std::abort();
        if (it == ref.end() || it->second.source != tn::FdbSource::Static) {
          if (it != ref.end() && it->second.source == tn::FdbSource::Learned) --learned;
          ref[k] = {std::uint8_t(r), tn::FdbSource::Evpn, now};
        }
        break;
      case 4: {  // EVPN withdrawn
        const bool want = it != ref.end() && it->second.source == tn::FdbSource::Evpn && it->second.remote == r;
        if (f.remove_evpn(k, remote(r)) != want) std::abort();
        if (want) ref.erase(it);
        break;
      }
      case 5: {  // lookup
        auto l = f.lookup(k, now);
        const bool hit = it != ref.end() && live(it->second);
        if (l.flooded == hit) std::abort();
        if (hit && (l.remotes.size() != 1 || l.remotes[0] != remote(it->second.remote))) std::abort();
        if (!hit && l.remotes.size() != 4) std::abort();
        if (!hit && it != ref.end()) drop_expired(it);
        break;
      }
      case 6: {  // age
        const std::size_t n = f.age(now);
        std::size_t want = 0;
        for (auto j = ref.begin(); j != ref.end();)
          if (!live(j->second)) ++want, --learned, j = ref.erase(j);
          else ++j;
        if (n != want) std::abort();
        break;
      }
      case 7:  // time passes
        now += 1 + data[i + 1] % 16;
        break;
    }
    if (f.size() != ref.size() || f.learned_count() != learned) std::abort();
    if (lim.maxaddress && learned > lim.maxaddress) std::abort();
  }
  for (const auto& [k, e] : f.entries()) {
    auto it = ref.find(k);
    if (it == ref.end() || e.source != it->second.source || e.remote != remote(it->second.remote)) std::abort();
  }
  return 0;
}
