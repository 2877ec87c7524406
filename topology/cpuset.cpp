#include "topology/cpuset.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "input/json_input.h"

namespace wakesim {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
std::string quote(std::string_view s) { return quote_for_message(s); }
}  // namespace

// Grammar: item ("," item)*, item = id | id "-" id [":" stride]; surrounding whitespace (a sysfs
// file's newline) is ignored. A stride takes every stride-th CPU of the range from its first, as
// taskset(1) reads "0-7:2" (0,2,4,6). An empty list is rejected: a topology or affinity with no CPU is a mistake.
std::vector<int> parse_cpu_list(std::string_view text) {
    const std::string_view original = text;
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    auto junk = [&]() -> std::invalid_argument {
        return std::invalid_argument("expected a CPU list such as \"0-3,8\", got " +
                                     (original.empty() ? std::string("an empty string") : quote(original)));
    };
    if (text.empty()) throw junk();

    std::vector<bool> present(kMaxCpus, false);
    size_t i = 0;
    auto read_id = [&]() -> int {
        if (i < text.size() && text[i] == '-')
            throw std::invalid_argument("CPU ids must not be negative, got " + quote(original));
        const size_t begin = i;
        long long v = 0;
        while (i < text.size() && is_digit(text[i])) {
            if (v < kMaxCpus) v = v * 10 + (text[i] - '0');
            ++i;
        }
        if (i == begin) throw junk();
        if (v >= kMaxCpus) {
            std::string id(text.substr(begin, std::min<size_t>(i - begin, 20)));  // a readable length
            if (i - begin > 20) id += "...";
            throw std::invalid_argument("CPU id " + id + " is out of range [0, " +
                                        std::to_string(kMaxCpus - 1) + "] in " + quote(original));
        }
        return static_cast<int>(v);
    };
    while (true) {
        const int first = read_id();
        int last = first;
        int stride = 1;
        if (i < text.size() && text[i] == '-') {
            ++i;
            last = read_id();
            if (last < first)
                throw std::invalid_argument("reversed range " + std::to_string(first) + "-" + std::to_string(last) +
                                            " in CPU list " + quote(original));
            if (i < text.size() && text[i] == ':') {
                ++i;
                const size_t begin = i;
                long long v = 0;
                while (i < text.size() && is_digit(text[i])) {
                    if (v < kMaxCpus) v = v * 10 + (text[i] - '0');
                    ++i;
                }
                if (i == begin || v == 0 || v >= kMaxCpus)
                    throw std::invalid_argument("expected a stride in [1, " + std::to_string(kMaxCpus - 1) +
                                                "] after ':' (\"0-7:2\" is 0,2,4,6) in CPU list " + quote(original));
                stride = static_cast<int>(v);
            }
        }
        for (int c = first; c <= last; c += stride) present[static_cast<size_t>(c)] = true;
        if (i == text.size()) break;
        if (text[i] != ',') throw junk();
        ++i;
    }
    std::vector<int> out;
    for (int c = 0; c < kMaxCpus; ++c)
        if (present[static_cast<size_t>(c)]) out.push_back(c);
    return out;
}

}  // namespace wakesim
