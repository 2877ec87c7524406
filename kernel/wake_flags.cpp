#include "kernel/wake_flags.h"

namespace wakesim {

std::string wake_flags_to_string(uint32_t f) {
    static const struct {
        uint32_t bit;
        const char* name;
    } names[] = {{WF_EXEC, "WF_EXEC"}, {WF_FORK, "WF_FORK"}, {WF_TTWU, "WF_TTWU"},
                 {WF_SYNC, "WF_SYNC"}, {WF_MIGRATED, "WF_MIGRATED"}, {WF_CURRENT_CPU, "WF_CURRENT_CPU"},
                 {WF_RQ_SELECTED, "WF_RQ_SELECTED"}};
    std::string s;
    for (const auto& n : names)
        if (f & n.bit) {
            if (!s.empty()) s += '|';
            s += n.name;
        }
    return s.empty() ? "0" : s;
}

}  // namespace wakesim
