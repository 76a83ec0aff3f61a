#include "sentencepiece_model.hpp"

#include "../mapped_file.hpp"

#include <hetero/error.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace hetero::model_detail {

namespace {

constexpr size_t kMaxPieces = 1 << 24;

// A bounded reader of protobuf's wire format over one message's bytes.
class WireReader {
public:
    WireReader(const uint8_t* p, uint64_t n, const std::string& path, uint64_t base) : p_(p), n_(n), path_(path), base_(base) {}

    bool done() const { return at_ >= n_; }
    uint64_t offset() const { return base_ + at_; }

    uint64_t varint() {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at_ >= n_) fail("a varint runs past the end of its message");
            const uint8_t b = p_[at_++];
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
        fail("a varint is longer than 10 bytes");
    }

    // A length-delimited field's bytes.
    std::pair<const uint8_t*, uint64_t> bytes() {
        const uint64_t start = offset();
        const uint64_t len = varint();
        if (len > n_ - at_) fail(fmt::format("a field of {} bytes at offset {} runs past the end of its message", len, start));
        const uint8_t* q = p_ + at_;
        at_ += len;
        return {q, len};
    }

    uint32_t fixed32() {
        if (n_ - at_ < 4) fail("a 32-bit field runs past the end of its message");
        uint32_t v;
        std::memcpy(&v, p_ + at_, 4);
        at_ += 4;
        return v;
    }

    void skip(uint32_t wire_type) {
        switch (wire_type) {
            case 0: varint(); break;
            case 1:
                if (n_ - at_ < 8) fail("a 64-bit field runs past the end of its message");
                at_ += 8;
                break;
            case 2: bytes(); break;
            case 5: fixed32(); break;
            default: fail(fmt::format("wire type {} is not one a SentencePiece model uses", wire_type));
        }
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(fmt::format("{}: not a valid SentencePiece model: {} (offset {})", path_, what, offset()));
    }

private:
    const uint8_t* p_;
    uint64_t n_;
    const std::string& path_;
    uint64_t base_;
    uint64_t at_ = 0;
};

SentencePiece read_piece(const uint8_t* p, uint64_t n, const std::string& path, uint64_t base) {
    WireReader r(p, n, path, base);
    SentencePiece piece;
    bool has_text = false;
    while (!r.done()) {
        const uint64_t key = r.varint();
        const uint32_t field = uint32_t(key >> 3), wire = uint32_t(key & 7);
        if (field == 1 && wire == 2) {
            const auto [s, len] = r.bytes();
            piece.text.assign(reinterpret_cast<const char*>(s), size_t(len));
            has_text = true;
        } else if (field == 2 && wire == 5) {
            const uint32_t bits = r.fixed32();
            std::memcpy(&piece.score, &bits, 4);
            if (!std::isfinite(piece.score)) r.fail("a piece's score is not a finite number");
        } else if (field == 3 && wire == 0) {
            const uint64_t t = r.varint();
            if (t < 1 || t > 6) r.fail(fmt::format("piece type {} is not one of SentencePiece's (1..6)", t));
            piece.type = int32_t(t);
        } else {
            r.skip(wire);
        }
    }
    if (!has_text) r.fail("a piece without text");
    return piece;
}

}  // namespace

SentencePieceModel read_sentencepiece_model(const std::string& path) {
    const MappedFile file(path);
    WireReader r(file.data(), file.size(), path, 0);
    SentencePieceModel m;
    while (!r.done()) {
        const uint64_t key = r.varint();
        const uint32_t field = uint32_t(key >> 3), wire = uint32_t(key & 7);
        if (field == 1 && wire == 2) {  // repeated SentencePiece pieces
            const uint64_t at = r.offset();
            const auto [p, n] = r.bytes();
            if (m.pieces.size() >= kMaxPieces) r.fail(fmt::format("more than {} pieces", kMaxPieces));
            m.pieces.push_back(read_piece(p, n, path, at));
        } else if (field == 2 && wire == 2) {  // TrainerSpec: its model_type
            const uint64_t at = r.offset();
            const auto [p, n] = r.bytes();
            WireReader t(p, n, path, at);
            while (!t.done()) {
                const uint64_t k = t.varint();
                if ((k >> 3) == 3 && (k & 7) == 0) m.model_type = int32_t(t.varint());
                else t.skip(uint32_t(k & 7));
            }
        } else {
            r.skip(wire);
        }
    }
    if (m.pieces.empty()) throw Error(fmt::format("{}: not a SentencePiece model: it holds no pieces", path));
    return m;
}

}  // namespace hetero::model_detail
