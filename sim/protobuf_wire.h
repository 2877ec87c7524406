// A protobuf wire-format encoder: base-128 varints (wire type 0) and length-delimited fields
// (wire type 2), as the encoding guide of protobuf.dev describes them ("Encoding", protobuf.dev/
// programming-guides/encoding). Enough for the Perfetto trace writer; clear() keeps the
// capacity, so a buffer reused per event allocates only while it grows.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wakesim {

class ProtoBuffer {
public:
    void clear() { buf_.clear(); }
    const std::string& bytes() const { return buf_; }
    size_t size() const { return buf_.size(); }

    // uint32, uint64, bool and enum fields.
    void uint(uint32_t field, uint64_t v) {
        tag(field, 0);
        varint(v);
    }
    // int32 and int64 fields: a negative value is its 64-bit two's complement (10 bytes), not zigzag.
    void sint(uint32_t field, int64_t v) { uint(field, static_cast<uint64_t>(v)); }
    void string(uint32_t field, std::string_view s) {
        tag(field, 2);
        varint(s.size());
        buf_.append(s);
    }
    // An embedded message (or a Trace's packet): its bytes, length-prefixed.
    void message(uint32_t field, const ProtoBuffer& m) { string(field, m.buf_); }
    // Bytes that already are encoded fields of this message (repeated fields gathered elsewhere).
    void append_encoded(std::string_view fields) { buf_.append(fields); }

private:
    void tag(uint32_t field, uint32_t wire_type) { varint(uint64_t{field} << 3 | wire_type); }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            buf_.push_back(static_cast<char>((v & 0x7f) | 0x80));
            v >>= 7;
        }
        buf_.push_back(static_cast<char>(v));
    }
    std::string buf_;
};

}  // namespace wakesim
