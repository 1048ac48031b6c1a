// mcast_join: joins ports to an InfiniBand multicast group through the SA,
// as an IPoIB driver or an RDMA CM application does, for the integration
// tests (integration/plugin_sa_mcast_test.sh). infiniband-diags only reads
// multicast state (saquery -g / -m, ibroute -M) and ibsim ships no client that
// joins; this sends the real SubnAdmSet(MCMemberRecord) MAD (IBA 15.2.5.17)
// through libibumad to the SM, so under libumad2sim it goes to the real
// OpenSM on ibsim.
//
//   mcast_join [--create] [--leave] --mgid ff12:401b:ffff::ffff:ffff [--pkey 0xffff] PORT_GUID...
//
// Each PORT_GUID (0x..., a CA port of the subnet) joins as a full member; a
// GUID other than the tool's own port is a proxy join, which OpenSM accepts
// for a port not yet in the group (o15-0.2.1). --create also gives Q_Key,
// P_Key, MTU, rate, SL, flow label and traffic class, which a join that
// creates a group must carry (o15-0.2.3). --leave deletes the memberships
// instead (SubnAdmDelete). Prints one line per port:
//   "<guid> mlid 0x<mlid>" (joined) or "<guid> left"
// and exits 1 on the first MAD that fails (status printed), 2 on bad usage.
#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/umad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_sa_mcm.h>
#include <infiniband/umad_types.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kTimeoutMs = 2000;
constexpr int kRetries = 3;
constexpr uint32_t kQp1Qkey = 0x80010000;

int usage(const char* why) {
  std::fprintf(stderr,
               "mcast_join: %s\n"
               "usage: mcast_join [--create] [--leave] --mgid GID [--pkey PKEY] PORT_GUID...\n",
               why);
  return 2;
}

bool parse_u64(const char* s, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s, &end, 0);
  return errno == 0 && end != s && *end == '\0';
}

struct Sa {
  int port = -1;
  int agent = -1;
  umad_port_t info{};
  uint64_t tid = 0x6d630000ull;  // "mc": our transactions (lower 32 bits)
};

