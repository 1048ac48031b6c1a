// BackgroundWorker: work on one thread at background priority.
#include "controller/background_worker.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace railyard::controller {
namespace background_worker_test {

int thread_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))); }

TEST(BackgroundWorker, RunsTheWorkOnItsOwnThreadAtTheNiceAskedAndItsThreadsInheritIt) {
  const int mine = thread_nice();
  BackgroundWorker worker(7);
  std::thread::id ran_on;
  int nice_inside = -100, nice_of_lane = -100;
  worker.run([&] {
    ran_on = std::this_thread::get_id();
    nice_inside = thread_nice();
    std::thread lane([&] { nice_of_lane = thread_nice(); });  // as the engine's lanes
    lane.join();
  });
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(nice_inside, std::max(7, mine));
  EXPECT_EQ(nice_of_lane, nice_inside);
  EXPECT_EQ(worker.nice(), nice_inside);
  EXPECT_EQ(thread_nice(), mine) << "the caller's own priority is left alone";
}

TEST(BackgroundWorker, NiceZeroKeepsTheCreatorsPriority) {
  const int mine = thread_nice();
  BackgroundWorker worker(0);
  int nice_inside = -100;
  worker.run([&] { nice_inside = thread_nice(); });
  EXPECT_EQ(nice_inside, mine);
}

TEST(BackgroundWorker, AnExceptionReachesTheCallerAndTheWorkerGoesOn) {
  BackgroundWorker worker(5);
  EXPECT_THROW(worker.run([] { throw std::runtime_error("routing failed"); }), std::runtime_error);
  bool ran = false;
  worker.run([&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(BackgroundWorker, CallersFromManyThreadsAreServedOneAtATime) {
  BackgroundWorker worker(3);
  std::atomic<int> inside{0}, most{0}, done{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 6; ++c) {
    callers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        worker.run([&] {
          const int now = ++inside;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          std::this_thread::sleep_for(std::chrono::microseconds(50));
          --inside;
          ++done;
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(done.load(), 120);
  EXPECT_EQ(most.load(), 1);
}

TEST(BackgroundWorker, PostedWorkRunsInOrderAndTheDestructorFinishesWhatIsQueued) {
  std::vector<int> order;
  {
    BackgroundWorker worker(2);
    worker.post([] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
    for (int i = 0; i < 50; ++i) worker.post([&order, i] { order.push_back(i); });
    worker.post([] { throw std::runtime_error("dropped"); });
    bool after = false;
    worker.run([&] { after = true; });
    EXPECT_TRUE(after) << "a posted job that threw does not stop the worker";
    for (int i = 50; i < 60; ++i) worker.post([&order, i] { order.push_back(i); });
  }
  std::vector<int> expected(60);
  for (int i = 0; i < 60; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
}

}  // namespace background_worker_test
}  // namespace railyard::controller
