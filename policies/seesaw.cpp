// seesaw: the 2023 RFC "fuse uring / wake_up on the same core" (Hillf Danton; tried by Bernd
// Schubert). Requester and request-processing thread carry marks; a TTWU wakeup of a marked wakee
// by a marked waker returns the waker's CPU, checked right after record_wakee, before the
// WF_CURRENT_CPU check. Variants from the thread: one shared bit, requester/processor bits, a
// pair id, and two time rules. `rfc_jiffies` is the RFC's code: the requester is stamped in
// jiffies when its wait returns, and the rule fires only once `jiffies` (10) have passed since,
// so a requester that waits often (every FUSE request) is never pulled. `recent_block` is the
// reading wakesim had first, kept because it is the useful one: the rule fires when the requester
// blocked at most `window` ago. Wins like WF_CURRENT_CPU for the marked pair; unmarked tasks
// follow the normal path.
#include "kernel/sched.h"
#include "policies/registry.h"

namespace wakesim {

namespace {

enum class Variant { one_bit, two_bits, pair_id, recent_block, rfc_jiffies };

class Seesaw final : public WakePolicy {
public:
    Seesaw(Variant v, Time window, int64_t jiffies) : v_(v), window_(window), jiffies_(jiffies) {}
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
        if (t.role != TaskRole::requester) return;
        marks_[t].waiting_since = now;
        marks_[t].waiting = true;
    }
    void on_run(Task& t, Time now) override {
        Mark& m = marks_[t];
        if (!m.waiting) return;
        m.waiting = false;
        m.wait_returned = now;
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
            case Variant::recent_block:
                hit = wakee.requester && waker.processor && wakee.waiting_since >= 0 &&
                      c.sched.now() - wakee.waiting_since <= window_;
                break;
            case Variant::rfc_jiffies: {
                // time_after(jiffies, p->stamp + 10), jiffies counted at the profile's CONFIG_HZ.
                const int64_t hz = c.sched.profile().tick_hz;
                hit = wakee.requester && waker.processor &&
                      c.sched.now() * hz / 1000000000 > wakee.wait_returned * hz / 1000000000 + jiffies_;
                break;
            }
        }
        return hit ? c.this_cpu : -1;
    }

private:
    struct Mark {
        bool shared = false;     // one_bit: the single shared mark
        bool requester = false;  // two_bits and the time rules: p->seesaw_req
        bool processor = false;  // two_bits and the time rules: current->seesaw_proc
        Time waiting_since = -1; // recent_block: when the requester last started waiting
        bool waiting = false;    // rfc_jiffies: blocked, not yet run again
        Time wait_returned = 0;  // rfc_jiffies: the stamp taken when its wait last returned (0: task_struct zeroed)
    };
    Variant v_;
    Time window_;
    int64_t jiffies_;
    PerTask<Mark> marks_;
};

}  // namespace

const PolicyKind& seesaw_policy() {
    static const PolicyKind k{
        "seesaw", "marked requester/processor pairs wake on the waker's CPU",
        "RFC 'fuse uring / wake_up on the same core' (Danton, Schubert, 2023)",
        {{"variant", ParamType::choice, "two_bits", 0, 0, {"one_bit", "two_bits", "pair_id", "recent_block", "rfc_jiffies"},
          "how the pair is recognised: rfc_jiffies is the RFC's time rule, recent_block wakesim's reading of it"},
         {"window", ParamType::duration, "40ms", 1, 3600e9, {},
          "recent_block: the rule applies when the requester blocked at most this long ago"},
         {"jiffies", ParamType::integer, "10", 1, 1000000, {},
          "rfc_jiffies: the rule applies only once this many jiffies (ticks at the profile's tick_hz) have passed since "
          "the requester's wait last returned (the RFC: 10)"}},
        false,
        [](const ParamValues& v) -> std::unique_ptr<WakePolicy> {
            const std::string& s = v.choice("variant");
            const Variant var = s == "one_bit"        ? Variant::one_bit
                                : s == "two_bits"     ? Variant::two_bits
                                : s == "pair_id"      ? Variant::pair_id
                                : s == "recent_block" ? Variant::recent_block
                                                      : Variant::rfc_jiffies;
            return std::make_unique<Seesaw>(var, v.duration_ns("window"), v.integer("jiffies"));
        }};
    return k;
}

}  // namespace wakesim
