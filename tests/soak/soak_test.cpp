// Many short generations in one process: resident memory and open file
// descriptors stay flat. Every generation builds its session anew (weights
// bound, programs compiled, worker threads started, all released again),
// alternating a one-device plan, a plan over two cpu device entries (the
// scheduler's worker threads and hand-overs) and a ResilientSession.
#include <hetero/registry.hpp>
#include <hetero/runtime/generate.hpp>
#include <hetero/runtime/open_model.hpp>
#include <hetero/runtime/resilient_session.hpp>
#include <hetero/runtime/session.hpp>

#include "../unit/build_tree_registry.hpp"
#include "../unit/story_model_plans.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <malloc.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

namespace {

// VmRSS of this process, in kB.
double rss_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6));
    return -1;
}

double open_fds() {
    double n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) n += e.path().empty() ? 0 : 1;
    return n;
}

double mean(const std::vector<double>& v, size_t from, size_t count) {
    return std::accumulate(v.begin() + long(from), v.begin() + long(from + count), 0.0) / double(count);
}

TEST(Soak, HundredsOfShortGenerationsKeepMemoryAndDescriptorsFlat) {
    // The first few hundred generations still touch fresh pages of malloc's
    // arenas (RSS +2 % between the first and last hundred after 50 of them),
    // so they are not measured. After them RSS still creeps by about 30-40 kB
    // per thousand generations (+3 % over 8,000) while the heap in use does not
    // grow with the count (+4 kB over 1,000, +10 kB over 8,000): pages of
    // freed memory touched again, not objects kept. 600 runs measure the
    // issue's 500 with margin to the 2 % bound.
    constexpr int kWarmup = 300, kRuns = 600, kWindow = 100, kTokens = 5;
    // glibc gives a thread that finds every arena locked a new one (up to 8 per
    // core), so under a loaded machine the count of arenas, and the pages they
    // touch, depends on timing rather than on this code. One arena, and free
    // pages handed back before each sample, leave RSS following what is held.
    mallopt(M_ARENA_MAX, 1);
    hetero::Provider* cpu = hetero::test::build_tree_registry().find("cpu");
    ASSERT_NE(cpu, nullptr);
    const hetero::test::StoryModelPlans story = hetero::test::story_model_plans(cpu);
    const hetero::OpenedModel& m = story.m;
    const int n_layer = story.n_layer;
    const hetero::Plan& one = story.one;
    const hetero::Plan& two = story.two;
    ASSERT_EQ(two.used_devices().size(), 2u);
    const char* prompts[] = {"Once upon a time", "The little dog", "Lily and Tom went to the park", ""};

    std::vector<double> rss, fds, heap;
    rss.reserve(kRuns);  // the measurements must not grow the heap themselves
    fds.reserve(kRuns);
    heap.reserve(kRuns);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kWarmup + kRuns; ++i) {
        hetero::SessionOptions so;
        so.n_ctx = 64;
        hetero::Sampler sampler(hetero::SamplerOptions{i % 3 == 0 ? 0.f : 0.8f, 40, 0.95f, uint64_t(i)});
        const std::string prompt = prompts[i % 4];
        hetero::GenerationResult r;
        const int mode = i % 3;
        if (mode == 2) {
            hetero::ResilientSession s(m.file, two, so, [&](const std::vector<hetero::DeviceRef>& left) {
                return hetero::Replanned{hetero::plan_single_device(n_layer, left, 0), nullptr};
            });
            r = hetero::generate(s, *m.tokenizer, prompt, kTokens, sampler);
        } else {
            hetero::Session s(m.file, mode == 0 ? one : two, so);
            r = hetero::generate(s, *m.tokenizer, prompt, kTokens, sampler);
        }
        ASSERT_GE(r.tokens.size(), 1u);
        if (i >= kWarmup) {
            malloc_trim(0);
            rss.push_back(rss_kb());
            fds.push_back(open_fds());
            heap.push_back(double(mallinfo2().uordblks) / 1024);
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rss_first = mean(rss, 0, kWindow), rss_last = mean(rss, rss.size() - kWindow, kWindow);
    const double fd_first = mean(fds, 0, kWindow), fd_last = mean(fds, fds.size() - kWindow, kWindow);
    const double heap_first = mean(heap, 0, kWindow), heap_last = mean(heap, heap.size() - kWindow, kWindow);
    const double rss_growth = (rss_last - rss_first) / rss_first, fd_growth = (fd_last - fd_first) / fd_first;
    // Means of the first and last hundred generations. The heap in use (malloc's
    // count) is printed beside RSS: RSS also creeps by a few kB per thousand
    // generations as reuse touches more pages of memory already mapped.
    std::printf("soak: %d generations of %d tokens in %.1f s; RSS %.0f -> %.0f kB (%+.2f %%), open fds %.1f -> %.1f (%+.2f %%), "
                "heap in use %.1f -> %.1f kB (%+.2f %%)\n",
                kRuns, kTokens, seconds, rss_first, rss_last, rss_growth * 100, fd_first, fd_last, fd_growth * 100, heap_first, heap_last,
                (heap_last - heap_first) / heap_first * 100);
    EXPECT_LT(rss_growth, 0.02) << "resident memory grows over the runs";
    EXPECT_LT(fd_growth, 0.02) << "file descriptors leak";
}

}  // namespace
