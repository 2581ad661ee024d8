// virtio_net_hdr codec (spec V-18): explicit byte order, each field at its own offset.
#include "ofld/wire/virtio_net.hpp"

#include "ofld/wire/bytes.hpp"

namespace ofld::wire::virtio_net {

namespace {
std::uint16_t ld16(const std::uint8_t* p, ByteOrder o) {
  return o == ByteOrder::Little ? load_le16(p) : load_be16(p);
}
std::uint32_t ld32(const std::uint8_t* p, ByteOrder o) {
  return o == ByteOrder::Little ? load_le32(p) : load_be32(p);
}
void st16(std::uint8_t* p, std::uint16_t v, ByteOrder o) {
  o == ByteOrder::Little ? store_le16(p, v) : store_be16(p, v);
}
void st32(std::uint8_t* p, std::uint32_t v, ByteOrder o) {
  o == ByteOrder::Little ? store_le32(p, v) : store_be32(p, v);
}
}  // namespace

Result<Hdr> parse(std::span<const std::uint8_t> in, std::size_t size, ByteOrder order) {
  if (!valid_size(size))
    return ParseError{HeaderKind::VirtioNet, Errc::BadHeaderLen, 0, std::uint32_t(size),
                      std::uint32_t(kHdrLen)};
  if (in.size() < size) return truncated(HeaderKind::VirtioNet, 0, in.size(), size);
  const std::uint8_t* p = in.data();
  Hdr h;
  h.flags = p[kOffFlags];
  h.gso_type = p[kOffGsoType];
  h.hdr_len = ld16(p + kOffHdrLen, order);
  h.gso_size = ld16(p + kOffGsoSize, order);
  h.csum_start = ld16(p + kOffCsumStart, order);
  h.csum_offset = ld16(p + kOffCsumOffset, order);
  if (size >= kHdrMrgRxbufLen) h.num_buffers = ld16(p + kOffNumBuffers, order);
  if (size >= kHdrV1HashLen) {
    h.hash_value = ld32(p + kOffHashValue, order);
    h.hash_report = ld16(p + kOffHashReport, order);
  }
  return h;
}

std::size_t emit(const Hdr& h, std::span<std::uint8_t> out, std::size_t size,
                 ByteOrder order) noexcept {
  if (!valid_size(size) || out.size() < size) return 0;
  std::uint8_t* p = out.data();
  p[kOffFlags] = h.flags;
  p[kOffGsoType] = h.gso_type;
  st16(p + kOffHdrLen, h.hdr_len, order);
  st16(p + kOffGsoSize, h.gso_size, order);
  st16(p + kOffCsumStart, h.csum_start, order);
  st16(p + kOffCsumOffset, h.csum_offset, order);
  if (size >= kHdrMrgRxbufLen) st16(p + kOffNumBuffers, h.num_buffers, order);
  if (size >= kHdrV1HashLen) {
    st32(p + kOffHashValue, h.hash_value, order);
    st16(p + kOffHashReport, h.hash_report, order);
    st16(p + kOffPadding, 0, order);
  }
  return size;
}

void Hdr::store(std::uint8_t* p, bool little_endian) const noexcept {
  emit(*this, std::span<std::uint8_t>(p, kHdrLen), kHdrLen,
       little_endian ? ByteOrder::Little : ByteOrder::Big);
}

Hdr Hdr::load(const std::uint8_t* p, bool little_endian) noexcept {
  // Cannot fail: the size is valid and the span is exactly that long.
  return parse(std::span<const std::uint8_t>(p, kHdrLen), kHdrLen,
               little_endian ? ByteOrder::Little : ByteOrder::Big)
      .value();
}

}  // namespace ofld::wire::virtio_net
