// Python-style binding of call arguments to the parameters of a built-in
// filter, test, method or global: positional first, then by keyword, with
// TypeError for extra, unknown or repeated arguments.
#pragma once

#include "errors.hpp"
#include "value.hpp"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace hetero::jinja {

class BoundArgs {
public:
    BoundArgs(const CallArgs& args, const std::string& function, std::initializer_list<const char*> params) {
        if (args.positional.size() > params.size())
            type_error(function + "() takes at most " + std::to_string(params.size()) + " argument(s) (" +
                       std::to_string(args.positional.size()) + " given)");
        values_.resize(params.size());
        for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = args.positional[i];
        for (const auto& [key, value] : args.keywords) {
            size_t i = 0;
            for (const char* p : params) {
                if (key == p) break;
                ++i;
            }
            if (i == params.size()) type_error(function + "() got an unexpected keyword argument '" + key + "'");
            if (values_[i]) type_error(function + "() got multiple values for argument '" + key + "'");
            values_[i] = value;
        }
    }
    bool has(size_t i) const { return values_[i].has_value(); }
    const Value& operator[](size_t i) const { return *values_[i]; }
    Value get_or(size_t i, Value fallback) const { return values_[i] ? *values_[i] : std::move(fallback); }

private:
    std::vector<std::optional<Value>> values_;
};

}  // namespace hetero::jinja
