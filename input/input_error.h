// A user's mistake in a scenario, topology or command line: reported as one line, exit code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace wakesim {

class InputError : public std::runtime_error {
public:
    // file: path as the user gave it; pointer: RFC 6901 JSON pointer ("" = whole document);
    // expected: what would have been accepted.
    InputError(std::string file, std::string pointer, std::string expected)
        : std::runtime_error(format(file, pointer, expected)),
          file_(std::move(file)), pointer_(std::move(pointer)), expected_(std::move(expected)) {}

    const std::string& file() const { return file_; }
    const std::string& pointer() const { return pointer_; }
    const std::string& expected() const { return expected_; }

private:
    static std::string format(const std::string& f, const std::string& p, const std::string& e) {
        return one_line(f) + ": " + (p.empty() ? std::string("/") : p) + ": " + e;
    }
    // A file name as the user gave it may hold control characters: keep the message on one line,
    // and cut a name far longer than any real path's readable part.
    static std::string one_line(const std::string& s) {
        constexpr size_t kMaxShown = 256;
        std::string out;
        for (const char ch : s.substr(0, kMaxShown)) {
            const auto c = static_cast<unsigned char>(ch);
            if (c >= 0x20 && c != 0x7F) {
                out += ch;
                continue;
            }
            static constexpr char kHex[] = "0123456789ABCDEF";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        }
        if (s.size() > kMaxShown) out += "...";
        return out;
    }
    std::string file_, pointer_, expected_;
};

}  // namespace wakesim
