// The profiler, its cache and its predictor: a real (short) profile of the
// default model on the CPU provider survives the JSON cache; corrupt and
// stale cache files are ignored with one warning; the piecewise-linear
// tables and the cost model's fallback behave as documented. No test checks
// a measured time against a bound.
#include <hetero/error.hpp>
#include <hetero/log.hpp>
#include <hetero/model/model.hpp>
#include <hetero/profile/profile.hpp>
#include <hetero/registry.hpp>
#include <hetero/runtime/plan.hpp>

#include "fresh_cache_fixture.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace hetero;

// Warnings logged while in scope.
struct Warnings {
    std::vector<std::string> lines;
    std::mutex m;
    Warnings() {
        set_log_sink([this](LogLevel l, const std::string& s) {
            std::lock_guard<std::mutex> lock(m);
            if (l == LogLevel::warn) lines.push_back(s);
        });
    }
    ~Warnings() { set_log_sink(nullptr); }
};

// XDG_CACHE_HOME points at a fresh directory for each test; the CPU provider
// from the build tree and the default model are shared by the suite.
class Profile : public test::CpuWithFreshCache {
protected:
    Profile() : CpuWithFreshCache("profile") {}
    static void SetUpTestSuite() {
        CpuWithFreshCache::SetUpTestSuite();
        model_ = new ModelFile(load_model(HETERO_SOURCE_DIR "/models/stories260K.gguf"));
    }
    static void TearDownTestSuite() {
        delete model_;
        CpuWithFreshCache::TearDownTestSuite();
    }

    // A profile with one family, written by hand (no measuring).
    DeviceProfile hand_made() const {
        DeviceProfile p;
        p.key = profile_key(cpu_, *model_);
        p.date = "2026-01-01T00:00:00Z";
        p.n_ctx = 512;
        p.max_tokens = 8;
        p.launch_seconds = 1e-5;
        p.write = {1e-6, 1e9, {{4096, 5e-6}}};
        p.read = {2e-6, 2e9, {{4096, 4e-6}}};
        p.families["matmul f32 k=64 m=64"].by_n.points = {{1, 1e-5}, {2, 2e-5}, {4, 3e-5}, {8, 7e-5}};
        return p;
    }

    inline static ModelFile* model_ = nullptr;
};

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_all(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
    return lines.size() == 1 && lines[0].find(what) != std::string::npos;
}

}  // namespace

