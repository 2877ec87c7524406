// seesaw: the 2023 RFC "fuse uring / wake_up on the same core" (Hillf Danton; tried by Bernd
// Schubert). Requester and request-processing thread carry marks; a TTWU wakeup of a marked wakee
// by a marked waker returns the waker's CPU, checked right after record_wakee, before the
// WF_CURRENT_CPU check. Variants from the thread: one shared bit, requester/processor bits, a
// pair id, and a time window after the requester's mark. Wins like WF_CURRENT_CPU for the marked
// pair; unmarked tasks follow the normal path.
#include "policies/registry.h"
#include "kernel/sched.h"

namespace wakesim {

namespace {

enum class Variant { one_bit, two_bits, pair_id, time_window };

class SeesawRule final : public PlacementRule {
public:
    SeesawRule(Variant v, Time window) : v_(v), window_(window) {}
    std::string name() const override { return "seesaw"; }
    int early(const SelectCtx& c) const override {
        if (!c.waker || !c.p.allowed.test(c.this_cpu)) return -1;
        bool hit = false;
        switch (v_) {
            case Variant::one_bit:
                hit = (c.p.seesaw_bits & 1) && (c.waker->seesaw_bits & 1);
                break;
            case Variant::two_bits:
                hit = (c.p.seesaw_bits & 2) && (c.waker->seesaw_bits & 4);
                break;
            case Variant::pair_id:
                hit = c.p.pair_id != 0 && c.p.pair_id == c.waker->pair_id;
                break;
            case Variant::time_window:
                hit = (c.p.seesaw_bits & 2) && (c.waker->seesaw_bits & 4) && c.p.seesaw_mark_time >= 0 &&
                      c.sched.now() - c.p.seesaw_mark_time <= window_;
                break;
        }
        return hit ? c.this_cpu : -1;
    }

private:
    Variant v_;
    Time window_;
};

}  // namespace

void apply_seesaw(Policy& p, const PolicyArgs& a) {
    const std::string& v = a.at("variant");
    Variant var = v == "one_bit" ? Variant::one_bit
                  : v == "two_bits" ? Variant::two_bits
                  : v == "pair_id" ? Variant::pair_id
                                   : Variant::time_window;
    Time window = 0;
    if (var == Variant::time_window) window = std::stoll(a.at("window_ns"));
    if (var == Variant::one_bit) {
        p.seesaw_requester_bits |= 1;
        p.seesaw_server_bits |= 1;
    } else if (var != Variant::pair_id) {
        p.seesaw_requester_bits |= 2;  // marked in request_wait_answer
        p.seesaw_server_bits |= 4;     // marked when the ring thread fetches
    }
    p.rules.push_back(std::make_shared<SeesawRule>(var, window));
}

}  // namespace wakesim
