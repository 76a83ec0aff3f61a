// sdk::write_file_atomically, which every cache writer uses: concurrent
// writers of one file never leave it partial, mixed or missing, and never
// leave temporary files behind.
#include <hetero/sdk/atomic_file.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A whole content of writer w: `size` copies of one letter.
bool whole(const std::string& s, size_t size) {
    return s.size() == size && s.find_first_not_of(s[0]) == std::string::npos && s[0] >= 'a' && s[0] < 'a' + 26;
}

size_t temp_files(const fs::path& dir) {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp") != std::string::npos;
    return n;
}

TEST(AtomicFile, ConcurrentWritersAndReadersSeeWholeFiles) {
    constexpr size_t kSize = 256 << 10;
    const fs::path dir = fresh_dir("hetero-atomic-threads");
    const std::string path = (dir / "entry.bin").string();
    ASSERT_EQ(hetero::sdk::write_file_atomically(path, std::string(kSize, 'a')), "");
    std::atomic<bool> done{false};
    std::atomic<int> bad{0}, reads{0};
    std::thread reader([&] {
        while (!done.load()) {
            if (!whole(read_all(path), kSize)) bad.fetch_add(1);
            reads.fetch_add(1);
        }
    });
    std::vector<std::thread> writers;
    for (int w = 0; w < 6; ++w)
        writers.emplace_back([&, w] {
            const std::string content(kSize, char('a' + w));
            for (int i = 0; i < 40; ++i)
                if (!hetero::sdk::write_file_atomically(path, content).empty()) bad.fetch_add(1);
        });
    for (auto& t : writers) t.join();
    done = true;
    reader.join();
    EXPECT_EQ(bad.load(), 0) << "of " << reads.load() << " reads";
    EXPECT_TRUE(whole(read_all(path), kSize));
    EXPECT_EQ(temp_files(dir), 0u);
    fs::remove_all(dir);
}

TEST(AtomicFile, ConcurrentProcessesLeaveAWholeFile) {
    constexpr size_t kSize = 1 << 20;
    const fs::path dir = fresh_dir("hetero-atomic-procs");
    const std::string path = (dir / "entry.bin").string();
    std::vector<pid_t> children;
    for (int w = 0; w < 4; ++w) {
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            const std::string content(kSize, char('a' + w));
            int rc = 0;
            for (int i = 0; i < 20; ++i) rc |= hetero::sdk::write_file_atomically(path, {content.substr(0, kSize / 2), content.substr(kSize / 2)}).empty() ? 0 : 1;
            ::_exit(rc);
        }
        children.push_back(pid);
    }
    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_TRUE(whole(read_all(path), kSize));
    EXPECT_EQ(temp_files(dir), 0u);
    fs::remove_all(dir);
}

TEST(AtomicFile, AFailedWriteLeavesTheTargetAndNoTemporaryFile) {
    const fs::path dir = fresh_dir("hetero-atomic-fail");
    const std::string missing = (dir / "no-such-dir" / "entry").string();
    const std::string e = hetero::sdk::write_file_atomically(missing, "x");
    EXPECT_NE(e.find("no-such-dir"), std::string::npos) << e;
    // The target is a directory: the rename fails, the temporary file goes.
    fs::create_directories(dir / "entry");
    EXPECT_NE(hetero::sdk::write_file_atomically((dir / "entry").string(), "x"), "");
    EXPECT_TRUE(fs::is_directory(dir / "entry"));
    EXPECT_EQ(temp_files(dir), 0u);
    fs::remove_all(dir);
}

}  // namespace
