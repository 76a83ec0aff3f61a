// A profile as a person reads it (`hetero profile --show`).
#include <hetero/profile/profile.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace hetero {

namespace {

std::string secs(double s) {
    if (s < 1e-3) return fmt::format("{:.1f}us", s * 1e6);
    if (s < 1.0) return fmt::format("{:.2f}ms", s * 1e3);
    return fmt::format("{:.2f}s", s);
}

std::string fit(const TransferFit& f) {
    return fmt::format("{} + {:.2f} GB/s", secs(f.latency_seconds), f.bytes_per_second / 1e9);
}

std::string row(const char* axis, const ProfileTable& t) {
    std::string s = fmt::format("{}:", axis);
    for (const auto& p : t.points) s += fmt::format(" {}:{}", p.x, secs(p.seconds));
    return s;
}

}  // namespace

std::string describe_profile(const DeviceProfile& p) {
    std::string s = fmt::format("{} {} ({}; provider {} {}, {} compute units)\n", p.key.provider, p.key.device_name, p.key.driver,
                                p.key.provider, p.key.provider_version, p.key.compute_units);
    s += fmt::format("  profile: {}, measured {} in {:.1f} s; n up to {}, context {}\n", p.file.empty() ? "(not saved)" : p.file,
                     p.date, p.profile_seconds, p.max_tokens, p.n_ctx);
    s += fmt::format("  launch (execute + wait): {}; write: {}; read: {}\n", secs(p.launch_seconds), fit(p.write), fit(p.read));
    s += fmt::format("  compile: first {}, later ones {} (median)\n", secs(p.first_compile_seconds), secs(p.compile_seconds));
    s += "  own seconds per node (launch excluded):\n";
    size_t width = 0;
    for (const auto& [name, f] : p.families) width = std::max(width, name.size());
    for (const auto& [name, f] : p.families) {
        if (!f.by_n.empty()) s += fmt::format("    {:<{}}  {}\n", name, width, row("n", f.by_n));
        if (!f.by_kv.empty()) s += fmt::format("    {:<{}}  {}\n", f.by_n.empty() ? name : "", width, row("kv", f.by_kv));
    }
    if (!p.layer_scale.empty()) {
        s += "  whole layer / sum of its nodes, n:";
        for (const ProfilePoint& pt : p.layer_scale.points) s += fmt::format(" {}:{:.2f}", pt.x, pt.seconds);
        s += "\n";
    }
    if (!p.session_fit.empty()) {
        s += "  session executables = launch + overhead + scale x nodes, n:";
        for (const SessionFitPoint& f : p.session_fit) s += fmt::format(" {}:{}{}/{:.2f}", f.n, f.overhead_seconds < 0 ? "-" : "+", secs(std::abs(f.overhead_seconds)), f.scale);
        s += "\n";
    }
    s += fmt::format("  held-out error: {}\n", describe_held_out(p));
    return s;
}

std::string describe_held_out(const DeviceProfile& p) {
    constexpr double kSignificant = 10e-6;
    auto stats = [&](const HeldOutSummary& h) {
        return fmt::format("median {:.1f} %, max {:.1f} % ({}) over {} points", h.median * 100, h.max * 100, h.worst, h.count);
    };
    const HeldOutSummary all = held_out_summary(p), big = held_out_summary(p, kSignificant);
    if (!all.count) return "no held-out points (the grid is too short)";
    std::string s = stats(all);
    if (big.count && big.count < all.count) s += fmt::format("; those above {}: {}", secs(kSignificant), stats(big));
    return s;
}

}  // namespace hetero