// Sends one MCMemberRecord request and waits for its answer; fills `reply`.
// Returns the MAD status (0 = success) or -1 when nothing came back.
int request(Sa& sa, uint8_t method, const umad_sa_mcmember_record& rec, uint64_t comp_mask,
            umad_sa_mcmember_record& reply) {
  const size_t len = sizeof(umad_sa_packet);
  std::vector<uint8_t> buf(umad_size() + len, 0);
  auto* pkt = static_cast<umad_sa_packet*>(umad_get_mad(buf.data()));
  pkt->mad_hdr.base_version = UMAD_BASE_VERSION;
  pkt->mad_hdr.mgmt_class = UMAD_CLASS_SUBN_ADM;
  pkt->mad_hdr.class_version = UMAD_SA_CLASS_VERSION;
  pkt->mad_hdr.method = method;
  pkt->mad_hdr.tid = htobe64(++sa.tid);
  pkt->mad_hdr.attr_id = htons(UMAD_SA_ATTR_MCMEMBER_REC);
  pkt->comp_mask = htobe64(comp_mask);
  std::memcpy(pkt->data, &rec, sizeof rec);
  umad_set_addr(buf.data(), static_cast<int>(sa.info.sm_lid), 1, static_cast<int>(sa.info.sm_sl), kQp1Qkey);
  if (umad_send(sa.port, sa.agent, buf.data(), static_cast<int>(len), kTimeoutMs, kRetries) < 0) {
    std::fprintf(stderr, "mcast_join: umad_send: %s\n", std::strerror(errno));
    return -1;
  }
  for (;;) {
    int rlen = static_cast<int>(len);
    std::fill(buf.begin(), buf.end(), 0);
    if (umad_recv(sa.port, buf.data(), &rlen, kTimeoutMs * (kRetries + 1)) < 0) {
      std::fprintf(stderr, "mcast_join: no answer from the SA (LID %u): %s\n", sa.info.sm_lid, std::strerror(errno));
      return -1;
    }
    if (umad_status(buf.data()) != 0) {
      std::fprintf(stderr, "mcast_join: request timed out (umad status %d)\n", umad_status(buf.data()));
      return -1;
    }
    const auto* ans = static_cast<const umad_sa_packet*>(umad_get_mad(buf.data()));
    // The MAD layer (the kernel, or libumad2sim) owns the upper 32 bits of
    // the TID (its agent id): compare the lower ones.
    if ((be64toh(ans->mad_hdr.tid) & 0xffffffffu) != (sa.tid & 0xffffffffu)) continue;  // a late answer to an earlier try
    std::memcpy(&reply, ans->data, sizeof reply);
    return ntohs(ans->mad_hdr.status);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool create = false, leave = false;
  const char* mgid_text = nullptr;
  uint64_t pkey = 0xffff;
  std::vector<uint64_t> guids;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--create") {
      create = true;
    } else if (a == "--leave") {
      leave = true;
    } else if (a == "--mgid" && i + 1 < argc) {
      mgid_text = argv[++i];
    } else if (a == "--pkey" && i + 1 < argc) {
      if (!parse_u64(argv[++i], pkey) || pkey > 0xffff) return usage("--pkey: expected a 16-bit number");
    } else if (!a.empty() && a[0] != '-') {
      uint64_t g = 0;
      if (!parse_u64(argv[i], g) || g == 0) return usage(("not a port GUID: " + a).c_str());
      guids.push_back(g);
    } else {
      return usage(("unknown argument: " + a).c_str());
    }
  }
  if (mgid_text == nullptr) return usage("--mgid is required");
  if (guids.empty()) return usage("no PORT_GUID");
  if (create && leave) return usage("--create and --leave exclude each other");
  in6_addr mgid{};
  if (inet_pton(AF_INET6, mgid_text, &mgid) != 1 || mgid.s6_addr[0] != 0xff) {
    return usage("--mgid: expected a multicast GID (ff..::..)");
  }

  Sa sa;
  if (umad_init() < 0) {
    std::fprintf(stderr, "mcast_join: umad_init failed\n");
    return 1;
  }
  if (umad_get_port(nullptr, 0, &sa.info) < 0) {
    std::fprintf(stderr, "mcast_join: no InfiniBand port\n");
    return 1;
  }
  if (sa.info.sm_lid == 0) {
    std::fprintf(stderr, "mcast_join: the port knows no SM (SM LID 0)\n");
    return 1;
  }
  sa.port = umad_open_port(nullptr, 0);
  if (sa.port < 0) {
    std::fprintf(stderr, "mcast_join: umad_open_port failed\n");
    return 1;
  }
  sa.agent = umad_register(sa.port, UMAD_CLASS_SUBN_ADM, UMAD_SA_CLASS_VERSION, 1, nullptr);
  if (sa.agent < 0) {
    std::fprintf(stderr, "mcast_join: umad_register failed\n");
    return 1;
  }

  int rc = 0;
  for (const uint64_t guid : guids) {
    umad_sa_mcmember_record rec{};
    std::memcpy(rec.mgid, mgid.s6_addr, sizeof rec.mgid);
    std::memcpy(rec.portgid, &sa.info.gid_prefix, 8);  // both already in network order
    const uint64_t guid_be = htobe64(guid);
    std::memcpy(rec.portgid + 8, &guid_be, 8);
    rec.scope_state = UMAD_SA_MCM_JOIN_STATE_FULL_MEMBER;
    uint64_t mask = UMAD_SA_MCM_COMP_MASK_MGID | UMAD_SA_MCM_COMP_MASK_PORT_GID | UMAD_SA_MCM_COMP_MASK_JOIN_STATE;
    if (create) {
      rec.qkey = htonl(0x0b1b);
      rec.pkey = htons(static_cast<uint16_t>(pkey));
      rec.mtu = 4;   // 2048 bytes, selector "exactly"
      rec.rate = 3;  // 10 Gb/s, selector "exactly"
      rec.sl_flow_hop = 0;
      rec.tclass = 0;
      mask |= UMAD_SA_MCM_COMP_MASK_QKEY | UMAD_SA_MCM_COMP_MASK_PKEY | UMAD_SA_MCM_COMP_MASK_MTU |
              UMAD_SA_MCM_COMP_MASK_RATE | UMAD_SA_MCM_COMP_MASK_SL | UMAD_SA_MCM_COMP_MASK_FLOW_LABEL |
              UMAD_SA_MCM_COMP_MASK_TCLASS;
    }
    umad_sa_mcmember_record reply{};
    const auto method = static_cast<uint8_t>(leave ? int{UMAD_SA_METHOD_DELETE} : int{UMAD_METHOD_SET});
    const int status = request(sa, method, rec, mask, reply);
    if (status != 0) {
      if (status > 0) {
        std::fprintf(stderr, "mcast_join: %s of port 0x%016" PRIx64 " refused by the SA, MAD status 0x%04x\n",
                     leave ? "leave" : "join", guid, static_cast<unsigned>(status));
      }
      rc = 1;
      break;
    }
    if (leave) {
      std::printf("0x%016" PRIx64 " left\n", guid);
    } else {
      std::printf("0x%016" PRIx64 " mlid 0x%04x\n", guid, static_cast<unsigned>(ntohs(reply.mlid)));
    }
  }
  umad_unregister(sa.port, sa.agent);
  umad_close_port(sa.port);
  umad_done();
  return rc;
}
