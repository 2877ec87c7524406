// Fixed-capacity CPU bitset: the hot path's currency (idle masks, spans, affinity).
#pragma once
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wakesim {

inline constexpr int kMaxCpus = 1024;

// Bits set in a word. Debian's x86-64 baseline has no POPCNT, so std::popcount is a call into
// libgcc there (the balancer's group scans make many); the shifts and masks inline.
inline int popcount64(uint64_t w) {
#if defined(__POPCNT__) || !defined(__x86_64__)
    return std::popcount(w);
#else
    w -= (w >> 1) & 0x5555555555555555u;
    w = (w & 0x3333333333333333u) + ((w >> 2) & 0x3333333333333333u);
    w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return static_cast<int>((w * 0x0101010101010101u) >> 56);
#endif
}

class CpuSet {
public:
    static constexpr int kWords = kMaxCpus / 64;

    constexpr CpuSet() = default;

    static CpuSet range(int first, int last_inclusive) {
        CpuSet s;
        for (int c = first; c <= last_inclusive; ++c) s.set(c);
        return s;
    }
    static CpuSet single(int cpu) {
        CpuSet s;
        s.set(cpu);
        return s;
    }

    void set(int cpu) { w_[cpu >> 6] |= (uint64_t{1} << (cpu & 63)); }
    void clear(int cpu) { w_[cpu >> 6] &= ~(uint64_t{1} << (cpu & 63)); }
    void assign(int cpu, bool v) { v ? set(cpu) : clear(cpu); }
    bool test(int cpu) const { return (w_[cpu >> 6] >> (cpu & 63)) & 1u; }

    bool empty() const {
        for (auto w : w_)
            if (w) return false;
        return true;
    }
    int count() const {
        int n = 0;
        for (auto w : w_)
            if (w) n += popcount64(w);
        return n;
    }
    // Lowest set CPU, or -1.
    int first() const { return next(0); }
    // Lowest set CPU >= from, or -1.
    int next(int from) const {
        if (from >= kMaxCpus) return -1;
        int wi = from >> 6;
        uint64_t w = w_[wi] & (~uint64_t{0} << (from & 63));
        while (true) {
            if (w) return (wi << 6) + std::countr_zero(w);
            if (++wi >= kWords) return -1;
            w = w_[wi];
        }
    }
    // First set CPU at or after `from`, wrapping around; -1 when empty.
    int next_wrap(int from) const {
        int c = next(from);
        return c >= 0 ? c : first();
    }
    // Number of set CPUs in [lo, hi).
    int count_range(int lo, int hi) const {
        if (hi > kMaxCpus) hi = kMaxCpus;
        if (lo < 0) lo = 0;
        int n = 0;
        for (int wi = lo >> 6; wi <= (hi - 1) >> 6 && lo < hi; ++wi) {
            uint64_t w = w_[wi];
            int base = wi << 6;
            if (lo > base) w &= ~uint64_t{0} << (lo - base);
            if (hi < base + 64) w &= (uint64_t{1} << (hi - base)) - 1;
            n += popcount64(w);
        }
        return n;
    }

    CpuSet operator&(const CpuSet& o) const {
        CpuSet r;
        for (int i = 0; i < kWords; ++i) r.w_[i] = w_[i] & o.w_[i];
        return r;
    }
    CpuSet operator|(const CpuSet& o) const {
        CpuSet r;
        for (int i = 0; i < kWords; ++i) r.w_[i] = w_[i] | o.w_[i];
        return r;
    }
    CpuSet operator-(const CpuSet& o) const {
        CpuSet r;
        for (int i = 0; i < kWords; ++i) r.w_[i] = w_[i] & ~o.w_[i];
        return r;
    }
    CpuSet& operator&=(const CpuSet& o) { return *this = *this & o; }
    CpuSet& operator|=(const CpuSet& o) { return *this = *this | o; }
    CpuSet& operator-=(const CpuSet& o) { return *this = *this - o; }
    bool operator==(const CpuSet&) const = default;
    bool intersects(const CpuSet& o) const {
        for (int i = 0; i < kWords; ++i)
            if (w_[i] & o.w_[i]) return true;
        return false;
    }
    bool contains(const CpuSet& o) const { return (o - *this).empty(); }

    template <class F>
    void for_each(F&& f) const {
        for (int c = first(); c >= 0; c = next(c + 1)) f(c);
    }

    // Linux cpulist syntax, e.g. "0-3,8,10-11".
    std::string to_list() const {
        std::string s;
        for (int c = first(); c >= 0;) {
            int e = c;
            while (e + 1 < kMaxCpus && test(e + 1)) ++e;
            if (!s.empty()) s += ',';
            s += std::to_string(c);
            if (e > c) s += '-' + std::to_string(e);
            c = next(e + 1);
        }
        return s;
    }

private:
    std::array<uint64_t, kWords> w_{};
};

// Linux cpulist "0-3,8" -> CPU ids (ascending, deduplicated). Throws std::invalid_argument.
std::vector<int> parse_cpu_list(std::string_view text);

}  // namespace wakesim
