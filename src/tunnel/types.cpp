// Underlay addresses, drop names, counter arithmetic (ofld/tunnel/types.hpp).
#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel {

std::string_view to_string(Drop d) noexcept {
  switch (d) {
    case Drop::RxTruncated: return "rx_truncated";
    case Drop::RxNoVniFlag: return "rx_no_vni_flag";
    case Drop::RxBadFlags: return "rx_bad_flags";
    case Drop::RxBadHeader: return "rx_bad_header";
    case Drop::RxNotIp: return "rx_not_ip";
    case Drop::RxRcoNotEnabled: return "rx_rco_not_enabled";
    case Drop::RxRcoNoOuterCsum: return "rx_rco_no_outer_csum";
    case Drop::RxRcoBadOffset: return "rx_rco_bad_offset";
    case Drop::RxWrongVni: return "rx_wrong_vni";
    case Drop::RxKeyMismatch: return "rx_key_mismatch";
    case Drop::RxCsumFlagMismatch: return "rx_csum_flag_mismatch";
    case Drop::RxGreCsumBad: return "rx_gre_csum_bad";
    case Drop::RxWrongSource: return "rx_wrong_source";
    case Drop::RxInnerCsumBad: return "rx_inner_csum_bad";
    case Drop::RxLoop: return "rx_loop";
    case Drop::RxUdp6ZeroCsum: return "rx_udp6_zero_csum";
    case Drop::RxEcnNotEct: return "rx_ecn_not_ect";
    case Drop::RxInnerTooSmall: return "rx_inner_too_small";
    case Drop::RxInnerHdrError: return "rx_inner_hdr_error";
    case Drop::RxGroCellsDropped: return "rx_gro_cells_dropped";
    case Drop::RxDevWriteFailed: return "rx_dev_write_failed";
    case Drop::TxNotEthernet: return "tx_not_ethernet";
    case Drop::TxNotIp: return "tx_not_ip";
    case Drop::TxVnetRejected: return "tx_vnet_rejected";
    case Drop::TxGsoFailed: return "tx_gso_failed";
    case Drop::TxCsumFailed: return "tx_csum_failed";
    case Drop::TxNoRemote: return "tx_no_remote";
    case Drop::TxTooBig: return "tx_too_big";
    case Drop::TxSendFailed: return "tx_send_failed";
    case Drop::RxBadProtocol: return "rx_bad_protocol";
    case Drop::RxOam: return "rx_oam";
    case Drop::RxCriticalOption: return "rx_critical_option";
    case Drop::kCount: break;
  }
  return "unknown";
}

std::uint64_t Counters::drops_total() const noexcept {
  std::uint64_t n = 0;
  for (auto v : drops) n += v;
  return n;
}

Counters& Counters::operator+=(const Counters& o) noexcept {
  tx_frames += o.tx_frames; tx_bytes += o.tx_bytes;
  tx_datagrams += o.tx_datagrams; tx_dgram_bytes += o.tx_dgram_bytes;
  tx_trains += o.tx_trains; tx_gso_super += o.tx_gso_super; tx_rco += o.tx_rco;
  tx_csum_sw += o.tx_csum_sw; tx_csum_skipped += o.tx_csum_skipped; tx_flooded += o.tx_flooded;
  tx_gre_csum += o.tx_gre_csum; rx_gre_csum_ok += o.rx_gre_csum_ok;
  rx_datagrams += o.rx_datagrams; rx_dgram_bytes += o.rx_dgram_bytes;
  rx_gro_trains += o.rx_gro_trains; rx_rco += o.rx_rco; rx_rco_nocsum += o.rx_rco_nocsum;
  rx_csum_validated += o.rx_csum_validated; rx_csum_skipped += o.rx_csum_skipped;
  rx_csum_partial_seed += o.rx_csum_partial_seed; rx_csum_seed_nocsum += o.rx_csum_seed_nocsum;
  rx_ecn_ce += o.rx_ecn_ce; rx_ecn_bogus += o.rx_ecn_bogus;
  rx_frames += o.rx_frames; rx_bytes += o.rx_bytes;
  rx_gro_merged += o.rx_gro_merged; rx_gro_aggregates += o.rx_gro_aggregates;
  fdb_learned += o.fdb_learned; fdb_aged += o.fdb_aged; gso_fallbacks += o.gso_fallbacks;
  fdb_refused_maxaddress += o.fdb_refused_maxaddress; fdb_refused_per_remote += o.fdb_refused_per_remote;
  fdb_refused_unknown_source += o.fdb_refused_unknown_source;
  fdb_refused_remote_table += o.fdb_refused_remote_table; fdb_local_refused += o.fdb_local_refused;
  for (std::size_t i = 0; i < kDropCount; ++i) drops[i] += o.drops[i];
  return *this;
}

}  // namespace ofld::tunnel
