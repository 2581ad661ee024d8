// The list of encapsulations (tunnel::encap_kinds(), one EncapKind per EncapConfig
// alternative, each in its encap_<name>.cpp) and what the daemon derives from it: the mode
// words and TOML tables, the message naming the mode a setting belongs to, the [[fdb]] rule.
// Expected messages are the parser's documented ones (README "Tunnel", config.hpp), which
// named the modes literally before the list existed.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <variant>

#include "ofld/daemon/config.hpp"
#include "ofld/tunnel/encap_kind.hpp"
#include "ofld/tunnel/encapsulation.hpp"

namespace {

using namespace ofld;

std::string words_error(std::vector<std::string> w) {
  daemon::DaemonConfig c;
  auto e = daemon::parse_tunnel_words(w, c);
  return e ? *e : std::string("(accepted)");
}
std::string toml_error(const std::string& text) {
  auto r = daemon::parse_toml(text);
  if (auto* e = std::get_if<std::string>(&r)) return *e;
  return "(accepted)";
}

TEST(EncapKinds, OneKindPerEncapConfigAlternativeInItsOrder) {
  const auto kinds = tunnel::encap_kinds();
  ASSERT_EQ(kinds.size(), std::variant_size_v<tunnel::EncapConfig>);
  std::set<std::string_view> words;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    tunnel::TunnelConfig t;
    kinds[i]->reset(t);
    EXPECT_EQ(t.encap.index(), i);
    EXPECT_EQ(&tunnel::kind_of(t), kinds[i]);
    ASSERT_FALSE(kinds[i]->words.empty());
    for (auto w : kinds[i]->words) {
      EXPECT_TRUE(words.insert(w).second) << "mode word " << w << " of two encapsulations";
      EXPECT_EQ(tunnel::find_kind(w), kinds[i]);
    }
    // Every spelling names one setting of the mode (a word or TOML key matched twice would
    // hide the second row).
    std::set<std::string> spellings;
    for (const auto& r : kinds[i]->rows) {
      EXPECT_TRUE(spellings.insert(r.name).second) << kinds[i]->words[0] << ": " << r.name;
      for (const char* a : r.alt) EXPECT_TRUE(spellings.insert(a).second) << kinds[i]->words[0] << ": " << a;
      if (r.off_word) {
        EXPECT_TRUE(spellings.insert(r.off_word).second) << kinds[i]->words[0] << ": " << r.off_word;
      }
    }
    // Capabilities that come with an accessor.
    EXPECT_EQ(kinds[i]->caps.ethernet, kinds[i]->flood_remotes != nullptr) << kinds[i]->words[0];
    EXPECT_EQ(kinds[i]->caps.vni, kinds[i]->vni != nullptr) << kinds[i]->words[0];
  }
  EXPECT_EQ(tunnel::find_kind("ipip"), nullptr);
}

TEST(EncapKinds, ModeWordsOfEveryEncapsulationInMessages) {
  EXPECT_EQ(words_error({}), "expected a tunnel mode: vxlan, gue, gre, ip6gre or geneve, then its settings");
  EXPECT_EQ(words_error({"ipip"}), "unknown tunnel mode 'ipip' (expected vxlan, gue, gre, ip6gre or geneve)");
}

TEST(EncapKinds, SettingOfAnotherModeNamesIt) {
  EXPECT_EQ(words_error({"gue", "id", "5"}), "id: gue has no VNI (that is a vxlan setting)");
  EXPECT_EQ(words_error({"ip6gre", "vni", "5"}), "vni: ip6gre has no VNI (that is a vxlan setting)");
  EXPECT_EQ(words_error({"gre", "port", "5"}), "port: not a gre setting (it is one of gue)");
  EXPECT_EQ(words_error({"vxlan", "options", "1:1:00"}), "options: not a vxlan setting (it is one of geneve)");
  EXPECT_EQ(words_error({"geneve", "group", "239.1.1.1"}), "group: not a geneve setting (it is one of vxlan)");
  EXPECT_EQ(words_error({"geneve", "key", "1"}), "key: not a geneve setting (it is one of gre)");
  EXPECT_EQ(words_error({"gue", "evpn"}), "evpn: not a gue setting (it is one of vxlan)");
  EXPECT_EQ(words_error({"gue", "bogus", "1"}), "bogus: unknown setting");
  EXPECT_EQ(toml_error("[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nremcsumtx = true\n"),
            "gre.remcsumtx: not a gre setting (it is one of vxlan)");
}

TEST(EncapKinds, TomlTablesAreTheModeWords) {
  EXPECT_EQ(toml_error("[gue]\nport = 5555\n[gre]\n"), "gre: only one tunnel table per file (already have gue)");
  EXPECT_EQ(toml_error("[vxlan]\nid = 1\n[geneve]\nid = 2\n"),
            "geneve: only one tunnel table per file (already have vxlan); a file configures one tunnel");
  EXPECT_EQ(toml_error("ip6gre = 3\n"), "ip6gre: expected a table");
  // without a tunnel table, the first encapsulation's table is read (its missing settings named)
  EXPECT_EQ(toml_error("dev = \"t0\"\n"), "vxlan.id: the VNI is required (id VNI)");
}

TEST(EncapKinds, StaticFdbEntriesBelongToTheEthernetEncapsulations) {
  const std::string fdb = "[[fdb]]\nmac = \"02:00:00:00:00:01\"\nremote = \"10.0.0.3\"\n";
  EXPECT_EQ(toml_error(fdb), "fdb: static entries need a [vxlan] or [geneve] table");
  EXPECT_EQ(toml_error("[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 5555\n" + fdb),
            "gue: a file configures one tunnel; [[fdb]] entries belong to vxlan or geneve");
  EXPECT_EQ(toml_error("[geneve]\nid = 5\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n" + fdb), "(accepted)");
}

}  // namespace
