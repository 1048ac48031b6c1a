#include "sm_plugin/request_book.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace railyard::sm_plugin {
namespace {

using Ids = std::vector<std::string>;

TEST(RequestBook, IdsFollowTheirPassToRoutingDoneOnce) {
  RequestBook book;
  EXPECT_EQ(book.start_pass(), Ids{}) << "a sweep nobody asked for";
  EXPECT_EQ(book.finish_routing(), Ids{});

  book.add("R-1");
  book.add("R-2");
  EXPECT_EQ(book.start_pass(), (Ids{"R-1", "R-2"})) << "the pass serves what is pending when it starts";
  book.add("R-3");  // arrives while the pass runs: the next pass serves it
  EXPECT_EQ(book.finish_routing(), (Ids{"R-1", "R-2"}));
  EXPECT_EQ(book.finish_routing(), Ids{}) << "handed over once";
  EXPECT_EQ(book.start_pass(), Ids{"R-3"});
  EXPECT_EQ(book.finish_routing(), Ids{"R-3"});
}

TEST(RequestBook, APassThatNeverReachedRoutingDoneHandsItsIdsToTheNext) {
  RequestBook book;
  book.add("R-1");
  EXPECT_EQ(book.start_pass(), Ids{"R-1"});
  // No UCAST_ROUTING_DONE (OpenSM abandoned the sweep); the next pass starts.
  book.add("R-2");
  EXPECT_EQ(book.start_pass(), (Ids{"R-1", "R-2"}));
  EXPECT_EQ(book.finish_routing(), (Ids{"R-1", "R-2"}));
}

}  // namespace
}  // namespace railyard::sm_plugin
