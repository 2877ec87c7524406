// Text from a user's file or command line, made safe for a one-line message: control characters
// and bytes that are not UTF-8 become \xNN, so that nothing raw reaches a terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace wakesim {

// The length of the well-formed UTF-8 sequence starting at s[i] (a byte of 0x80 or more), 0 when
// there is none: a stray continuation byte, a truncated sequence, an impossible lead byte.
inline size_t utf8_sequence(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
    return n;
}

// Appends s[i] to `out`, escaped as \xNN when it is a control character or not part of valid
// UTF-8; returns the bytes used.
inline size_t append_printable(std::string& out, std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c >= 0x80 ? utf8_sequence(s, i) : 1;
    if (c < 0x20 || c == 0x7F || n == 0) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
        return 1;
    }
    out.append(s.substr(i, n));
    return n;
}

// `s` escaped as above and cut at about max_len bytes (not inside a UTF-8 sequence or an
// escape), with "..." where it was cut.
inline std::string printable_line(std::string_view s, size_t max_len) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        if (out.size() >= max_len) {
            out += "...";
            break;
        }
        i += append_printable(out, s, i);
    }
    return out;
}

}  // namespace wakesim
