// Seeded random streams, one per concern, so that changing one part of a model does not shift
// another part's random numbers. xoshiro256** seeded through splitmix64.
#pragma once
#include <cmath>
#include <cstdint>
#include <string_view>

namespace wakesim {

class RngStream {
public:
    RngStream(uint64_t seed, std::string_view concern) {
        uint64_t x = seed ^ fnv1a(concern);
        for (auto& w : s_) w = splitmix(x);
    }
    uint64_t next() {
        const uint64_t r = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return r;
    }
    double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, n).
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    double exponential(double mean) { return -mean * std::log1p(-uniform01()); }

    static uint64_t fnv1a(std::string_view s) {
        uint64_t h = 1469598103934665603ull;
        for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
        return h;
    }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static uint64_t splitmix(uint64_t& x) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    uint64_t s_[4];
};

}  // namespace wakesim
