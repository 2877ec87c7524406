// A protobuf wire-format encoder: base-128 varints (wire type 0) and length-delimited fields
// (wire type 2), as the encoding guide of protobuf.dev describes them ("Encoding", protobuf.dev/
// programming-guides/encoding). Enough for the Perfetto trace writer; clear() keeps the
// capacity, so a buffer reused per event allocates only while it grows.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace wakesim {

class ProtoBuffer {
public:
    void clear() { used_ = 0; }
    std::string_view bytes() const { return {buf_.data(), used_}; }
    size_t size() const { return used_; }

    // uint32, uint64, bool and enum fields.
    void uint(uint32_t field, uint64_t v) {
        reserve(20);
        tag(field, 0);
        varint(v);
    }
    // int32 and int64 fields: a negative value is its 64-bit two's complement (10 bytes), not zigzag.
    void sint(uint32_t field, int64_t v) { uint(field, static_cast<uint64_t>(v)); }
    void string(uint32_t field, std::string_view s) {
        reserve(20 + s.size());
        tag(field, 2);
        varint(s.size());
        raw(s);
    }
    // An embedded message (or a Trace's packet): its bytes, length-prefixed.
    void message(uint32_t field, const ProtoBuffer& m) { string(field, m.bytes()); }
    // Bytes that already are encoded fields of this message (repeated fields gathered elsewhere).
    void append_encoded(std::string_view fields) {
        reserve(fields.size());
        raw(fields);
    }

private:
    // Room for `n` more bytes; the writes below then need no check of their own.
    void reserve(size_t n) {
        if (used_ + n > buf_.size()) buf_.resize(std::max(2 * buf_.size(), used_ + n));
    }
    void raw(std::string_view s) {
        if (!s.empty()) std::memcpy(buf_.data() + used_, s.data(), s.size());
        used_ += s.size();
    }
    void tag(uint32_t field, uint32_t wire_type) { varint(uint64_t{field} << 3 | wire_type); }
    void varint(uint64_t v) {
        char* p = buf_.data() + used_;
        while (v >= 0x80) {
            *p++ = static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        *p++ = static_cast<char>(v);
        used_ = static_cast<size_t>(p - buf_.data());
    }
    std::vector<char> buf_;
    size_t used_ = 0;
};

}  // namespace wakesim
