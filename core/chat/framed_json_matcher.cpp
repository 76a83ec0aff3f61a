#include <hetero/chat/framed_json_matcher.hpp>

namespace hetero {

FramedJsonMatcher::FramedJsonMatcher(std::shared_ptr<const JsonSchema> schema, JsonFraming framing)
    : schema_(schema), framing_(std::make_shared<const JsonFraming>(std::move(framing))), value_(std::move(schema)) {
    if (framing_->max_values == 0) throw Error("a framed JSON text needs room for at least one value");
    settle();
}

const std::string& FramedJsonMatcher::literal() const {
    return part_ == Part::prefix ? framing_->prefix : part_ == Part::suffix ? framing_->suffix : framing_->separator;
}

void FramedJsonMatcher::settle() {
    for (;;) {
        if (part_ == Part::prefix && matched_ == framing_->prefix.size()) {
            part_ = Part::value;
            value_ = JsonMatcher(schema_);
        } else if (part_ == Part::value && !value_.can_continue()) {
            end_value();
        } else if (part_ == Part::suffix && matched_ == framing_->suffix.size()) {
            part_ = values_ < framing_->max_values ? Part::between : Part::done;
            matched_ = 0;
            return;  // "between" with nothing matched is a place to stop: never stepped over
        } else if (part_ == Part::between && matched_ == framing_->separator.size() && matched_ > 0) {
            part_ = Part::prefix;
            matched_ = 0;
        } else {
            return;
        }
    }
}

void FramedJsonMatcher::end_value() {
    ++values_;
    part_ = Part::suffix;
    matched_ = 0;
}

bool FramedJsonMatcher::feed(char c) {
    switch (part_) {
        case Part::done:
            return false;
        case Part::value: {
            if (value_.feed(c)) {
                settle();
                return true;
            }
            // A whole value that could still grow (a number) ends where the suffix begins.
            if (!value_.complete()) return false;
            FramedJsonMatcher trial = *this;
            trial.end_value();
            trial.settle();
            if (trial.part_ == Part::value || !trial.feed(c)) return false;
            *this = std::move(trial);
            return true;
        }
        case Part::between:
            if (framing_->separator.empty()) {  // the next prefix (or value) starts at once
                FramedJsonMatcher trial = *this;
                trial.part_ = Part::prefix;
                trial.settle();
                if (!trial.feed(c)) return false;
                *this = std::move(trial);
                return true;
            }
            [[fallthrough]];
        case Part::prefix:
        case Part::suffix: {
            const std::string& text = literal();
            if (matched_ >= text.size() || text[matched_] != c) return false;
            ++matched_;
            settle();
            return true;
        }
    }
    return false;
}

bool FramedJsonMatcher::feed(std::string_view bytes) { return feed_all_or_nothing(*this, bytes); }

bool FramedJsonMatcher::complete() const {
    if (part_ == Part::done) return true;
    if (part_ == Part::between) return matched_ == 0;
    return part_ == Part::value && value_.complete() && framing_->suffix.empty() && values_ + 1 <= framing_->max_values;
}

bool FramedJsonMatcher::can_continue() const { return part_ != Part::done; }

bool FramedJsonMatcher::in_free_string() const { return part_ == Part::value && value_.in_free_string(); }

std::string FramedJsonMatcher::state_key() const {
    std::string key;
    const auto put = [&key](uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(uint64_t(part_));
    put(matched_);
    put(values_);
    if (part_ == Part::value) key += value_.state_key();
    return key;
}

}  // namespace hetero
