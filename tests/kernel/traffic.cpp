// The kernel tests' traffic and witnesses (see traffic.hpp).
#include "traffic.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "proc_util.hpp"
#include "snmp_util.hpp"

namespace ofld::ktest {

namespace {

// argv: bind address, port, streams. Accepts that many connections, hashes each, answers one
// byte once a stream has ended (the client waits for it: everything was read), prints the
// sorted "bytes sha" list.
constexpr const char* kServer =
    "import socket,hashlib,threading,sys\n"
    "fam=socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET\n"
    "s=socket.socket(fam,socket.SOCK_STREAM)\n"
    "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "s.bind((sys.argv[1],int(sys.argv[2])));s.listen(64);s.settimeout(30)\n"
    "res=[];ts=[]\n"
    "def h(c):\n"
    "  c.settimeout(30);x=hashlib.sha256();n=0\n"
    "  while True:\n"
    "    d=c.recv(1<<16)\n"
    "    if not d: break\n"
    "    x.update(d);n+=len(d)\n"
    "  res.append('%d %s'%(n,x.hexdigest()))\n"
    "  try: c.send(b'x')\n"
    "  except OSError: pass\n"
    "  c.close()\n"
    "for i in range(int(sys.argv[3])):\n"
    "  c,_=s.accept();t=threading.Thread(target=h,args=(c,));t.start();ts.append(t)\n"
    "for t in ts: t.join()\n"
    "print(' '.join(sorted(res)),flush=True)\n";

// argv: dst, port, MiB, seed, streams, rate (bytes/s, 0 = unpaced), connect timeout.
constexpr const char* kClient =
    "import socket,hashlib,random,threading,time,sys\n"
    "dst,port,mib,seed,k,rate,to=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4]),"
    "int(sys.argv[5]),int(sys.argv[6]),int(sys.argv[7])\n"
    "res=[]\n"
    "def run(i):\n"
    "  data=random.Random(seed+i).randbytes(mib<<20)\n"
    "  for a in range(100):\n"
    "    try: s=socket.create_connection((dst,port),timeout=to);break\n"
    "    except OSError: time.sleep(0.1)\n"
    "  if rate<=0: s.sendall(data)\n"
    "  else:\n"
    "    t0=time.monotonic();off=0\n"
    "    while off<len(data):\n"
    "      s.sendall(data[off:off+65536]);off+=65536\n"
    "      ahead=off/rate-(time.monotonic()-t0)\n"
    "      if ahead>0: time.sleep(ahead)\n"
    "  s.shutdown(socket.SHUT_WR);s.recv(1);s.close()\n"
    "  res.append('%d %s'%(len(data),hashlib.sha256(data).hexdigest()))\n"
    "ts=[threading.Thread(target=run,args=(i,)) for i in range(k)]\n"
    "for t in ts: t.start()\n"
    "for t in ts: t.join()\n"
    "print(' '.join(sorted(res)),flush=True)\n";

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::pair<std::string, std::string> hashed_transfer(const io::Netns& from, const io::Netns& to,
                                                    const std::string& dst, const TransferSpec& spec) {
  const std::string any = dst.find(':') != std::string::npos ? "::" : "0.0.0.0";
  const std::string slog = "/tmp/ofld-xfer-" + std::to_string(::getpid()) + "-" + to.name() + "-" +
                           std::to_string(spec.port) + ".log";
  pid_t srv = spawn({"ip", "netns", "exec", to.name(), "python3", "-c", kServer, any,
                     std::to_string(spec.port), std::to_string(spec.streams)},
                    slog);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto c = from.exec({"python3", "-c", kClient, dst, std::to_string(spec.port), std::to_string(spec.mib),
                      std::to_string(spec.seed), std::to_string(spec.streams), std::to_string(spec.rate),
                      "30"},
                     std::chrono::seconds(spec.timeout_s));
  // the server ends by itself once every stream has ended (20 s at most), else it is stopped
  for (int i = 0, st = 0; i < 1000; ++i) {
    if (::waitpid(srv, &st, WNOHANG) == srv) {
      srv = -1;  // reaped: nothing to stop
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop(srv);
  std::string s = slurp(slog);
  ::unlink(slog.c_str());
  return {trim(c.ok() ? c.value().out : "client failed: " + c.message()), trim(s)};
}

bool expect_echo_and_transfers(const TunnelPair& p, int net) {
  const std::string ovl = "192.168." + std::to_string(net) + ".";
  auto ping = p.A->exec({"python3", "-c", icmp_echo_script(ovl + "2")}, std::chrono::seconds(20));
  EXPECT_TRUE(ping.ok()) << ping.message();
  if (!ping.ok()) return false;
  EXPECT_EQ(ping.value().out, "reply\n") << slurp(p.log_a) << slurp(p.log_b);
  const long csum_err_a = snmp(*p.A, "Tcp", "InCsumErrors"), csum_err_b = snmp(*p.B, "Tcp", "InCsumErrors");
  EXPECT_GE(csum_err_a, 0);
  EXPECT_GE(csum_err_b, 0);
  auto [c1, s1] = hashed_transfer(*p.A, *p.B, ovl + "2", {.mib = 8, .seed = 7});
  EXPECT_EQ(c1, s1) << "A -> B";
  EXPECT_NE(s1, "");
  auto [c2, s2] = hashed_transfer(*p.B, *p.A, ovl + "1", {.mib = 8, .seed = 11});
  EXPECT_EQ(c2, s2) << "B -> A";
  EXPECT_NE(s2, "");
  EXPECT_EQ(snmp(*p.A, "Tcp", "InCsumErrors"), csum_err_a) << "TCP checksum errors in A";
  EXPECT_EQ(snmp(*p.B, "Tcp", "InCsumErrors"), csum_err_b) << "TCP checksum errors in B";
  return !::testing::Test::HasFailure();
}

std::string icmp_echo_script(const std::string& dst, int tries) {
  return "import socket,struct,select\n"
         "def ck(b):\n"
         "  s=sum(struct.unpack('!%dH'%(len(b)//2),b));s=(s>>16)+(s&0xffff);s+=s>>16;return ~s&0xffff\n"
         "p=struct.pack('!BBHHH',8,0,0,0x78,1)+b'ofld'*8\n"
         "p=p[:2]+struct.pack('!H',ck(p))+p[4:]\n"
         "s=socket.socket(socket.AF_INET,socket.SOCK_RAW,socket.IPPROTO_ICMP)\n"
         "ok=False\n"
         "for i in range(" + std::to_string(tries) + "):\n"
         "  s.sendto(p,('" + dst + "',0))\n"
         "  if select.select([s],[],[],0.5)[0]:\n"
         "    d,a=s.recvfrom(2000)\n"
         "    if a[0]=='" + dst + "' and d[20]==0: ok=True;break\n"
         "print('reply' if ok else 'none')\n";
}

std::vector<std::string> tshark_fields(const std::string& pcap, const std::string& filter,
                                       const std::vector<std::string>& fields) {
  std::vector<std::string> argv = {"tshark", "-n", "-r", pcap, "-o", "udp.check_checksum:TRUE",
                                   "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
                                   "-Y", filter, "-T", "fields"};
  for (auto& f : fields) argv.insert(argv.end(), {"-e", f});
  auto r = io::run_command(argv, std::chrono::seconds(60));
  std::vector<std::string> lines;
  if (!r.ok()) return lines;
  std::istringstream in(r.value().out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace ofld::ktest