TEST_F(Profile, MeasuredProfileRoundTripsThroughTheCache) {
    ProfileOptions o;
    o.max_tokens = 64;
    o.target_seconds = 0.005;  // short: this checks the plumbing, not the figures
    o.min_runs = 1;
    o.max_runs = 3;
    int calls = 0;
    double last_fraction = -1;
    bool monotone = true;
    const DeviceProfile p = profile_device(cpu_, *model_, o, [&](const ProfileProgress& pr) {
        ++calls;
        monotone = monotone && pr.fraction >= last_fraction && pr.fraction <= 1.0;
        last_fraction = pr.fraction;
    });
    EXPECT_GT(calls, 10);
    EXPECT_TRUE(monotone);
    EXPECT_EQ(p.max_tokens, 64);
    EXPECT_GT(p.launch_seconds, 0);
    EXPECT_GT(p.write.bytes_per_second, 0);
    EXPECT_GT(p.read.bytes_per_second, 0);
    bool matmul = false, attention_kv = false;
    for (const auto& [family, f] : p.families) {
        matmul = matmul || family.rfind("matmul ", 0) == 0;
        if (family.rfind("attention ", 0) == 0) attention_kv = !f.by_kv.empty();
        for (const ProfileTable* t : {&f.by_n, &f.by_kv})
            for (size_t i = 1; i < t->points.size(); ++i) EXPECT_LT(t->points[i - 1].x, t->points[i].x) << family;
    }
    EXPECT_TRUE(matmul);
    EXPECT_TRUE(attention_kv);
    // Every layer family has the full grid up to 64: 1, 2, ..., 64.
    EXPECT_EQ(p.families.at("rmsnorm f32 w=64").by_n.points.back().x, 64);
    EXPECT_EQ(p.families.at("rmsnorm f32 w=64").by_n.points.size(), 7u);
    EXPECT_GT(held_out_summary(p).count, 0u);

    const std::string path = save_profile(p);
    EXPECT_EQ(path, profile_path(p.key));
    EXPECT_EQ(fs::path(path).parent_path(), dir_ / "hetero" / "profiles");
    Warnings w;
    const std::optional<DeviceProfile> back = load_profile(cpu_, *model_);
    ASSERT_TRUE(back.has_value());
    EXPECT_TRUE(w.lines.empty());
    EXPECT_EQ(back->file, path);
    EXPECT_TRUE(back->key == p.key);
    EXPECT_EQ(back->date, p.date);
    EXPECT_EQ(back->launch_seconds, p.launch_seconds);
    EXPECT_EQ(back->write.latency_seconds, p.write.latency_seconds);
    EXPECT_EQ(back->read.bytes_per_second, p.read.bytes_per_second);
    EXPECT_EQ(back->first_compile_seconds, p.first_compile_seconds);
    ASSERT_EQ(back->families.size(), p.families.size());
    for (const auto& [family, f] : p.families) {
        const FamilyProfile& g = back->families.at(family);
        ASSERT_EQ(g.by_n.points.size(), f.by_n.points.size()) << family;
        for (size_t i = 0; i < f.by_n.points.size(); ++i) {
            EXPECT_EQ(g.by_n.points[i].x, f.by_n.points[i].x);
            EXPECT_EQ(g.by_n.points[i].seconds, f.by_n.points[i].seconds);
        }
        ASSERT_EQ(g.by_kv.points.size(), f.by_kv.points.size()) << family;
        ASSERT_EQ(g.by_n.held_out.size(), f.by_n.held_out.size()) << family;
        for (size_t i = 0; i < f.by_n.held_out.size(); ++i) EXPECT_EQ(g.by_n.held_out[i].predicted, f.by_n.held_out[i].predicted);
    }
    EXPECT_NE(describe_profile(*back).find("matmul"), std::string::npos);
    // The session fit: decode and every prefill point up to the cap, each with a usable line.
    ASSERT_EQ(p.session_fit.size(), 3u);  // n = 1, 16, 64
    EXPECT_EQ(p.session_fit.front().n, 1);
    EXPECT_EQ(p.session_fit.back().n, 64);
    ASSERT_EQ(back->session_fit.size(), p.session_fit.size());
    for (size_t i = 0; i < p.session_fit.size(); ++i) {
        EXPECT_GT(p.session_fit[i].scale, 0);
        EXPECT_GE(p.launch_seconds + p.session_fit[i].overhead_seconds, 0.1 * p.launch_seconds - 1e-12);
        EXPECT_EQ(back->session_fit[i].scale, p.session_fit[i].scale);
        EXPECT_EQ(back->session_fit[i].overhead_seconds, p.session_fit[i].overhead_seconds);
    }
    EXPECT_NE(describe_profile(*back).find("session executables"), std::string::npos);
}

