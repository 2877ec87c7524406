// Replays files through the fuzzing target without libFuzzer (any compiler): the test suite runs
// every seed and every kept crash input (tests/fuzz_regressions/) through it on each build.
// Usage: wakesim_fuzz_replay FILE|DIR...   Exit 0 when every input was answered; a finding aborts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
    LLVMFuzzerInitialize(&argc, &argv);
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path p = argv[i];
        if (fs::is_directory(p)) {
            for (const auto& e : fs::recursive_directory_iterator(p))
                if (e.is_regular_file() && e.path().extension() != ".txt" && e.path().extension() != ".md")
                    files.push_back(e.path());
        } else {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        std::string data;  // read with stdio: GCC 12 warns wrongly (-Wnull-dereference) on istreambuf_iterator here
        if (std::FILE* fp = std::fopen(f.c_str(), "rb")) {
            char buf[65536];
            for (size_t n; (n = std::fread(buf, 1, sizeof buf, fp)) > 0;) data.append(buf, n);
            std::fclose(fp);
        }
        std::fprintf(stderr, "replay %s\n", f.c_str());
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    }
    std::printf("%zu inputs replayed, no finding\n", files.size());
    return files.empty() ? 1 : 0;
}
