#include <hetero/chat/text_stream.hpp>

#include <algorithm>

namespace hetero {

size_t incomplete_utf8_tail(std::string_view s) {
    // Look back over at most 3 continuation bytes for the lead byte.
    for (size_t back = 1; back <= std::min<size_t>(4, s.size()); ++back) {
        const auto c = static_cast<unsigned char>(s[s.size() - back]);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte
        const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > back ? back : 0;
    }
    return 0;  // only continuation bytes: invalid anyway, nothing to wait for
}

TextStream::TextStream(std::vector<std::string> stops, std::function<bool(std::string_view)> sink)
    : sink_(std::move(sink)) {
    for (auto& s : stops)
        if (!s.empty()) stops_.push_back(std::move(s));
}

void TextStream::emit(std::string_view s) {
    if (s.empty() || cancelled_) return;
    text_.append(s);
    if (sink_ && !sink_(s)) cancelled_ = true;
}

bool TextStream::push(std::string_view piece) {
    if (stopped_ || cancelled_) return true;
    pending_.append(piece);
    // The earliest stop string in the pending text ends the stream there. No
    // stop string can start in text already passed on: a text that could
    // still become one is held back below.
    size_t first = std::string::npos;
    for (const auto& stop : stops_) first = std::min(first, pending_.find(stop));
    if (first != std::string::npos) {
        emit(std::string_view(pending_).substr(0, first));
        pending_.clear();
        stopped_ = true;
        return true;
    }
    size_t hold = 0;
    for (const auto& stop : stops_)
        for (size_t n = std::min(stop.size() - 1, pending_.size()); n > hold; --n)
            if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
                hold = n;
                break;
            }
    hold = std::max(hold, incomplete_utf8_tail(pending_));
    emit(std::string_view(pending_).substr(0, pending_.size() - hold));
    pending_.erase(0, pending_.size() - hold);
    return cancelled_;
}

void TextStream::finish() {
    if (!stopped_) emit(pending_);
    pending_.clear();
}

}  // namespace hetero
