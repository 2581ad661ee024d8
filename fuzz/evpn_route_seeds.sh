#!/usr/bin/env bash
# Seeds of fuzz/evpn_route_fuzz: apipb.Path and apipb.WatchEventResponse messages as gobgpd
# streams them on WatchEvent (type-2 and type-3 EVPN routes of VNI 100, withdrawals, an IPv6
# next hop, another family), written in protobuf text format and encoded with protoc.
#   fuzz/evpn_route_seeds.sh [OUT_DIR]   (default fuzz/corpus/evpn_route_fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-fuzz/corpus/evpn_route_fuzz}
api=${OFLD_GOBGP_PROTO_DIR:-/usr/share/gocode/src/github.com/osrg/gobgp/api}
mkdir -p "$out"
T=type.googleapis.com/apipb
fam='family { afi: AFI_L2VPN safi: SAFI_EVPN }'
rd() { echo "rd { [$T.RouteDistinguisherIPAddress] { admin: \"$1\" assigned: 100 } }"; }
t2() { # MAC LABEL
  echo "nlri { [$T.EVPNMACIPAdvertisementRoute] { $(rd 10.0.0.2) esi { type: 0 value: \"\\000\\000\\000\\000\\000\\000\\000\\000\\000\" } ethernet_tag: 0 mac_address: \"$1\" labels: $2 } }"
}
t3() { # ORIGINATOR
  echo "nlri { [$T.EVPNInclusiveMulticastEthernetTagRoute] { $(rd "$1") ethernet_tag: 0 ip_address: \"$1\" } }"
}
origin="pattrs { [$T.OriginAttribute] { origin: 0 } }"
mp() { echo "pattrs { [$T.MpReachNLRIAttribute] { $fam next_hops: \"$1\" } }"; }
nh() { echo "pattrs { [$T.NextHopAttribute] { next_hop: \"$1\" } }"; }
ec() { # EXTRA_COMMUNITIES
  echo "pattrs { [$T.ExtendedCommunitiesAttribute] { communities { [$T.TwoOctetAsSpecificExtended] { is_transitive: true sub_type: 2 asn: 65000 local_admin: 100 } } communities { [$T.EncapExtended] { tunnel_type: 8 } } $1 } }"
}
mm="communities { [$T.MacMobilityExtended] { sequence_num: 3 } }"
pmsi() { echo "pattrs { [$T.PmsiTunnelAttribute] { flags: 0 type: $1 label: 100 id: \"$2\" } }"; }
enc() { protoc -I "$api" --encode="$1" gobgp.proto attribute.proto >"$out/$2"; }

p_t2="$(t2 52:54:00:12:34:56 100) $origin $(mp 10.0.0.2) $(ec "$mm") $fam"
p_t3="$(t3 10.0.0.3) $origin $(mp 10.0.0.3) $(ec '') $(pmsi 6 '\012\000\000\003') $fam"
echo "$p_t2" | enc apipb.Path seed-type2
echo "$p_t2 is_withdraw: true" | enc apipb.Path seed-type2-withdraw
echo "$(t2 52:54:00:ab:cd:ef 100) $origin $(nh 10.0.0.4) $(ec '') $fam" | enc apipb.Path seed-type2-nexthop-attr
echo "$(t2 52:54:00:ab:cd:01 100) $origin $(mp 2001:db8::2) $(ec "$mm") $fam" | enc apipb.Path seed-type2-ipv6
echo "$p_t3" | enc apipb.Path seed-type3-pmsi
echo "$p_t3 is_withdraw: true" | enc apipb.Path seed-type3-withdraw
echo "$(t3 10.0.0.5) $origin $(mp 10.0.0.5) $(ec '') $fam" | enc apipb.Path seed-type3-no-pmsi
echo "$(t3 2001:db8::3) $origin $(mp 2001:db8::3) $(ec '') $(pmsi 6 ' \001\015\270\000\000\000\000\000\000\000\000\000\000\000\003') $fam" |
  enc apipb.Path seed-type3-ipv6
echo "nlri { [$T.IPAddressPrefix] { prefix_len: 24 prefix: \"192.0.2.0\" } } $origin $(nh 10.0.0.2) family { afi: AFI_IP safi: SAFI_UNICAST }" |
  enc apipb.Path seed-ipv4-unicast
echo "table { paths { $p_t2 } paths { $p_t3 } }" | enc apipb.WatchEventResponse seed-watch-table
# ListPath's binary form (enable_only_binary): the NLRI as in MP_REACH_NLRI (RFC 7432 §7.2,
# §7.3; RD type 1 10.0.0.2:100) and each path attribute as in the UPDATE (RFC 4271 §4.3:
# ORIGIN, MP_REACH_NLRI with next hop 10.0.0.2 / .3, extended communities: route target
# 65000:100, encapsulation VXLAN (RFC 9012), MAC Mobility sequence 3; PMSI ingress replication)
b_t2='nlri_binary: "\002\041\000\001\012\000\000\002\000\144\000\000\000\000\000\000\000\000\000\000\000\000\000\000\060\122\124\000\022\064\126\000\000\000\144" pattrs_binary: "\100\001\001\000" pattrs_binary: "\200\016\011\000\031\106\004\012\000\000\002\000" pattrs_binary: "\300\020\030\000\002\375\350\000\000\000\144\003\014\000\000\000\000\000\010\006\000\000\000\000\000\000\003"'
b_t3='nlri_binary: "\003\021\000\001\012\000\000\002\000\144\000\000\000\000\040\012\000\000\003" pattrs_binary: "\100\001\001\000" pattrs_binary: "\200\016\011\000\031\106\004\012\000\000\003\000" pattrs_binary: "\300\020\020\000\002\375\350\000\000\000\144\003\014\000\000\000\000\000\010" pattrs_binary: "\300\026\011\000\006\000\000\144\012\000\000\003"'
echo "$b_t2 $fam" | enc apipb.Path seed-binary-type2
echo "$b_t2 is_withdraw: true $fam" | enc apipb.Path seed-binary-type2-withdraw
echo "$b_t3 $fam" | enc apipb.Path seed-binary-type3-pmsi
echo "wrote $(ls "$out" | wc -l) seeds to $out ($(cat "$out"/seed-* | wc -c) bytes)"
