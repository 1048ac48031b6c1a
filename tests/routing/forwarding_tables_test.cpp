// ForwardingTables::reset: the same tables as new ones of that size, in the
// storage they had.
#include <gtest/gtest.h>

#include "routing/lft.h"

namespace railyard::routing {
namespace {

TEST(ForwardingTables, ResetEqualsNewTablesOfThatSize) {
  ForwardingTables t(4, 100);
  for (uint32_t s = 0; s < 4; ++s) {
    for (uint16_t l = 1; l < 100; ++l) t.set(s, Lid{l}, static_cast<uint8_t>((s + l) % 7));
  }
  t.reset(3, 90);
  EXPECT_EQ(t.num_switches(), 3u);
  EXPECT_EQ(t.num_lids(), 90u);
  EXPECT_TRUE(t == ForwardingTables(3, 90)) << "every entry kNoPath, nothing left of before";
  t.reset(5, 120);  // larger than before: grows
  EXPECT_TRUE(t == ForwardingTables(5, 120));
}

TEST(ForwardingTables, ResetKeepsTheStorageWhenItIsLargeEnough) {
  ForwardingTables t(8, 1000);
  const uint8_t* storage = t.row(0).data();
  t.set(7, Lid{999}, 3);
  t.reset(8, 1000);
  EXPECT_EQ(t.row(0).data(), storage) << "same size: no new allocation";
  EXPECT_EQ(t.get(7, Lid{999}), ForwardingTables::kNoPath);
  t.reset(6, 900);
  EXPECT_EQ(t.row(0).data(), storage) << "smaller: no new allocation";
}

}  // namespace
}  // namespace railyard::routing
