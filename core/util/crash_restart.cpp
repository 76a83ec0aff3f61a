#include "crash_restart.hpp"
#include "plugin_quarantine.hpp"

#include <hetero/crash_report.hpp>
#include <hetero/sdk/cache_dir.hpp>
#include <hetero/sdk/hash.hpp>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ;

namespace hetero::crash_detail {

namespace {

// A fixed-size string a signal handler can build; text past the end is cut
// (and `cut` says so).
template <size_t N>
struct Text {
    char s[N] = {};
    size_t n = 0;
    bool cut = false;
    void clear() {
        n = 0;
        s[0] = 0;
        cut = false;
    }
    void add(char c) {
        if (n + 1 >= N) {
            cut = true;
            return;
        }
        s[n++] = c;
        s[n] = 0;
    }
    void add(const char* t) {
        while (*t) add(*t++);
    }
    void add_u64(uint64_t v) {
        char d[24];
        int k = 0;
        do d[k++] = char('0' + v % 10);
        while ((v /= 10) != 0);
        while (k) add(d[--k]);
    }
    void add_hex(uint64_t v) {
        for (int shift = 60; shift >= 0; shift -= 4) add("0123456789abcdef"[(v >> shift) & 15]);
    }
};

Text<2048> g_dir;         // the quarantine dir; empty: no records
Text<4096> g_exe;         // this program, for execve
char** g_argv = nullptr;  // main's
long g_max_fd = 1024;     // closed up to here when close_range is missing
uint64_t g_out_bytes = 0;
uint64_t g_out_hash = sdk::kFnvOffset;

// The value of environment variable `name`, or nullptr (getenv is not on
// the signal-safe list).
const char* env_value(const char* name) {
    const size_t len = std::strlen(name);
    for (char** e = environ; e && *e; ++e)
        if (std::strncmp(*e, name, len) == 0 && (*e)[len] == '=') return *e + len + 1;
    return nullptr;
}

// mkdir -p, each missing directory private to the user.
void make_dirs(const char* path) {
    static Text<2048> part;
    part.clear();
    for (const char* p = path; *p; ++p) {
        if (*p == '/' && part.n > 0) ::mkdir(part.s, 0700);
        part.add(*p);
    }
    ::mkdir(part.s, 0700);
}

bool write_all(int fd, const char* s, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        s += w;
        n -= size_t(w);
    }
    return true;
}

// Whether `list` (lines "<signal> <call> <path>") has a line for `plugin`.
bool listed(const char* list, const char* plugin) {
    const size_t len = std::strlen(plugin);
    for (const char* line = list; line && *line;) {
        const char* end = std::strchr(line, '\n');
        const size_t n = end ? size_t(end - line) : std::strlen(line);
        if (n >= len + 1 && line[n - len - 1] == ' ' && std::strncmp(line + n - len, plugin, len) == 0) return true;
        line = end ? end + 1 : nullptr;
    }
    return false;
}

int count_lines(const char* list) {
    if (!list || !*list) return 0;
    int lines = 1;
    for (const char* p = list; *p; ++p) lines += *p == '\n';
    return lines;
}

}  // namespace

void say(const char* s) { write_all(STDERR_FILENO, s, std::strlen(s)); }

void prepare_quarantine_dir() {
    g_dir.clear();
    g_dir.add(sdk::user_cache_dir(kQuarantineSubdir).c_str());
    if (g_dir.cut) g_dir.clear();
}

void prepare_restart(char** argv) {
    g_exe.clear();
    const ssize_t n = ::readlink("/proc/self/exe", g_exe.s, sizeof g_exe.s - 1);
    if (n <= 0 || size_t(n) >= sizeof g_exe.s - 1) {
        g_exe.clear();
        return;
    }
    g_exe.n = size_t(n);
    g_exe.s[n] = 0;
    g_argv = argv;
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) g_max_fd = long(rl.rlim_cur < 65536 ? rl.rlim_cur : 65536);
}

