// The byte-level recognizer of JSON texts a JsonSchema allows: one stack of
// frames per undecided anyOf alternative; a frame per open value.
#include <hetero/chat/byte_matcher.hpp>
#include <hetero/chat/json_schema_matcher.hpp>

#include <algorithm>

namespace hetero {

namespace {

constexpr uint32_t kMaxIndent = 20;  // spaces or tabs after a newline
constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxAlternatives = 64;
constexpr uint64_t kMaxNumberDigits = 16;   // per integer or fraction part
// Two: any number written stays within a double (1e999 would overflow, and JSON parsers refuse it or make it infinity).
constexpr uint64_t kMaxExponentDigits = 2;

bool is_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// Whitespace between tokens: nothing, one space, or a newline and up to
// kMaxIndent spaces or tabs (compact, spaced and indented JSON; never a run a
// model could pad with). `run`: 0 none yet, 1 after the space, 2 + n after
// the newline and n indentation bytes.
bool take_space(uint32_t& run, unsigned char c) {
    if (run == 0) {
        if (c == ' ') run = 1;
        else if (c == '\n') run = 2;
        else return false;
        return true;
    }
    if (run == 1 || (c != ' ' && c != '\t') || run >= 2 + kMaxIndent) return false;
    ++run;
    return true;
}
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_hex(unsigned char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Object states.
enum : uint8_t { kObjOpen, kObjExpectKey, kObjAfterKey, kObjInValue, kObjAfterValue };
// Array states.
enum : uint8_t { kArrOpen, kArrInValue, kArrAfterValue };
// String states: plain, after a backslash, then four hex digits of \u.
enum : uint8_t { kStrPlain, kStrEscape, kStrHex0 };
// Number states (JSON's grammar); the terminal ones end a number.
enum : uint8_t { kNumStart, kNumMinus, kNumZero, kNumInt, kNumDot, kNumFrac, kNumExp, kNumExpSign, kNumExpDigits };

}  // namespace

JsonMatcher::JsonMatcher(std::shared_ptr<const JsonSchema> schema) : schema_(std::move(schema)) {
    Stack s;
    Frame f;
    f.node = schema_->root();
    s.frames.push_back(f);
    alternatives_.push_back(std::move(s));
}

bool JsonMatcher::feed(char c) {
    std::vector<Stack> next;
    for (const Stack& s : alternatives_) feed_stack(s, static_cast<unsigned char>(c), next);
    if (next.empty()) return false;
    alternatives_ = std::move(next);
    return true;
}

bool JsonMatcher::feed(std::string_view bytes) { return feed_all_or_nothing(*this, bytes); }

bool JsonMatcher::number_terminal(const Frame& f) {
    return f.state == kNumZero || f.state == kNumInt || f.state == kNumFrac || f.state == kNumExpDigits;
}

bool JsonMatcher::literal_complete(const Frame& f) const {
    for (std::string_view l : literal_candidates(f))
        if (l == f.text) return true;
    return false;
}

bool JsonMatcher::complete() const {
    for (const Stack& s : alternatives_) {
        if (s.frames.empty()) return true;
        if (s.frames.size() == 1) {
            const Frame& f = s.frames.back();
            if (f.kind == Frame::kNumber && number_terminal(f)) return true;
            if (f.kind == Frame::kLiteral && literal_complete(f)) return true;
        }
    }
    return false;
}

bool JsonMatcher::can_continue() const {
    for (const Stack& s : alternatives_)
        if (!s.frames.empty()) return true;
    return false;
}

bool JsonMatcher::in_free_string() const {
    if (alternatives_.size() != 1 || alternatives_[0].frames.empty()) return false;
    const Frame& f = alternatives_[0].frames.back();
    if (f.kind != Frame::kString || f.is_key || f.state != kStrPlain || f.utf8_left != 0) return false;
    const JsonSchema::Node& n = schema_->node(f.node);
    return f.count >= n.min_length && n.max_length == std::numeric_limits<uint64_t>::max();
}

std::string JsonMatcher::state_key() const {
    std::string key;
    const auto put = [&key](uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    for (const Stack& s : alternatives_) {
        put(s.whitespace);
        for (const Frame& f : s.frames) {
            const JsonSchema::Node& n = schema_->node(f.node);
            uint64_t count = f.count;
            // A string past its minimum with no maximum, or an array likewise, behaves the same at any length.
            if (f.kind == Frame::kString && !f.is_key && count >= n.min_length && n.max_length == std::numeric_limits<uint64_t>::max()) count = 0;
            if (f.kind == Frame::kArray && count >= n.min_items && n.max_items == std::numeric_limits<uint64_t>::max()) count = 0;
            put(uint64_t(f.kind) | uint64_t(f.state) << 8 | uint64_t(f.is_key) << 16 | uint64_t(f.integer_only) << 17 | uint64_t(f.utf8_left) << 24 |
                uint64_t(f.utf8_lo) << 32 | uint64_t(f.utf8_hi) << 40);
            put(uint64_t(uint32_t(f.node)) | uint64_t(uint32_t(f.key_node)) << 32);
            put(count);
            put(f.seen);
            put(f.text.size());
            key += f.text;
        }
        key += '|';
    }
    return key;
}

std::vector<std::string_view> JsonMatcher::literal_candidates(const Frame& f) const {
    const JsonSchema::Node& n = schema_->node(f.node);
    if (!n.literals.empty()) return {n.literals.begin(), n.literals.end()};
    std::vector<std::string_view> out;
    if (n.types & JsonSchema::kBoolean) {
        out.emplace_back("true");
        out.emplace_back("false");
    }
    if (n.types & JsonSchema::kNull) out.emplace_back("null");
    return out;
}

// A value ended: the frame goes, and its parent moves on.
void JsonMatcher::finish_frame(Stack& stack) const {
    const Frame done = std::move(stack.frames.back());
    stack.frames.pop_back();
    if (stack.frames.empty()) return;
    Frame& parent = stack.frames.back();
    if (parent.kind == Frame::kObject) {
        if (done.is_key) {
            const JsonSchema::Node& n = schema_->node(parent.node);
            parent.key_node = n.additional;
            for (size_t i = 0; i < n.properties.size(); ++i)
                if (n.properties[i].name == done.text) {
                    parent.key_node = n.properties[i].node;
                    parent.seen |= uint64_t(1) << i;
                }
            parent.state = kObjAfterKey;
        } else {
            parent.state = kObjAfterValue;
        }
    } else if (parent.kind == Frame::kArray) {
        ++parent.count;
        parent.state = kArrAfterValue;
    }
}

void JsonMatcher::feed_stack(Stack stack, unsigned char c, std::vector<Stack>& out) const {
    const auto keep = [&out](Stack&& s) {
        if (out.size() < kMaxAlternatives && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
    };
    for (;;) {  // a number or literal that a byte ends hands the byte to its parent
        if (stack.frames.empty()) return;  // nothing after the top value
        Frame& f = stack.frames.back();
        bool ok = false;
        switch (f.kind) {
            case Frame::kValue:
                start_value(std::move(stack), c, out);
                return;
            case Frame::kObject:
                ok = feed_object(stack, c);
                break;
            case Frame::kArray:
                feed_array(std::move(stack), c, out);
                return;
            case Frame::kString:
                ok = feed_string(stack, c);
                break;
            case Frame::kNumber: {
                uint8_t next = 0xff;
                switch (f.state) {
                    case kNumStart: next = c == '-' ? kNumMinus : c == '0' ? kNumZero : is_digit(c) ? kNumInt : 0xff; break;
                    case kNumMinus: next = c == '0' ? kNumZero : is_digit(c) ? kNumInt : 0xff; break;
                    case kNumZero: next = c == '.' && !f.integer_only ? kNumDot : (c == 'e' || c == 'E') && !f.integer_only ? kNumExp : 0xff; break;
                    case kNumInt:
                        next = is_digit(c) ? kNumInt : c == '.' && !f.integer_only ? kNumDot : (c == 'e' || c == 'E') && !f.integer_only ? kNumExp : 0xff;
                        break;
                    case kNumDot: next = is_digit(c) ? kNumFrac : 0xff; break;
                    case kNumFrac: next = is_digit(c) ? kNumFrac : (c == 'e' || c == 'E') ? kNumExp : 0xff; break;
                    case kNumExp: next = (c == '+' || c == '-') ? kNumExpSign : is_digit(c) ? kNumExpDigits : 0xff; break;
                    case kNumExpSign:
                    case kNumExpDigits: next = is_digit(c) ? kNumExpDigits : 0xff; break;
                }
                // Digits per part are capped (a model must not grow a number forever).
                const bool same_part = next == f.state && (next == kNumInt || next == kNumFrac || next == kNumExpDigits);
                if (next != 0xff && same_part && ++f.count >= (next == kNumExpDigits ? kMaxExponentDigits : kMaxNumberDigits)) next = 0xff;
                if (next != 0xff && !same_part) f.count = 0;
                if (next != 0xff) {
                    f.state = next;
                    stack.whitespace = 0;
                    ok = true;
                    break;
                }
                if (!number_terminal(f)) return;
                finish_frame(stack);
                continue;
            }
            case Frame::kLiteral: {
                std::string longer = f.text + char(c);
                bool goes_on = false;
                for (std::string_view l : literal_candidates(f))
                    if (l.size() >= longer.size() && l.compare(0, longer.size(), longer) == 0) goes_on = true;
                if (goes_on) {
                    f.text = std::move(longer);
                    stack.whitespace = 0;
                    // A literal no longer one can extend is done now (a string or keyword);
                    // one that could go on ("1" of [1, 12]) ends when a byte does not fit.
                    bool extendable = false;
                    for (std::string_view l : literal_candidates(f))
                        if (l.size() > f.text.size() && l.compare(0, f.text.size(), f.text) == 0) extendable = true;
                    if (!extendable) finish_frame(stack);
                    ok = true;
                    break;
                }
                if (!literal_complete(f)) return;
                finish_frame(stack);
                continue;
            }
        }
        if (ok) keep(std::move(stack));
        return;
    }
}

void JsonMatcher::start_value(Stack stack, unsigned char c, std::vector<Stack>& out) const {
    Frame& f = stack.frames.back();
    const JsonSchema::Node& n = schema_->node(f.node);
    if (!n.any_of.empty()) {  // the value follows one of the alternatives: each is tried
        for (int alt : n.any_of) {
            Stack copy = stack;
            copy.frames.back().node = alt;
            feed_stack(std::move(copy), c, out);
        }
        return;
    }
    if (is_space(c)) {
        if (take_space(stack.whitespace, c)) out.push_back(std::move(stack));
        return;
    }
    const uint32_t t = n.types;
    Frame::Kind kind;
    if (!n.literals.empty() || ((c == 't' || c == 'f') && (t & JsonSchema::kBoolean)) || (c == 'n' && (t & JsonSchema::kNull))) kind = Frame::kLiteral;
    else if (c == '{' && (t & JsonSchema::kObject)) kind = Frame::kObject;
    else if (c == '[' && (t & JsonSchema::kArray)) kind = Frame::kArray;
    else if (c == '"' && (t & JsonSchema::kString)) kind = Frame::kString;
    else if ((c == '-' || is_digit(c)) && (t & (JsonSchema::kNumber | JsonSchema::kInteger))) kind = Frame::kNumber;
    else return;
    if (stack.frames.size() > kMaxDepth) return;
    f.kind = kind;
    f.state = 0;
    f.integer_only = !(t & JsonSchema::kNumber);
    stack.whitespace = 0;
    if (kind == Frame::kObject || kind == Frame::kArray || kind == Frame::kString) {  // the opening byte is taken
        if (std::find(out.begin(), out.end(), stack) == out.end()) out.push_back(std::move(stack));
        return;
    }
    feed_stack(std::move(stack), c, out);  // a number's or literal's first byte
}

bool JsonMatcher::key_allowed(const Frame& object, const std::string& key, bool whole) const {
    const JsonSchema::Node& n = schema_->node(object.node);
    for (size_t i = 0; i < n.properties.size(); ++i) {
        const std::string& name = n.properties[i].name;
        const bool fits = whole ? name == key : name.compare(0, key.size(), key) == 0 && name.size() >= key.size();
        if (fits) {
            if (whole) return !(object.seen >> i & 1);  // a property given twice is refused
            if (!(object.seen >> i & 1)) return true;
        }
    }
    return n.additional >= 0;
}

bool JsonMatcher::feed_object(Stack& stack, unsigned char c) const {
    Frame& f = stack.frames.back();
    const JsonSchema::Node& n = schema_->node(f.node);
    if (is_space(c) && f.state != kObjInValue) return take_space(stack.whitespace, c);
    stack.whitespace = 0;
    const auto required_seen = [&] {
        for (size_t i = 0; i < n.properties.size(); ++i)
            if (n.properties[i].required && !(f.seen >> i & 1)) return false;
        return true;
    };
    const auto key_possible = [&] {
        if (n.additional >= 0) return true;
        for (size_t i = 0; i < n.properties.size(); ++i)
            if (!(f.seen >> i & 1)) return true;
        return false;
    };
    switch (f.state) {
        case kObjOpen:
        case kObjAfterValue:
            if (c == '}' && required_seen()) {
                finish_frame(stack);
                return true;
            }
            if (f.state == kObjOpen && c == '"' && key_possible()) break;
            if (f.state == kObjAfterValue && c == ',' && key_possible()) {
                f.state = kObjExpectKey;
                return true;
            }
            return false;
        case kObjExpectKey:
            if (c == '"') break;
            return false;
        case kObjAfterKey:
            if (c != ':') return false;
            f.state = kObjInValue;
            {
                Frame value;
                value.node = f.key_node;
                stack.frames.push_back(std::move(value));
            }
            return true;
        default:
            return false;
    }
    // A key starts.
    if (stack.frames.size() > kMaxDepth) return false;
    Frame key;
    key.kind = Frame::kString;
    key.is_key = true;
    key.node = JsonSchema::kAny;
    stack.frames.push_back(std::move(key));
    return true;
}

void JsonMatcher::feed_array(Stack stack, unsigned char c, std::vector<Stack>& out) const {
    Frame& f = stack.frames.back();
    const JsonSchema::Node& n = schema_->node(f.node);
    if (is_space(c) && f.state != kArrInValue) {
        if (take_space(stack.whitespace, c)) out.push_back(std::move(stack));
        return;
    }
    if (c == ']' && (f.state == kArrOpen || f.state == kArrAfterValue) && f.count >= n.min_items) {
        stack.whitespace = 0;
        finish_frame(stack);
        out.push_back(std::move(stack));
        return;
    }
    Frame value;
    value.node = n.items;
    if (f.state == kArrAfterValue) {
        if (c != ',' || f.count >= n.max_items) return;
        stack.whitespace = 0;
        f.state = kArrInValue;
        stack.frames.push_back(std::move(value));
        out.push_back(std::move(stack));
        return;
    }
    if (f.state != kArrOpen || n.max_items == 0 || stack.frames.size() > kMaxDepth) return;
    // The first item starts with this byte.
    f.state = kArrInValue;
    stack.frames.push_back(std::move(value));
    feed_stack(std::move(stack), c, out);
}

bool JsonMatcher::feed_string(Stack& stack, unsigned char c) const {
    Frame& f = stack.frames.back();
    const JsonSchema::Node& n = schema_->node(f.node);
    const Frame* object = f.is_key ? &stack.frames[stack.frames.size() - 2] : nullptr;
    stack.whitespace = 0;
    if (f.state == kStrEscape) {
        if (c == 'u') f.state = kStrHex0;
        else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') f.state = kStrPlain;
        else return false;
        return true;
    }
    if (f.state >= kStrHex0) {
        if (!is_hex(c)) return false;
        f.state = f.state == kStrHex0 + 3 ? kStrPlain : f.state + 1;
        return true;
    }
    if (f.utf8_left > 0) {  // inside a multi-byte character
        if (c < f.utf8_lo || c > f.utf8_hi) return false;
        --f.utf8_left;
        f.utf8_lo = 0x80;
        f.utf8_hi = 0xBF;
        if (object) {
            f.text += char(c);
            return key_allowed(*object, f.text, false);
        }
        return true;
    }
    if (c == '"') {
        if (object) {
            if (!key_allowed(*object, f.text, true)) return false;
        } else if (f.count < n.min_length) {
            return false;
        }
        finish_frame(stack);
        return true;
    }
    if (c < 0x20) return false;
    if (c >= 0x80) {  // a lead byte (RFC 3629's table: no overlongs, surrogates or code points past U+10FFFF)
        if (c >= 0xC2 && c <= 0xDF) f.utf8_left = 1;
        else if (c >= 0xE0 && c <= 0xEF) f.utf8_left = 2;
        else if (c >= 0xF0 && c <= 0xF4) f.utf8_left = 3;
        else return false;
        f.utf8_lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        f.utf8_hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    }
    if (object) {
        if (c == '\\') return false;  // keys are matched as written; names never need escapes here
        f.text += char(c);
        return key_allowed(*object, f.text, false);
    }
    // ASCII or a lead byte: a new code point (continuation bytes were taken above).
    if (f.count >= n.max_length) return false;
    ++f.count;
    if (c == '\\') f.state = kStrEscape;
    return true;
}

}  // namespace hetero