// A profile for more tokens extends the cached one: its points up to the old
// cap, launch and transfer figures and session fits are kept as measured
// (the same values, not measured again), and only what lies beyond is new.
TEST_F(Profile, ALongerPromptExtendsTheCachedProfile) {
    ProfileOptions o;
    o.max_tokens = 16;
    o.target_seconds = 0.005;
    o.min_runs = 1;
    o.max_runs = 3;
    const DeviceProfile base = profile_device(cpu_, *model_, o);
    ASSERT_EQ(base.max_tokens, 16);
    o.max_tokens = 64;
    std::set<std::pair<std::string, int64_t>> measured;  // (stage, x) of every report
    const DeviceProfile p = profile_device(cpu_, *model_, o, [&](const ProfileProgress& pr) { measured.insert({pr.stage, pr.x}); }, &base);
    EXPECT_EQ(p.max_tokens, 64);
    EXPECT_EQ(p.launch_seconds, base.launch_seconds);
    EXPECT_EQ(p.write.bytes_per_second, base.write.bytes_per_second);
    EXPECT_EQ(measured.count({"launch", 0}), 0u);
    for (const auto& [stage, x] : measured) {
        if (stage == "transfer write" || stage == "transfer read") continue;
        EXPECT_GT(x, 16) << stage << " measured again at " << x;
    }
    ASSERT_EQ(p.families.size(), base.families.size());
    for (const auto& [family, f] : base.families) {
        const FamilyProfile& g = p.families.at(family);
        ASSERT_GE(g.by_n.points.size(), f.by_n.points.size()) << family;
        for (size_t i = 0; i < f.by_n.points.size(); ++i) {
            EXPECT_EQ(g.by_n.points[i].x, f.by_n.points[i].x);
            EXPECT_EQ(g.by_n.points[i].seconds, f.by_n.points[i].seconds) << family << " n=" << f.by_n.points[i].x;
        }
        for (size_t i = 1; i < g.by_n.points.size(); ++i) EXPECT_LT(g.by_n.points[i - 1].x, g.by_n.points[i].x) << family;
        ASSERT_EQ(g.by_kv.points.size(), f.by_kv.points.size()) << family;  // the same context: its cache grid is whole
    }
    EXPECT_EQ(p.families.at("rmsnorm f32 w=64").by_n.points.back().x, 64);
    EXPECT_EQ(p.families.at("rmsnorm f32 w=64").by_n.points.size(), 7u);
    // Session fits at 1 and 16 kept, 64 measured.
    ASSERT_EQ(p.session_fit.size(), 3u);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(p.session_fit[i].n, base.session_fit[i].n);
        EXPECT_EQ(p.session_fit[i].scale, base.session_fit[i].scale);
    }
    EXPECT_EQ(p.session_fit.back().n, 64);
    // A profile of another model shape is not a base.
    DeviceProfile other = base;
    other.key.model_shape += " (another)";
    EXPECT_THROW(profile_device(cpu_, *model_, o, {}, &other), hetero::Error);
}

TEST_F(Profile, NoFileIsAbsentWithoutWarning) {
    Warnings w;
    EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
    EXPECT_TRUE(w.lines.empty());
}

TEST_F(Profile, CorruptFileIsIgnoredWithOneWarning) {
    const std::string path = save_profile(hand_made());
    const std::string text = read_all(path);
    for (const std::string& bad : {text.substr(0, text.size() / 2), std::string("\x7f garbage {{{")}) {
        write_all(path, bad);
        Warnings w;
        EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
        EXPECT_TRUE(mentions(w.lines, path)) << w.lines.size() << " warnings";
    }
}

TEST_F(Profile, StaleKeyIsIgnoredWithOneWarning) {
    const std::string path = save_profile(hand_made());
    ASSERT_TRUE(load_profile(cpu_, *model_).has_value());
    nlohmann::json j = nlohmann::json::parse(read_all(path));
    j["key"]["driver"] = "an older driver";
    write_all(path, j.dump());
    Warnings w;
    EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
    EXPECT_TRUE(mentions(w.lines, path)) << w.lines.size() << " warnings";
    EXPECT_TRUE(mentions(w.lines, "an older driver"));
}

