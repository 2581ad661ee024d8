#include "ofld/offload/registry.hpp"

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
  slots_[count_++] = Slot{key, number, hooks};
  return true;
}

const ProtocolOffload* Registry::find(Key key, std::uint16_t number) const noexcept {
  for (std::size_t i = 0; i < count_; ++i) {
    if (slots_[i].key == key && slots_[i].number == number) return &slots_[i].hooks;
  }
  return nullptr;
}

namespace detail {
// Weak defaults: replaced by the engines' strong definitions when they are linked in.
__attribute__((weak)) void register_gso_hooks(Registry&) {}
__attribute__((weak)) void register_gro_hooks(Registry&) {}
}  // namespace detail

const Registry& registry() {
  static const Registry table = [] {
    Registry r;
    detail::register_gso_hooks(r);
    detail::register_gro_hooks(r);
    return r;
  }();
  return table;
}

}  // namespace ofld::offload
