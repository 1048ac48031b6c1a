#include "routing/fabric_fingerprint.h"

#include <gtest/gtest.h>

#include <string>

#include "routing/topology_reader.h"

namespace railyard::routing {
namespace {

std::string two_cas(const char* lid2, const char* desc2) {
  return std::string("Switch 3 \"S-0000000000000001\" # \"leaf\" base port 0 lid 1 lmc 0\n"
                     "[1] \"H-0000000000000010\"[1](11) # \"n1\" lid 2 4xHDR\n"
                     "[2] \"H-0000000000000020\"[1](21) # \"") +
         desc2 + "\" lid " + lid2 +
         " 4xHDR\n\n"
         "Ca 1 \"H-0000000000000010\" # \"n1\"\n"
         "[1](11) \"S-0000000000000001\"[1] # lid 2 lmc 0 \"leaf\" lid 1 4xHDR\n\n"
         "Ca 1 \"H-0000000000000020\" # \"" +
         desc2 + "\"\n[1](21) \"S-0000000000000001\"[2] # lid " + lid2 + " lmc 0 \"leaf\" lid 1 4xHDR\n";
}

uint64_t fp(const std::string& text) {
  auto f = routing::read_topology(text, "t.net");
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? fabric_fingerprint(*f) : 0;
}

TEST(FabricFingerprint, EqualFabricsEqualDigestsAnyChangeDiffers) {
  const uint64_t base = fp(two_cas("3", "n2"));
  EXPECT_EQ(base, fp(two_cas("3", "n2"))) << "same fabric read twice";
  EXPECT_NE(base, fp(two_cas("4", "n2"))) << "a LID changed";
  EXPECT_NE(base, fp(two_cas("3", "n2 mlx5_0"))) << "a description changed";
  // One CA less (its link went down and OpenSM dropped it).
  const std::string one =
      "Switch 3 \"S-0000000000000001\" # \"leaf\" base port 0 lid 1 lmc 0\n"
      "[1] \"H-0000000000000010\"[1](11) # \"n1\" lid 2 4xHDR\n\n"
      "Ca 1 \"H-0000000000000010\" # \"n1\"\n"
      "[1](11) \"S-0000000000000001\"[1] # lid 2 lmc 0 \"leaf\" lid 1 4xHDR\n";
  EXPECT_NE(base, fp(one));
}

}  // namespace
}  // namespace railyard::routing