bool write_quarantine_record(const char* plugin, const char* signal, const char* call) {
    if (g_dir.n == 0) return false;
    struct stat st {};
    if (::stat(plugin, &st) != 0) return false;
    make_dirs(g_dir.s);
    static Text<2200> path;
    static Text<2300> temp;
    static Text<8192> text;
    path.clear();
    path.add(g_dir.s);
    path.add('/');
    path.add_hex(sdk::fnv1a(plugin, std::strlen(plugin)));
    temp.clear();
    temp.add(path.s);
    temp.add(".tmp.");
    temp.add_u64(uint64_t(::getpid()));
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    text.clear();
    text.add("path=");
    text.add(plugin);
    text.add("\nsize=");
    text.add_u64(uint64_t(st.st_size));
    text.add("\nmtime_ns=");
    text.add_u64(uint64_t(st.st_mtim.tv_sec) * 1000000000u + uint64_t(st.st_mtim.tv_nsec));
    text.add("\nsignal=");
    text.add(signal);
    text.add("\ncall=");
    text.add(call);
    text.add("\ntime=");
    text.add_u64(uint64_t(now.tv_sec));
    text.add('\n');
    if (path.cut || temp.cut || text.cut) return false;
    // Written beside its name, then renamed: a reader never sees half a record.
    const int fd = ::open(temp.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const bool ok = write_all(fd, text.s, text.n);
    ::close(fd);
    if (!ok || ::rename(temp.s, path.s) != 0) {
        ::unlink(temp.s);
        return false;
    }
    return true;
}

bool restart_allowed(const char* plugin) {
    if (!g_argv || g_exe.n == 0) return false;
    const char* before = env_value(kCrashedPluginsEnv);
    // A plugin left out cannot crash again; if it did, the exclusion failed
    // and a restart would loop.
    return count_lines(before) < kMaxCrashRestarts && !listed(before, plugin);
}

void restart_without(const char* plugin, const char* signal, const char* call) {
    static Text<16384> crashed;
    static Text<96> output;
    static char* envp[4096];
    const char* before = env_value(kCrashedPluginsEnv);
    crashed.clear();
    crashed.add(kCrashedPluginsEnv);
    crashed.add('=');
    if (before && *before) {
        crashed.add(before);
        crashed.add('\n');
    }
    crashed.add(signal);
    crashed.add(' ');
    for (const char* c = call; *c; ++c) crashed.add(*c == ' ' ? '_' : *c);
    crashed.add(' ');
    crashed.add(plugin);
    output.clear();
    output.add(kRestartOutputEnv);
    output.add('=');
    output.add_u64(g_out_bytes);
    output.add(' ');
    output.add_hex(g_out_hash);
    if (crashed.cut || output.cut) return;
    size_t k = 0;
    const size_t crashed_len = std::strlen(kCrashedPluginsEnv), output_len = std::strlen(kRestartOutputEnv);
    for (char** e = environ; e && *e && k + 3 < sizeof envp / sizeof envp[0]; ++e) {
        if (std::strncmp(*e, kCrashedPluginsEnv, crashed_len) == 0 && (*e)[crashed_len] == '=') continue;
        if (std::strncmp(*e, kRestartOutputEnv, output_len) == 0 && (*e)[output_len] == '=') continue;
        envp[k++] = *e;
    }
    envp[k++] = crashed.s;
    envp[k++] = output.s;
    envp[k] = nullptr;
    // The new program inherits the signal mask (the crash signal is blocked
    // in its handler) and every descriptor without close-on-exec (a server's
    // listening socket would keep its port).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
        for (long fd = 3; fd < g_max_fd; ++fd) ::close(int(fd));
    ::execve(g_exe.s, g_argv, envp);
    say("hetero: could not run the command again\n");
}

bool output_written() { return g_out_bytes > 0; }

void count_output(const char* data, size_t n) {
    g_out_bytes += n;
    g_out_hash = sdk::fnv1a(data, n, g_out_hash);
}

}  // namespace hetero::crash_detail