// The cache is opened like every other input: a FIFO (which would block a
// reader until a writer came) or a link to /dev/zero (which never ends) is
// ignored with one warning naming it, at once.
TEST_F(Profile, CacheFileThatIsNotARegularFileIsIgnoredAtOnce) {
    const std::string path = save_profile(hand_made());
    fs::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    auto load_with_deadline = [&] {
        auto done = std::make_shared<std::promise<bool>>();
        std::future<bool> result = done->get_future();
        std::thread([this, done] { done->set_value(load_profile(cpu_, *model_).has_value()); }).detach();
        if (result.wait_for(std::chrono::seconds(10)) == std::future_status::timeout) {
            // Release the blocked reader: a writer that opens and closes the FIFO.
            const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0) ::close(fd);
            ADD_FAILURE() << "load_profile blocked on a FIFO";
            result.wait();
        }
        return result.get();
    };
    {
        Warnings w;
        EXPECT_FALSE(load_with_deadline());
        EXPECT_TRUE(mentions(w.lines, path)) << w.lines.size() << " warnings";
        EXPECT_TRUE(mentions(w.lines, "not a regular file")) << (w.lines.empty() ? "" : w.lines[0]);
    }
    fs::remove(path);
    fs::create_symlink("/dev/zero", path);
    {
        Warnings w;
        EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
        EXPECT_TRUE(mentions(w.lines, path)) << w.lines.size() << " warnings";
    }
    // A file past the size limit is not read.
    fs::remove(path);
    write_all(path, std::string(17u << 20, ' '));
    {
        Warnings w;
        EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
        EXPECT_TRUE(mentions(w.lines, "a profile is at most")) << (w.lines.empty() ? "" : w.lines[0]);
    }
    // Saving replaces the bad file with a good one.
    fs::remove(path);
    fs::create_symlink("/dev/zero", path);
    EXPECT_EQ(save_profile(hand_made()), path);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path)));
    EXPECT_TRUE(load_profile(cpu_, *model_).has_value());
}

// Every value is range-checked and a repeated key refused: a file that
// would move the plan (1e308 s launches, negative compile times) is
// ignored with one warning naming the file and the value.
TEST_F(Profile, OutOfRangeValuesAndDuplicateKeysAreIgnoredWithOneWarning) {
    const std::string path = save_profile(hand_made());
    const nlohmann::json good = nlohmann::json::parse(read_all(path));
    const std::string family = "matmul f32 k=64 m=64";
    struct Edit {
        std::string what;  // expected in the warning
        std::function<void(nlohmann::json&)> apply;
    };
    const std::vector<Edit> edits = {
        {"launch_seconds = 1e+308", [](nlohmann::json& j) { j["launch_seconds"] = 1e308; }},
        {"launch_seconds = -1", [](nlohmann::json& j) { j["launch_seconds"] = -1.0; }},
        {"compile_seconds = -5", [](nlohmann::json& j) { j["compile_seconds"] = -5.0; }},
        {"first_compile_seconds = 1e+308", [](nlohmann::json& j) { j["first_compile_seconds"] = 1e308; }},
        {"profile_seconds = -1", [](nlohmann::json& j) { j["profile_seconds"] = -1.0; }},
        {"transfer.write bytes_per_second = 1e+300", [](nlohmann::json& j) { j["transfer"]["write"]["bytes_per_second"] = 1e300; }},
        {"transfer.read latency_seconds = -1", [](nlohmann::json& j) { j["transfer"]["read"]["latency_seconds"] = -1.0; }},
        {"transfer.read point seconds = 1e+308", [](nlohmann::json& j) { j["transfer"]["read"]["points"][0][1] = 1e308; }},
        {family + " by_n point 2 value = 1e+308", [&](nlohmann::json& j) { j["families"][family]["by_n"]["points"][2][1] = 1e308; }},
        {family + " by_n point 0 x = 0", [&](nlohmann::json& j) { j["families"][family]["by_n"]["points"][0][0] = 0; }},
        {"n_ctx = 0", [](nlohmann::json& j) { j["n_ctx"] = 0; }},
    };
    for (const Edit& e : edits) {
        nlohmann::json j = good;
        e.apply(j);
        write_all(path, j.dump(1));
        Warnings w;
        EXPECT_FALSE(load_profile(cpu_, *model_).has_value()) << e.what;
        EXPECT_TRUE(mentions(w.lines, path)) << e.what << ": " << w.lines.size() << " warnings";
        EXPECT_TRUE(mentions(w.lines, e.what)) << e.what << ": " << (w.lines.empty() ? "" : w.lines[0]);
    }
    // A key written twice: the first value must not silently lose to the second.
    std::string twice = good.dump(1);
    const size_t at = twice.find("\"launch_seconds\"");
    ASSERT_NE(at, std::string::npos);
    twice.insert(at, "\"launch_seconds\": 1e-300,\n ");
    write_all(path, twice);
    Warnings w;
    EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
    EXPECT_TRUE(mentions(w.lines, "duplicate key 'launch_seconds'")) << (w.lines.empty() ? "" : w.lines[0]);
}

