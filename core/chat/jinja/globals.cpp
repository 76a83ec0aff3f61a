#include "globals.hpp"

#include "args.hpp"
#include "errors.hpp"
#include "format.hpp"
#include "objects.hpp"
#include "operators.hpp"

#include <ctime>

namespace hetero::jinja {

namespace {

// Jinja2's sandbox refuses ranges of more than 100000 items.
constexpr int64_t kMaxRange = 100000;

Value range(Renderer& r, CallArgs& args) {
    if (!args.keywords.empty()) type_error("range() takes no keyword arguments");
    const auto& p = args.positional;
    if (p.empty() || p.size() > 3) type_error("range expected at least 1 argument, got " + std::to_string(p.size()));
    int64_t start = 0, stop = 0, step = 1;
    for (const Value& v : p)
        if (!v.is_integral()) type_error("'" + v.type_name() + "' object cannot be interpreted as an integer");
    if (p.size() == 1) {
        stop = p[0].as_int();
    } else {
        start = p[0].as_int();
        stop = p[1].as_int();
        if (p.size() == 3) step = p[2].as_int();
    }
    if (step == 0) throw RenderError("ValueError", "range() arg 3 must not be zero");
    int64_t count = 0;
    if (step > 0 && stop > start) count = (stop - start + step - 1) / step;
    if (step < 0 && stop < start) count = (start - stop - step - 1) / -step;
    if (count > kMaxRange)
        throw RenderError("OverflowError", "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    r.budget().check_items(uint64_t(count));
    List items;
    items.reserve(size_t(count));
    for (int64_t i = 0; i < count; ++i) items.push_back(Value::integer(start + i * step));
    return Value::list(std::move(items));
}

// dict(mapping or pairs, **kwargs) and namespace(...) take the same arguments.
Dict dict_from(const CallArgs& args, const char* function) {
    Dict d;
    if (args.positional.size() > 1) type_error(std::string(function) + " expected at most 1 argument, got " + std::to_string(args.positional.size()));
    if (args.positional.size() == 1) {
        const Value& src = args.positional[0];
        if (src.is_dict()) {
            d = src.as_dict();
        } else {
            for (const Value& pair : iterate(src)) {
                const List kv = iterate(pair);
                if (kv.size() != 2)
                    throw RenderError("ValueError", "dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
                d.set(kv[0], kv[1]);
            }
        }
    }
    for (const auto& [k, v] : args.keywords) d.set(k, v);
    return d;
}

Value strftime_now(Renderer&, CallArgs& args) {
    const BoundArgs a(args, "strftime_now", {"format"});
    if (!a.has(0) || !a[0].is_string()) type_error("strftime() argument 1 must be str");
    const std::string& fmt = a[0].as_string();
    if (fmt.empty()) return Value::string("");
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::string buf(256, '\0');
    for (int attempt = 0; attempt < 8; ++attempt) {
        const size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &local);
        if (n > 0) return Value::string(buf.substr(0, n));
        if (buf.size() > 65536) break;
        buf.resize(buf.size() * 4);
    }
    return Value::string("");
}

// joiner(sep): "" the first call, then sep.
class Joiner : public Object {
public:
    explicit Joiner(std::string sep) : sep_(std::move(sep)) {}
    std::string type_name() const override { return "Joiner"; }
    std::string repr() const override { return "<jinja2.utils.Joiner object>"; }
    bool callable() const override { return true; }
    Value call(Renderer&, CallArgs&) const override {
        if (!*used_) {
            *used_ = true;
            return Value::string("");
        }
        return Value::string(sep_);
    }

private:
    std::string sep_;
    std::shared_ptr<bool> used_ = std::make_shared<bool>(false);
};

}  // namespace

void add_globals(Scope& scope) {
    scope.set("range", make_function("range", range));
    scope.set("dict", make_function("dict", [](Renderer&, CallArgs& args) { return Value::dict(dict_from(args, "dict")); }));
    scope.set("namespace", make_function("namespace", [](Renderer& r, CallArgs& args) {
                  return r.make_namespace(dict_from(args, "namespace"));
              }));
    scope.set("joiner", make_function("joiner", [](Renderer&, CallArgs& args) {
                  const BoundArgs a(args, "joiner", {"sep"});
                  return Value::object(std::make_shared<Joiner>(a.has(0) ? to_str(a[0]) : ", "));
              }));
    scope.set("raise_exception", make_function("raise_exception", [](Renderer&, CallArgs& args) -> Value {
                  const BoundArgs a(args, "raise_exception", {"message"});
                  throw TemplateRaised(a.has(0) ? to_str(a[0]) : "");
              }));
    scope.set("strftime_now", make_function("strftime_now", strftime_now));
}

}  // namespace hetero::jinja
