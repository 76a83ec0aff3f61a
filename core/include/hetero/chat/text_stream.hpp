// Passes generated text on as it grows, holding back what could still turn
// into a stop string and a UTF-8 character whose bytes have not all arrived.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hetero {

class TextStream {
public:
    // `sink` receives each piece of text that is final; it returns false to
    // cancel (a client went away). Empty stop strings are ignored.
    TextStream(std::vector<std::string> stops, std::function<bool(std::string_view)> sink);

    // Adds text; returns true once a stop string appeared (the text before it
    // has been passed on, the rest is dropped) or the sink cancelled.
    bool push(std::string_view piece);
    // Passes on whatever is held back (at the end of generation).
    void finish();

    bool stopped() const { return stopped_; }      // a stop string was found
    bool cancelled() const { return cancelled_; }  // the sink returned false
    const std::string& text() const { return text_; }  // all text passed on

private:
    void emit(std::string_view s);
    std::vector<std::string> stops_;
    std::function<bool(std::string_view)> sink_;
    std::string pending_, text_;
    bool stopped_ = false, cancelled_ = false;
};

// Bytes at the end of `s` that start a UTF-8 sequence not yet complete (0..3).
size_t incomplete_utf8_tail(std::string_view s);

}  // namespace hetero
