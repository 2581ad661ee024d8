// ofld/tunnel/encap_kind.hpp — how an encapsulation describes itself to the configuration
// front ends and the live reload: its mode words (= TOML table names), its capabilities, its
// settings rows (words and TOML keys, each applied to the encapsulation's own configuration),
// the checks after reading, and the settings a live reload may not change.
//
// One EncapKind per alternative of EncapConfig, defined in the encapsulation's own file
// (src/tunnel/encap_<name>.cpp, as `static const EncapKind& kind()` of its configuration
// type); encap_kinds() lists them in EncapConfig's order. The daemon iterates that list and
// adds its own rows (host side; group, EVPN, static FDB, integrity, peer-key) by capability,
// never by naming an encapsulation. No I/O, no DaemonConfig here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel {

struct TunnelConfig;

namespace conf {

using Args = std::vector<std::string>;

/// How a setting takes its value: after its word on the command line; its TOML type.
enum class Arity : std::uint8_t {
  Flag,  ///< no value: the word says on (`udpcsum`) or off (`noudpcsum`); TOML true / false
  One,   ///< one value; TOML per Value below
  Two,   ///< two values (`srcport MIN MAX`, `fdb MAC ADDR`); TOML [A, B]
  Many,  ///< one value, the word may repeat (`remote A remote B`); TOML a value or a list
  List,  ///< one value, a comma-separated list (`cpus 0,1`); TOML a value, or an array of
         ///< values joined with commas into that one value
};
/// The TOML type of a value: an integer, a string, or either (the tunnel table's numbers may be
/// written as strings, like the words; a GRE key; `tos inherit`). AnyHex: either, where the
/// word is read in hexadecimal (`tos`, as iproute2): a TOML integer keeps its own value (it is
/// handed to the setting as 0x..), a TOML string is read as the word is.
enum class Value : std::uint8_t { Int, Str, Any, AnyHex };

/// What is known while one tunnel table is read (both front ends).
struct ReadState {
  std::string_view mode;     ///< the mode word (`gre` or `ip6gre` for GRE's table)
  bool have_id = false;      ///< `id` was given
  bool have_remote = false;  ///< the one remote of a point-to-point tunnel was given
};

/// The description of one setting, common to the encapsulations' rows and the daemon's.
struct RowMeta {
  const char* name;             ///< the setting: messages, TOML key, first word spelling
  std::vector<const char*> alt; ///< other spellings (words and TOML keys): vni, dstport, ...
  const char* off_word;         ///< a flag's "off" word (noudpcsum, nolearning); else null
  Arity arity;
  Value value;
  /// "Given once" groups it sets (a second setting of a group is an error naming both);
  /// empty: may repeat. `key` sets ikey and okey.
  std::vector<const char*> once;
};

/// Applies a setting's values (arity checked) to the tunnel configuration of the row's
/// encapsulation; an error naming the setting (`word` as given) or none.
using Apply = std::optional<std::string> (*)(TunnelConfig& t, ReadState& st, const std::string& word,
                                             bool on, const Args& v);
/// A setting of an encapsulation.
struct Row : RowMeta {
  Apply apply;
};

/// A setting a live reload may not change: its name and its value as text.
struct FixedRow {
  const char* name;
  std::string (*text)(const TunnelConfig& t);
};

/// What an encapsulation has, for the rows and checks the daemon adds by capability.
struct Caps {
  /// Ethernet over UDP with an FDB (TAP; remotes as a flood list, static `fdb`, learning,
  /// EVPN): VXLAN, Geneve.
  bool ethernet = false;
  /// `id VNI` is required.
  bool vni = false;
  /// Flooding to an underlay multicast `group` (VXLAN).
  bool group = false;
  /// The BGP tunnel type EVPN routes carry (RFC 9012 §14: VXLAN 8, Geneve 19); 0: no EVPN.
  std::uint16_t evpn_tunnel_type = 0;
};

// ---- helpers the rows of both layers share (messages are part of the interface)
/// A decimal number in lo..hi, the whole string; nullopt otherwise.
std::optional<std::uint64_t> number(const std::string& s, std::uint64_t lo, std::uint64_t hi);
/// "KEY: 'VAL' is not a number in LO..HI".
std::string bad_number(const std::string& key, const std::string& val, std::uint64_t lo, std::uint64_t hi);
/// v[0] as number(lo..hi) into out; else bad_number's message.
std::optional<std::string> num_arg(const std::string& k, const Args& v, std::uint64_t lo, std::uint64_t hi,
                                   std::uint64_t& out);
/// An IPv4 or IPv6 address into out; else "K: 'A' is not an IPv4 or IPv6 address".
std::optional<std::string> addr_arg(const std::string& k, const std::string& a, IpAddr& out);
/// An unsigned number as C's strtoul reads it in `base` (16: an optional 0x; 0: 0x.. hex, 0..
/// octal, else decimal), the whole word, no sign or space; nullopt past `hi`.
std::optional<std::uint64_t> c_number(const std::string& s, int base, std::uint64_t hi);

}  // namespace conf

/// One encapsulation, as the configuration and the reload see it.
struct EncapKind {
  /// Its mode words, which are also its TOML table names (GRE: "gre", "ip6gre"); the first
  /// names it in messages ("it is one of gre").
  std::vector<std::string_view> words;
  conf::Caps caps;
  /// Its words for `ofld tunnel --help` (one line per mode word group).
  std::string_view usage;
  /// Makes `t` this encapsulation's default configuration.
  void (*reset)(TunnelConfig& t);
  /// Its settings (the common and UDP ones included), in order.
  std::vector<conf::Row> rows;
  /// Checks after every setting was read that need the mode word (GRE: address families of
  /// gre / ip6gre); null when none.
  std::optional<std::string> (*read_check)(const TunnelConfig& t, std::string_view mode) = nullptr;
  /// Its validate(); need_remote false when a multicast group or EVPN supplies the remotes.
  std::optional<std::string> (*validate)(const TunnelConfig& t, bool need_remote);
  /// The settings of its own a live reload may not change (after the common `local`, `mtu`
  /// and, over UDP, the UDP settings), in order.
  std::vector<conf::FixedRow> fixed;
  /// Ethernet encapsulations: the flood list (`remote`, changed by a reload); else null.
  std::vector<IpAddr>* (*flood_remotes)(TunnelConfig& t) = nullptr;
  /// VNI encapsulations: the VNI; else null.
  std::uint32_t (*vni)(const TunnelConfig& t) = nullptr;

  /// flood_remotes of a const configuration (read only).
  const std::vector<IpAddr>* remotes_of(const TunnelConfig& t) const {
    return flood_remotes ? flood_remotes(const_cast<TunnelConfig&>(t)) : nullptr;
  }
};

/// The encapsulations, in EncapConfig's order.
std::span<const EncapKind* const> encap_kinds() noexcept;
/// The kind of t's encapsulation.
const EncapKind& kind_of(const TunnelConfig& t) noexcept;
/// The kind whose mode word is `word`; null when none.
const EncapKind* find_kind(std::string_view word) noexcept;
/// The mode words of every encapsulation, joined "vxlan, gue, gre, ip6gre or geneve".
std::string mode_words_text(std::string_view last_sep = " or ");

}  // namespace ofld::tunnel
