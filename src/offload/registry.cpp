#include "ofld/offload/registry.hpp"

#include <stdexcept>

#include "ofld/offload/gso_context.hpp"

namespace ofld::offload {

bool Registry::add(Key key, std::uint16_t number, const ProtocolOffload& hooks) noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    Slot& s = slots_[i];
    if (s.key == key && s.number == number) {
      if (!hooks.name.empty()) s.hooks.name = hooks.name;
      if (hooks.segment) s.hooks.segment = hooks.segment;
      if (hooks.gro_receive) s.hooks.gro_receive = hooks.gro_receive;
      if (hooks.gro_complete) s.hooks.gro_complete = hooks.gro_complete;
      return true;
    }
  }
  if (count_ == slots_.size()) return false;
  std::size_t b = bucket(key, number);
  while (index_[b]) b = (b + 1) & (kIndexSize - 1);
  slots_[count_] = Slot{key, number, hooks};
  index_[b] = std::uint8_t(++count_);
  return true;
}

const ProtocolOffload* Registry::find(Key key, std::uint16_t number) const noexcept {
  for (std::size_t b = bucket(key, number);; b = (b + 1) & (kIndexSize - 1)) {
    const std::uint8_t i = index_[b];
    if (i == 0) return nullptr;
    const Slot& sl = slots_[i - 1];
    if (sl.key == key && sl.number == number) return &sl.hooks;
  }
}

int mac_gso_segment(GsoContext& ctx, std::uint16_t protocol) {
  if (++ctx.depth > kMaxGsoRecursion) return ctx.fail(GsoReason::RecursionLimit);
  const auto* e = ctx.reg->find(Key::Ethertype, protocol);
  int rc = (e && e->segment) ? e->segment(ctx) : ctx.fail(GsoReason::UnknownEthertype);
  --ctx.depth;
  return rc;
}

int ipproto_gso_segment(GsoContext& ctx, std::uint8_t proto) {
  if (++ctx.depth > kMaxGsoRecursion) return ctx.fail(GsoReason::RecursionLimit);
  const auto* e = ctx.reg->find(Key::IpProto, proto);
  int rc = (e && e->segment) ? e->segment(ctx) : ctx.fail(GsoReason::UnknownIpProto);
  --ctx.depth;
  return rc;
}

Registry make_registry(std::span<const ProtocolEntry> rows) {
  Registry r;
  for (const ProtocolEntry& e : rows)
    if (!r.add(e.key, e.number, e.hooks)) throw std::length_error("offload: protocol table full");
  return r;
}

const Registry& builtin_registry() {
  static const Registry table = make_registry(builtin_protocols());
  return table;
}

}  // namespace ofld::offload