TEST_F(Profile, TableIsPiecewiseLinear) {
    const ProfileTable t = hand_made().families.at("matmul f32 k=64 m=64").by_n;
    for (const auto& p : t.points) EXPECT_EQ(t.predict(double(p.x)), p.seconds) << p.x;
    EXPECT_DOUBLE_EQ(t.predict(3), 2.5e-5);
    EXPECT_DOUBLE_EQ(t.predict(6), 5e-5);
    EXPECT_DOUBLE_EQ(t.predict(5), 4e-5);
    EXPECT_DOUBLE_EQ(t.predict(16), 1.5e-4);  // the last segment's slope, 1e-5 per token, continued
    EXPECT_DOUBLE_EQ(t.predict(0.5), 5e-6);  // the first segment continued
    ProfileTable steep;
    steep.points = {{1, 1e-6}, {2, 1e-5}};
    EXPECT_EQ(steep.predict(0), kMinNodeSeconds);  // never below the floor
    EXPECT_LT(ProfileTable{}.predict(4), 0);
}

namespace {

// Answers everything with recognisable constants.
class FixedCostModel : public CostModel {
public:
    double node_seconds(size_t, const OpShape&) const override { return 42; }
    double launch_seconds(size_t) const override { return 43; }
    double transfer_seconds(size_t, size_t, uint64_t) const override { return 44; }
    double compile_seconds(size_t) const override { return 45; }
    std::string source(size_t) const override { return "fixed"; }
};

OpShape matmul_shape(int64_t n, int64_t m) {
    OpShape s;
    s.op = HETERO_OP_MATMUL;
    s.dtype = HETERO_DTYPE_F32;
    s.n = n;
    s.k = 64;
    s.m = m;
    return s;
}

}  // namespace

