// seesaw: the 2023 RFC "fuse uring / wake_up on the same core" (Hillf Danton; tried by Bernd
// Schubert). Requester and request-processing thread carry marks; a TTWU wakeup of a marked wakee
// by a marked waker returns the waker's CPU, checked right after record_wakee, before the
// WF_CURRENT_CPU check. Variants from the thread: one shared bit, requester/processor bits, a
// pair id, and a time window after the requester's mark. Wins like WF_CURRENT_CPU for the marked
// pair; unmarked tasks follow the normal path.
#include "kernel/sched.h"
#include "policies/registry.h"

namespace wakesim {

namespace {

enum class Variant { one_bit, two_bits, pair_id, time_window };

class Seesaw final : public WakePolicy {
public:
    Seesaw(Variant v, Time window) : v_(v), window_(window) {}
    std::string name() const override { return "seesaw"; }

    void on_task_created(Task& t) override {
        marks_.created(t);
        Mark& m = marks_[t];
        if (v_ == Variant::one_bit) {
            m.shared = t.role == TaskRole::requester || t.role == TaskRole::server;
        } else if (v_ != Variant::pair_id) {
            m.requester = t.role == TaskRole::requester;  // marked in request_wait_answer
            m.processor = t.role == TaskRole::server;     // marked when the ring thread fetches
        }
    }
    void on_block(Task& t, Time now) override {
        if (t.role == TaskRole::requester) marks_[t].waiting_since = now;
    }
    int early(const SelectCtx& c) override {
        if (!c.waker || !c.p.allowed.test(c.this_cpu)) return -1;
        const Mark& wakee = marks_[c.p];
        const Mark& waker = marks_[*c.waker];
        bool hit = false;
        switch (v_) {
            case Variant::one_bit:
                hit = wakee.shared && waker.shared;
                break;
            case Variant::two_bits:
                hit = wakee.requester && waker.processor;
                break;
            case Variant::pair_id:
                hit = c.p.pair_id != 0 && c.p.pair_id == c.waker->pair_id;
                break;
            case Variant::time_window:
                hit = wakee.requester && waker.processor && wakee.waiting_since >= 0 &&
                      c.sched.now() - wakee.waiting_since <= window_;
                break;
        }
        return hit ? c.this_cpu : -1;
    }

private:
    struct Mark {
        bool shared = false;     // one_bit: the single shared mark
        bool requester = false;  // two_bits / time_window: p->seesaw_req
        bool processor = false;  // two_bits / time_window: current->seesaw_proc
        Time waiting_since = -1; // time_window: when the requester last started waiting
    };
    Variant v_;
    Time window_;
    PerTask<Mark> marks_;
};

}  // namespace

const PolicyKind& seesaw_policy() {
    static const PolicyKind k{
        "seesaw", "marked requester/processor pairs wake on the waker's CPU",
        "RFC 'fuse uring / wake_up on the same core' (Danton, Schubert, 2023)",
        {{"variant", ParamType::choice, "two_bits", 0, 0, {"one_bit", "two_bits", "pair_id", "time_window"},
          "how the pair is recognised"},
         {"window", ParamType::duration, "40ms", 1, 3600e9, {},
          "time_window variant: how long after the requester's mark the rule applies (RFC: 10 jiffies)"}},
        false,
        [](const ParamValues& v) -> std::unique_ptr<WakePolicy> {
            const std::string& s = v.choice("variant");
            const Variant var = s == "one_bit" ? Variant::one_bit
                                : s == "two_bits" ? Variant::two_bits
                                : s == "pair_id"  ? Variant::pair_id
                                                  : Variant::time_window;
            return std::make_unique<Seesaw>(var, v.duration_ns("window"));
        }};
    return k;
}

}  // namespace wakesim
