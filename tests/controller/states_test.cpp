// The controller's vocabularies (controller/states.h): each word is the text
// the store has always kept and the API has always rendered, and reads back.
#include "controller/states.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace railyard::controller {
namespace {

template <class E>
void expect_words(const std::vector<std::pair<E, std::string>>& words, std::optional<E> (*parse)(std::string_view)) {
  for (const auto& [value, word] : words) {
    EXPECT_EQ(to_string(value), word);
    EXPECT_EQ(parse(word), value) << word;
  }
  EXPECT_EQ(parse(""), std::nullopt);
  EXPECT_EQ(parse("Pending"), std::nullopt) << "words are exact";
  EXPECT_EQ(parse(words.front().second + " "), std::nullopt) << "words are exact";
}

TEST(States, WordsAreTheOnesTheStoreAndTheApiHaveAlwaysUsed) {
  expect_words<DrainKind>({{DrainKind::kLink, "link"}, {DrainKind::kPort, "port"}, {DrainKind::kSwitch, "switch"}},
                          parse_drain_kind);
  expect_words<LinkState>({{LinkState::kUp, "up"}, {LinkState::kDown, "down"}}, parse_link_state);
  expect_words<RerouteStatus>({{RerouteStatus::kQueued, "queued"},
                               {RerouteStatus::kPending, "pending"},
                               {RerouteStatus::kApplied, "applied"},
                               {RerouteStatus::kFailed, "failed"}},
                              parse_reroute_status);
  expect_words<JobStatus>(
      {{JobStatus::kActive, "active"}, {JobStatus::kRefused, "refused"}, {JobStatus::kDeleted, "deleted"}},
      parse_job_status);
  expect_words<Reporter>(
      {{Reporter::kPlugin, "plugin"}, {Reporter::kRest, "rest"}, {Reporter::kController, "controller"}},
      parse_reporter);
}

}  // namespace
}  // namespace railyard::controller