TEST_F(Profile, CostModelUsesTablesAndFallsBackForTheRest) {
    DeviceProfile p = hand_made();
    p.file = "/somewhere/p.json";
    OpShape att;
    att.op = HETERO_OP_ATTENTION;
    att.dtype = HETERO_DTYPE_F32;
    att.k = 64;
    att.m = 32;
    FamilyProfile& fa = p.families[att.family()];
    fa.by_n.points = {{1, 1e-6}, {4, 4e-6}};
    fa.by_kv.points = {{16, 2e-6}, {64, 8e-6}};

    DeviceRef other = cpu_;
    other.props.flags = 0;  // a device with its own memory
    FixedCostModel fixed;
    ProfiledCostModel cm({cpu_, other}, {p, std::nullopt}, &fixed);
    EXPECT_DOUBLE_EQ(cm.node_seconds(0, matmul_shape(3, 64)), 2.5e-5);
    EXPECT_EQ(cm.node_seconds(0, matmul_shape(3, 16)), 2.5e-5 * 16 / 64);  // a row share of the measured 64 rows
    OpShape wide = matmul_shape(3, 64);
    wide.k = 65;
    EXPECT_EQ(cm.node_seconds(0, wide), 42);  // unknown family
    EXPECT_EQ(cm.node_seconds(1, matmul_shape(3, 64)), 42);  // no profile
    att.n = 1;
    att.kv = 40;
    EXPECT_DOUBLE_EQ(cm.node_seconds(0, att), 5e-6);  // decode: the kv table
    att.n = 2;
    att.kv = 1;
    EXPECT_DOUBLE_EQ(cm.node_seconds(0, att), 2e-6);  // prefill at position 0: the n table
    att.kv = 15;                                       // ...10 times as many rows further in
    EXPECT_DOUBLE_EQ(cm.node_seconds(0, att), 2e-5);
    att.n = 8;                                         // beyond the table (n = 4): quadratic in n
    att.kv = 4;
    EXPECT_DOUBLE_EQ(cm.node_seconds(0, att), 4e-6 * (8.0 * 9) / (4.0 * 5));
    EXPECT_EQ(cm.launch_seconds(0), 1e-5);
    EXPECT_EQ(cm.launch_seconds(1), 43);
    EXPECT_EQ(cm.compile_seconds(1), 45);
    EXPECT_EQ(cm.transfer_seconds(0, 0, 1 << 20), 0);
    EXPECT_EQ(cm.transfer_seconds(0, 1, 1 << 20), 44);
    EXPECT_EQ(cm.source(0), "profile /somewhere/p.json (measured 2026-01-01T00:00:00Z)");
    EXPECT_EQ(cm.source(1), "fixed");

    // Both profiled: the host-memory side (cpu) costs nothing, the other side its fit.
    ProfiledCostModel both({cpu_, other}, {p, p}, nullptr);
    EXPECT_DOUBLE_EQ(both.transfer_seconds(0, 1, 1000000), 1e-6 + 1e-3);
    EXPECT_DOUBLE_EQ(both.transfer_seconds(1, 0, 1000000), 2e-6 + 5e-4);
    EXPECT_THROW(both.node_seconds(0, wide), Error);
}

TEST_F(Profile, SessionFitScalesNodesAndAddsItsOverheadPerExecute) {
    DeviceProfile p = hand_made();
    p.session_fit = {{1, 2.0, 3e-6}, {16, 1.0, -5e-6}};
    ProfiledCostModel cm({cpu_}, {p}, nullptr);
    EXPECT_DOUBLE_EQ(cm.node_seconds(0, matmul_shape(1, 64)), 2 * 1e-5);      // the table's 1e-5 at n = 1, doubled
    EXPECT_DOUBLE_EQ(cm.execute_seconds(0, 1), 1e-5 + 3e-6);
    EXPECT_DOUBLE_EQ(cm.execute_seconds(0, 16), 1e-5 - 5e-6);
    EXPECT_DOUBLE_EQ(cm.execute_seconds(0, 4096), 1e-5 - 5e-6);               // the last point beyond the grid
    EXPECT_DOUBLE_EQ(session_fit_at(p.session_fit, 6).scale, 2.0 - 5.0 / 15);  // linear in n between points
    p.session_fit = {{1, 1.0, -1e-3}};
    EXPECT_DOUBLE_EQ(ProfiledCostModel({cpu_}, {p}, nullptr).execute_seconds(0, 1), 1e-6);  // never below a tenth of launch
    EXPECT_EQ(session_fit_at({}, 7).scale, 1.0);

    // A bad fit point in the file makes the whole file invalid (ignored with one warning).
    p.session_fit = {{1, 1.0, 0.0}};
    const std::string path = save_profile(p);
    nlohmann::json j = nlohmann::json::parse(read_all(path));
    j["session_fit"][0]["scale"] = -1;
    write_all(path, j.dump());
    Warnings w;
    EXPECT_FALSE(load_profile(cpu_, *model_).has_value());
    EXPECT_TRUE(mentions(w.lines, "session_fit"));
}
