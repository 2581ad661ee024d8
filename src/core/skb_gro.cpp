// GRO's merge helpers (net/core/gro.c: skb_gro_receive, skb_gro_receive_list).
#include "ofld/core/skb_gro.hpp"

namespace ofld::core {

namespace detail {

void skb_gro_append_general(Packet& p, BufferRef& agg, Packet& skb,
                            std::size_t data_offset) noexcept {
  // Payload bytes in the skb's head are copied into p's aggregate buffer; fragments are
  // stolen by reference (G-19 without the MAX_SKB_FRAGS/frag_list geometry).
  const std::size_t head_from = std::min<std::size_t>(data_offset, skb.headlen());
  const std::size_t head_n = skb.headlen() - head_from;
  if (head_n) {
    if (!agg) {
      agg = Buffer::create();
      agg->bytes.reserve(65536);
    }
    auto& v = agg->bytes;
    const std::size_t at = v.size();
    v.insert(v.end(), skb.data() + head_from, skb.data() + head_from + head_n);
    auto fr = p.frags();
    if (!(!fr.empty() && fr.back().buf == agg && fr.back().off + fr.back().len == at &&
          p.extend_last_frag(head_n)))
      p.add_frag(agg, at, head_n);
  }
  std::size_t skip = data_offset > skb.headlen() ? data_offset - skb.headlen() : 0;
  // Room for an aggregate's worth of fragments at once rather than doubling from the inline
  // four (the storage only; the fragment list itself is the same).
  const std::size_t want = p.nr_frags() + skb.nr_frags();
  if (p.nr_frags() <= FragVec::kInline && want > FragVec::kInline)
    p.reserve_frags(std::max<std::size_t>(want, 64));
  for (auto& f : skb.frags()) {
    if (skip >= f.len) {
      skip -= f.len;
      continue;
    }
    p.add_frag_slice(std::move(f.buf), f.off + std::uint32_t(skip), f.len - std::uint32_t(skip));
    skip = 0;
  }
}

}  // namespace detail

bool skb_gro_receive_list(Packet& p, Packet& skb, std::size_t data_offset, int nhoff, int thoff,
                          std::size_t p_len, std::size_t skb_len) noexcept {
  if (p_len + skb_len >= 65536) return false;  // G-21
  if (!skb.frag_list().empty() || data_offset > skb.len()) return false;
  skb.set_network_header(nhoff);
  skb.set_transport_header(thoff);
  if (!skb.pskb_pull(data_offset)) return false;
  p.add_to_frag_list(std::move(skb));
  return true;
}

}  // namespace ofld::core
