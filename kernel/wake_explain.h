// Collects the decision path of one wakeup for `wakesim explain`.
#pragma once
#include <string>
#include <vector>

namespace wakesim {

class WakeExplain {
public:
    void line(std::string s) { lines_.push_back(std::move(s)); }
    const std::vector<std::string>& lines() const { return lines_; }
    bool captured() const { return !lines_.empty(); }

private:
    std::vector<std::string> lines_;
};

}  // namespace wakesim
