#include "hw/hardware.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace wakesim {

namespace {
constexpr int64_t kIowaitBoostMin = 1024 / 8;  // IOWAIT_BOOST_MIN: SCHED_CAPACITY_SCALE / 8
}  // namespace

Hardware::Hardware(Engine& engine, const Topology& topo, const MachineProfile& prof)
    : engine_(engine), target_(engine.add_target(this)), topo_(topo), prof_(prof) {
    const int n = topo_.nr_cpus();
    gov_name_ = prof_.governor;
    if (gov_name_ == "performance") gov_ = Gov::performance;
    else if (gov_name_ == "powersave") gov_ = Gov::powersave;
    else if (gov_name_ == "schedutil") gov_ = Gov::schedutil;
    else if (gov_name_ == "ondemand") gov_ = Gov::ondemand;
    else if (gov_name_ == "conservative") gov_ = Gov::conservative;
    else throw std::invalid_argument("unknown governor " + gov_name_);
    for (size_t d = 0; d < refill_by_dist_.size(); ++d) refill_by_dist_[d] = transfer_by_distance(static_cast<CpuDistance>(d));
    if (prof_.line_llc_ns > 0) {  // distance-aware wake costs: each class as the next closer one when unset
        const int64_t llc = prof_.line_llc_ns;
        const int64_t cluster = prof_.line_cluster_ns > 0 ? prof_.line_cluster_ns : llc;
        const int64_t smt = prof_.line_smt_ns > 0 ? prof_.line_smt_ns : cluster;
        const int64_t cross_llc = prof_.line_cross_llc_ns > 0 ? prof_.line_cross_llc_ns : llc;
        const int64_t cross_numa = prof_.line_cross_numa_ns > 0 ? prof_.line_cross_numa_ns : cross_llc;
        line_full_[static_cast<size_t>(CpuDistance::smt)] = smt;
        line_full_[static_cast<size_t>(CpuDistance::cluster)] = cluster;
        line_full_[static_cast<size_t>(CpuDistance::llc)] = llc;
        line_full_[static_cast<size_t>(CpuDistance::cross_llc)] = cross_llc;
        line_full_[static_cast<size_t>(CpuDistance::cross_numa)] = cross_numa;
        line_extra_[static_cast<size_t>(CpuDistance::smt)] = smt - llc;
        line_extra_[static_cast<size_t>(CpuDistance::cluster)] = cluster - llc;
        line_extra_[static_cast<size_t>(CpuDistance::cross_llc)] = cross_llc - llc;
        line_extra_[static_cast<size_t>(CpuDistance::cross_numa)] = cross_numa - llc;
        // Only a machine with two CPUs at different line costs has anything to add (altra-80:
        // one LLC, no SMT).
        for (int a = 0; a < n && !line_aware_; ++a)
            for (int b = 0; b < n && !line_aware_; ++b)
                line_aware_ = line_extra_[static_cast<size_t>(topo_.classify(a, b))] != 0;
    }
    std::vector<int64_t> shared_opp = prof_.opp_khz;
    if (prof_.cpufreq_policies.empty() && shared_opp.empty()) {  // no cpufreq: one fixed frequency
        shared_opp = {1000000};
        gov_ = Gov::performance;
        gov_name_ = "none (fixed frequency)";
    }
    // cpufreq_policy_transition_delay_us(): the driver's delay, else 1.5 x latency, else 1 ms.
    rate_limit_ = prof_.sugov_rate_limit_ns > 0       ? prof_.sugov_rate_limit_ns
                  : prof_.freq_transition_ns > 0 ? prof_.freq_transition_ns * 3 / 2
                                                : kNsPerMs;
    dom_of_.assign(static_cast<size_t>(n), -1);
    if (!prof_.cpufreq_policies.empty()) {
        // One policy per entry, each with its own OPP table (absolute frequencies).
        if (const std::string why = cpufreq_policy_mismatch(prof_, topo_); !why.empty()) throw std::invalid_argument(why);
        for (const auto& pol : prof_.cpufreq_policies) {
            Domain& d = doms_.emplace_back();
            d.opp = pol.opp_khz;
            for (int c : pol.cpu_ids) dom_of_[static_cast<size_t>(c)] = static_cast<int>(doms_.size() - 1);
        }
        for (int c = 0; c < n; ++c) doms_[static_cast<size_t>(dom_of_[static_cast<size_t>(c)])].cpus.push_back(c);
    } else {
        // Frequency domains: CPUs that share a clock, all on the one OPP table.
        std::map<int, int> key_to_dom;
        for (int c = 0; c < n; ++c) {
            const CpuInfo& ci = topo_.cpu(c);
            const std::string& k = prof_.freq_domain;
            const int key = k == "cpu" ? c : k == "core" ? ci.core : k == "cluster" ? ci.cluster : k == "llc" ? ci.llc : ci.package;
            auto it = key_to_dom.find(key);
            if (it == key_to_dom.end()) {
                it = key_to_dom.emplace(key, static_cast<int>(doms_.size())).first;
                doms_.emplace_back().opp = shared_opp;
            }
            dom_of_[static_cast<size_t>(c)] = it->second;
            doms_[static_cast<size_t>(it->second)].cpus.push_back(c);
        }
    }
    for (auto& d : doms_) {
        d.fmin = d.opp.front();
        d.fmax = d.opp.back();
        // A machine idle since boot: a governor driven by load or utilisation finds nearly none
        // there and asks for the lowest OPP (each CPU likewise starts in its deepest idle state,
        // below).
        const int64_t start = gov_ == Gov::performance ? d.fmax : d.fmin;
        d.cur = d.target = d.requested = d.eff = start;
        d.cur_idx = static_cast<size_t>(std::lower_bound(d.opp.begin(), d.opp.end(), start) - d.opp.begin());
        d.busy_at_sample.assign(d.cpus.size(), 0);
    }
    // Each CPU's power at each OPP from the energy model, once (the window's sum needs no lookup).
    em_power_uw_.assign(static_cast<size_t>(n), {});
    if (!prof_.energy_model.empty() && energy_model_mismatch(prof_, topo_).empty())
        for (const auto& pd : prof_.energy_model)
            for (int c : pd.cpu_ids)
                for (int64_t khz : dom(c).opp) em_power_uw_[static_cast<size_t>(c)].push_back(em_power_uw(pd, khz, dom(c).fmax));
    states_ = prof_.effective_idle_states();
    teo_ = prof_.idle_governor == "teo";
    no_governor_ = prof_.idle_governor == "none";
    busy_.assign(static_cast<size_t>(n), 0);
    if (!prof_.turbo_khz.empty()) {
        if (!prof_.cpufreq_policies.empty() || prof_.opp_khz.empty())
            throw std::invalid_argument("turbo needs the shared OPP table (machine profile checks this)");
        // Turbo bins count the package's cores in C0, whatever its clock domains.
        int cores = 0, pkgs = 0;
        for (int c = 0; c < n; ++c) {
            cores = std::max(cores, topo_.cpu(c).core + 1);
            pkgs = std::max(pkgs, topo_.cpu(c).package + 1);
        }
        core_c0_.assign(static_cast<size_t>(cores), 0);
        c0_.assign(static_cast<size_t>(n), 0);
        pkg_active_.assign(static_cast<size_t>(pkgs), 0);
        pkg_doms_.assign(static_cast<size_t>(pkgs), {});
        for (size_t i = 0; i < doms_.size(); ++i)
            pkg_doms_[static_cast<size_t>(topo_.cpu(doms_[i].cpus.front()).package)].push_back(static_cast<int>(i));
    }
    sg_.assign(static_cast<size_t>(n), {});
    tick_ns_ = kNsPerSec / std::max<int64_t>(1, prof_.tick_hz);
    speed_.assign(static_cast<size_t>(n), 1.0);
    inv_speed_.assign(static_cast<size_t>(n), 1.0);
    inv_scale_.assign(static_cast<size_t>(n), 1024);
    clock_speed_.assign(static_cast<size_t>(n), 1.0);
    // Idle CPUs after boot: long idle history, so the governor picks the deepest state.
    idle_hist_.assign(static_cast<size_t>(n), {});
    for (auto& h : idle_hist_) h.fill(10 * kNsPerMs);
    idle_us_sum_.assign(static_cast<size_t>(n), 0);
    idle_us_sq_.assign(static_cast<size_t>(n), 0);
    for (size_t c = 0; c < idle_hist_.size(); ++c)
        for (Time x : idle_hist_[c]) {
            const auto us = static_cast<uint64_t>(x / 1000);
            idle_us_sum_[c] += us;
            idle_us_sq_[c] += us * us;
        }
    idle_hist_pos_.assign(static_cast<size_t>(n), 0);
    idle_avg_.assign(static_cast<size_t>(n), 10 * kNsPerMs);
    idle_state_.assign(static_cast<size_t>(n), -1);
    tick_stopped_.assign(static_cast<size_t>(n), 0);
    acc_.assign(static_cast<size_t>(n), CpuAcc{});
    for (int c = 0; c < n; ++c) {
        auto& a = acc_[static_cast<size_t>(c)];
        a.idle_res.assign(states_.size(), 0);
        a.opp_res.assign(dom(c).opp.size(), 0);
        a.opp_busy.assign(dom(c).opp.size(), 0);
        recompute_speed(c);
        idle_enter(c);
    }
}

void Hardware::start() {
    if (gov_ != Gov::ondemand && gov_ != Gov::conservative) return;
    // A profile read from JSON has at least kMinSamplingNs; a zero period would rearm at `now` forever.
    if (prof_.sampling_ns < MachineProfile::kMinSamplingNs)
        throw std::logic_error("Hardware: sampling period below MachineProfile::kMinSamplingNs");
    for (size_t i = 0; i < doms_.size(); ++i)
        engine_.schedule(engine_.now() + prof_.sampling_ns, target_, kSample, static_cast<int32_t>(i));
}

void Hardware::recompute_speed(int cpu) {
    // Frequency invariance: the CPU's capacity at its policy's current over its highest frequency.
    const Domain& d = dom(cpu);
    double s = topo_.cpu(cpu).capacity / 1024.0 * static_cast<double>(d.cur) / static_cast<double>(d.fmax);
    inv_speed_[static_cast<size_t>(cpu)] = s;
    inv_scale_[static_cast<size_t>(cpu)] = static_cast<uint32_t>(s * 1024.0 + 0.5);
    // Above P0 the work runs faster. Frequency invariance stays capped at the highest OPP: without
    // ACPI CPPC, acpi-cpufreq tells x86's scale-invariance code to use the nominal frequency
    // (arch_set_max_freq_ratio(true) in acpi_cpufreq_cpu_init()).
    if (d.eff != d.cur) s = topo_.cpu(cpu).capacity / 1024.0 * static_cast<double>(d.eff) / static_cast<double>(d.fmax);
    clock_speed_[static_cast<size_t>(cpu)] = s;
    apply_smt(cpu);
}

// SMT contention: a CPU whose sibling runs gets smt_factor_pct of its clock's speed.
void Hardware::apply_smt(int cpu) {
    double s = clock_speed_[static_cast<size_t>(cpu)];
    if (prof_.smt_factor_pct < 100) {
        for (int x : topo_.smt_list(cpu))
            if (x != cpu && busy_[static_cast<size_t>(x)]) {
                s *= static_cast<double>(prof_.smt_factor_pct) / 100.0;
                break;
            }
    }
    speed_[static_cast<size_t>(cpu)] = s;
}

int64_t Hardware::em_power_uw(const MachineProfile::PerfDomain& pd, int64_t khz, int64_t fmax_khz) {
    const int64_t em_fmax = pd.opps.back().khz;
    for (const auto& o : pd.opps)
        if (o.khz * fmax_khz >= khz * em_fmax) return o.power_uw;
    return pd.opps.back().power_uw;
}

// cpufreq_driver_resolve_freq() with CPUFREQ_RELATION_L: the policy's lowest OPP at or above khz.
int64_t Hardware::opp_at_least(const Domain& d, int64_t khz) {
    for (int64_t f : d.opp)
        if (f >= khz) return f;
    return d.fmax;
}

void Hardware::account(int cpu) {
    CpuAcc& a = acc_[static_cast<size_t>(cpu)];
    const Time now = engine_.now();
    const Time dt = now - a.last;
    if (dt <= 0) return;
    const Domain& d = doms_[static_cast<size_t>(dom_of_[static_cast<size_t>(cpu)])];
    const double f = static_cast<double>(d.eff);
    a.khz_time += static_cast<double>(dt) * f;
    if (a.busy) {
        a.khz_busy_time += static_cast<double>(dt) * f;
        a.busy_time += dt;
    }
    a.opp_res[d.cur_idx] += dt;
    if (a.busy) a.opp_busy[d.cur_idx] += dt;
    a.last = now;
}

// Turbo Boost: the P0 request runs at the bin for the package's cores in C0 (Intel's datasheets:
// "the number of cores operating in the C0 state"; "only active if the operating system is
// requesting the P0 state").
int64_t Hardware::turbo_khz(const Domain& d) const {
    if (prof_.turbo_khz.empty() || d.cur != d.fmax) return d.cur;
    const int active = pkg_active_[static_cast<size_t>(topo_.cpu(d.cpus.front()).package)];
    if (active == 0) return d.cur;  // nothing runs: no clock to report above P0
    const auto& bins = prof_.turbo_khz;
    return bins[static_cast<size_t>(std::min(active, static_cast<int>(bins.size()))) - 1];
}

// A CPU enters or leaves C0 (busy, or idle in a polling state): its core and package counts.
void Hardware::set_c0(int cpu, bool on) {
    uint8_t& c0 = c0_[static_cast<size_t>(cpu)];
    if ((c0 != 0) == on) return;
    c0 = on ? 1 : 0;
    const CpuInfo& ci = topo_.cpu(cpu);
    int& k = core_c0_[static_cast<size_t>(ci.core)];
    const bool core_was = k > 0;
    k += on ? 1 : -1;
    if (core_was == (k > 0)) return;
    pkg_active_[static_cast<size_t>(ci.package)] += on ? 1 : -1;
    for (int d : pkg_doms_[static_cast<size_t>(ci.package)]) update_eff(doms_[static_cast<size_t>(d)]);
}

void Hardware::update_eff(Domain& d) {
    const int64_t eff = turbo_khz(d);
    if (eff == d.eff) return;
    for (int c : d.cpus) account(c);
    d.eff = eff;
    for (int c : d.cpus) {
        const double before = speed_[static_cast<size_t>(c)];
        recompute_speed(c);
        if (speed_[static_cast<size_t>(c)] != before && client_) client_->speed_changed(c);
    }
}

void Hardware::set_busy(int cpu, bool busy) {
    account(cpu);
    acc_[static_cast<size_t>(cpu)].busy = busy;
    busy_[static_cast<size_t>(cpu)] = busy ? 1 : 0;
    if (!c0_.empty()) set_c0(cpu, busy);
    if (prof_.smt_factor_pct >= 100) return;
    // SMT contention: the siblings' speed depends on this CPU running.
    for (int x : topo_.smt_list(cpu)) {
        if (x == cpu) continue;
        const double before = speed_[static_cast<size_t>(x)];
        apply_smt(x);  // its clock is the same
        if (speed_[static_cast<size_t>(x)] != before && client_) client_->speed_changed(x);
    }
}

void Hardware::set_domain_freq(Domain& d, int64_t khz) {
    if (khz == d.cur) return;
    for (int c : d.cpus) account(c);
    d.cur = khz;
    d.eff = turbo_khz(d);
    d.cur_idx = static_cast<size_t>(std::lower_bound(d.opp.begin(), d.opp.end(), khz) - d.opp.begin());
    for (int c : d.cpus) {
        recompute_speed(c);
        if (obs_) obs_->cpu_frequency(engine_.now(), c, khz);
        if (client_) client_->speed_changed(c);
    }
}

void Hardware::request(Domain& d, int64_t khz) {
    if (khz == d.target) return;
    d.target = khz;
    ++d.gen;
    if (prof_.freq_transition_ns <= 0) {
        set_domain_freq(d, khz);
        return;
    }
    engine_.schedule(engine_.now() + prof_.freq_transition_ns, target_, kApply,
                     static_cast<int32_t>(&d - doms_.data()), d.gen);
}

// cpufreq_update_util() under schedutil: sugov_iowait_boost(), then, once the policy's rate
// limit allows, sugov_update_single_freq() (a policy of one CPU) or sugov_update_shared().
void Hardware::util_changed(int cpu, bool iowait, int from) {
    if (gov_ != Gov::schedutil) return;
    const Time now = engine_.now();
    // sugov_iowait_boost(): a boost left from more than a tick ago restarts; a wakeup from I/O
    // doubles it once until an evaluation has used it.
    SugovCpu& sc = sg_[static_cast<size_t>(cpu)];
    if (sc.boost && now - sc.last_update > tick_ns_) {
        sc.boost = iowait ? kIowaitBoostMin : 0;
        sc.boost_pending = iowait;
    } else if (iowait && !sc.boost_pending) {
        sc.boost_pending = true;
        sc.boost = sc.boost ? std::min<int64_t>(1024, sc.boost * 2) : kIowaitBoostMin;
    }
    sc.last_update = now;
    if (!client_) return;
    Domain& d = doms_[static_cast<size_t>(dom_of_[static_cast<size_t>(cpu)])];
    // sugov_should_update_freq(): cpufreq_this_cpu_can_update(): only a CPU of the policy, unless
    // the driver takes requests from any CPU.
    if (from >= 0 && from != cpu && !prof_.dvfs_from_any_cpu &&
        (prof_.cpufreq_per_cpu || dom_of_[static_cast<size_t>(from)] != dom_of_[static_cast<size_t>(cpu)]))
        return;
    if (prof_.cpufreq_per_cpu || d.cpus.size() == 1) {
        // sugov_update_single_freq(): this CPU's own request; the CPUs sharing the clock run at
        // the highest request among them (hardware coordination).
        // sugov_should_update_freq(): -kTimeNever means no change yet: always evaluate.
        if (sc.last_freq_update != -kTimeNever && now - sc.last_freq_update < rate_limit_) return;
        int64_t next = opp_at_least(d, static_cast<int64_t>(1.25 * static_cast<double>(d.fmax) * sugov_perf(cpu)));
        // sugov_hold_freq(): no lower request while the CPU has not been idle (long enough to stop
        // its tick) since the last evaluation, unless uclamp_max caps the CPU (uclamp_rq_is_capped()).
        const bool capped = uclamp_ && client_->cpu_uclamp(cpu).max < 1024 && client_->cpu_util(cpu) >= client_->cpu_uclamp(cpu).max;
        if (!capped) {
            const bool busy = sc.idle_calls == sc.saved_idle_calls;
            sc.saved_idle_calls = sc.idle_calls;
            if (busy && next < sc.next_freq) next = sc.next_freq;
        }
        // sugov_update_next_freq(): the window restarts only when the request changes.
        if (next == sc.next_freq) return;
        sc.next_freq = next;
        sc.last_freq_update = now;
        int64_t highest = 0;
        for (int c : d.cpus) highest = std::max(highest, sg_[static_cast<size_t>(c)].next_freq);
        request(d, highest);
        return;
    }
    if (d.last_eval != -kTimeNever && now - d.last_eval < rate_limit_) return;
    // sugov_next_freq_shared(): the policy's highest need.
    double rel = 0;
    for (int c : d.cpus) rel = std::max(rel, sugov_perf(c));
    const int64_t next = opp_at_least(d, static_cast<int64_t>(1.25 * static_cast<double>(d.fmax) * rel));
    // sugov_update_next_freq(): last_freq_update_time moves only when the request changes, so an
    // evaluation that keeps the frequency does not restart the rate-limit window.
    if (next == d.target) return;
    d.last_eval = now;
    request(d, next);
}

// sugov_get_util() with sugov_iowait_apply(): a CPU's need relative to its capacity, before
// the 1.25 headroom of get_next_freq() (at most 1).
double Hardware::sugov_perf(int cpu) {
    const double cap = topo_.cpu(cpu).capacity;
    const double u = std::max(client_->cpu_util(cpu), static_cast<double>(iowait_apply(cpu)) * cap / 1024.0);
    if (!uclamp_) return std::min(1.0, u / cap);
    // effective_cpu_util() + sugov_effective_cpu_perf(): the headroom, capped by the rq's
    // uclamp_max (and the capacity), raised to its uclamp_min.
    const UclampPair uc = client_->cpu_uclamp(cpu);
    const double perf = std::max(static_cast<double>(uc.min), std::min(1.25 * u, std::min(cap, static_cast<double>(uc.max))));
    return std::min(1.0, perf / (1.25 * cap));
}

// sugov_iowait_apply(): the boost an evaluation uses (0: none), halved unless a wakeup from I/O
// refreshed it since the last evaluation; dropped below IOWAIT_BOOST_MIN or after a tick
// without an update of the CPU.
int64_t Hardware::iowait_apply(int cpu) {
    SugovCpu& sc = sg_[static_cast<size_t>(cpu)];
    if (!sc.boost) return 0;
    if (engine_.now() - sc.last_update > tick_ns_) {
        sc.boost = 0;
        sc.boost_pending = false;
        return 0;
    }
    if (!sc.boost_pending) {
        sc.boost >>= 1;
        if (sc.boost < kIowaitBoostMin) {
            sc.boost = 0;
            return 0;
        }
    }
    sc.boost_pending = false;
    return sc.boost;
}

// od_dbs_update()/cs_dbs_update(): load = busy fraction of the busiest CPU over the period.
void Hardware::sample(Domain& d) {
    const Time now = engine_.now();
    const Time period = std::max<Time>(1, now - d.last_sample);
    double load = 0;
    for (size_t i = 0; i < d.cpus.size(); ++i) {
        const Time b = client_ ? client_->cpu_busy_ns(d.cpus[i]) : 0;
        load = std::max(load, static_cast<double>(b - d.busy_at_sample[i]) / static_cast<double>(period));
        d.busy_at_sample[i] = b;
    }
    d.last_sample = now;
    load = std::min(1.0, load);
    if (gov_ == Gov::ondemand) {
        const int64_t f = load > 0.80 ? d.fmax : d.fmin + static_cast<int64_t>(load * static_cast<double>(d.fmax - d.fmin));
        request(d, opp_at_least(d, f));
    } else {
        // cs_dbs_update(): step an unrounded request by 5% of fmax; going up take the highest OPP
        // at or below it, going down the lowest at or above it.
        const int64_t step = d.fmax * 5 / 100;
        if (d.requested < d.fmin || d.requested > d.fmax) d.requested = d.cur;
        if (load > 0.80 && d.requested < d.fmax) {
            d.requested = std::min(d.fmax, d.requested + step);
            int64_t pick = d.fmin;
            for (int64_t o : d.opp)
                if (o <= d.requested) pick = o;
            request(d, pick);
        } else if (load < 0.20 && d.requested > d.fmin) {
            d.requested = std::max(d.fmin, d.requested - step);
            request(d, opp_at_least(d, d.requested));
        }
    }
    engine_.schedule(now + prof_.sampling_ns, target_, kSample, static_cast<int32_t>(&d - doms_.data()));
}

void Hardware::on_event(const Event& e) {
    Domain& d = doms_[static_cast<size_t>(e.a)];
    if (e.kind == kApply) {
        if (e.b == d.gen) set_domain_freq(d, d.target);
    } else if (e.kind == kSample) {
        sample(d);
    }
}

namespace {

// get_typical_interval() (drivers/cpuidle/governors/menu.c, v6.19): the mean of the last eight
// idle periods (in us, as menu keeps them) when their spread is small (stddev under 20 us or
// under a sixth of the mean); else the sample farther from the mean is dropped and the test
// repeated while at least six remain. No pattern: kNoPattern.
constexpr uint64_t kNoPattern = UINT32_MAX;
uint64_t typical_interval_us(const std::array<Time, 8>& h, uint64_t sum_us, uint64_t sq_us) {
    // The first pass over all eight, from the sums kept as periods are recorded.
    if (sum_us == 0) return kNoPattern;
    {
        const uint64_t avg = sum_us >> 3;
        const uint64_t avg_sq = avg * avg;
        const uint64_t variance = (sq_us >> 3) - avg_sq;
        if (variance <= UINT64_MAX / 36 && (avg_sq > variance * 36 || variance <= 400)) return avg;
    }
    int64_t min_thresh = -1, max_thresh = UINT32_MAX;
    for (;;) {
        uint64_t sum = 0, sq = 0, max = 0, min = UINT32_MAX;
        uint64_t divisor = 0;
        for (Time ns : h) {
            const auto v = static_cast<int64_t>(ns / 1000);
            if (v <= min_thresh || v >= max_thresh) continue;
            ++divisor;
            sum += static_cast<uint64_t>(v);
            sq += static_cast<uint64_t>(v) * static_cast<uint64_t>(v);
            max = std::max(max, static_cast<uint64_t>(v));
            min = std::min(min, static_cast<uint64_t>(v));
        }
        if (max == 0) return kNoPattern;
        const uint64_t avg = sum / divisor;
        const uint64_t avg_sq = avg * avg;
        const uint64_t variance = sq / divisor - avg_sq;
        if (variance <= UINT64_MAX / 36 && ((avg_sq > variance * 36 && divisor * 4 >= 24) || variance <= 400)) return avg;
        if (divisor * 4 <= 24) return kNoPattern;
        if (avg - min > max - avg)
            min_thresh = static_cast<int64_t>(min);
        else
            max_thresh = static_cast<int64_t>(max);
    }
}

}  // namespace

// menu_select(): the typical interval of the last eight periods; above 15 us, no more than the
// timer-based estimate, which without timers in the model is the correction-factor average of
// all periods (an average with weight 1/8). The deepest state whose residency fits; a shallow
// physical state rather than polling when its exit latency is within the prediction. teo:
// shallower when most recent periods ended early (intercepts dominate).
void Hardware::idle_enter(int cpu) {
    const auto& h = idle_hist_[static_cast<size_t>(cpu)];
    Time predicted;
    int pick = 0;
    if (no_governor_) {
        // cpuidle_idle_call() without a driver stops the tick and halts (default_idle_call());
        // haltpoll_select() with a poll limit of 0 returns the halt state and leaves the tick to stop.
        pick = static_cast<int>(states_.size()) - 1;
        predicted = kTimeNever;
    } else if (teo_) {
        // Shallower only when early wakeups ("intercepts") are the majority of recent periods:
        // the 4th shortest of the last 8.
        std::array<Time, 8> sorted = h;
        std::sort(sorted.begin(), sorted.end());
        predicted = sorted[3];
        for (size_t i = 0; i < states_.size(); ++i)
            if (states_[i].residency_ns <= predicted) pick = static_cast<int>(i);
    } else {
        const uint64_t typical = typical_interval_us(h, idle_us_sum_[static_cast<size_t>(cpu)], idle_us_sq_[static_cast<size_t>(cpu)]);
        predicted = typical == kNoPattern ? kTimeNever : static_cast<Time>(typical) * 1000;
        if (predicted > 15 * kNsPerUs) predicted = std::min(predicted, idle_avg_[static_cast<size_t>(cpu)]);
        for (size_t i = 0; i < states_.size(); ++i) {
            if (states_[i].residency_ns <= predicted) {
                pick = static_cast<int>(i);
                continue;
            }
            // A physical state instead of polling when its residency is under 15 us, its exit
            // latency within the prediction, and no timer is due sooner (none in the model).
            if (states_[static_cast<size_t>(pick)].polling && states_[i].residency_ns < 15 * kNsPerUs &&
                states_[i].exit_ns <= predicted) {
                pick = static_cast<int>(i);
                predicted = states_[i].residency_ns;
                break;
            }
            // The tick stays: predict the chosen state's residency (the tick is not stopped).
            if (predicted >= tick_ns_) predicted = states_[static_cast<size_t>(pick)].residency_ns;
            break;
        }
    }
    idle_state_[static_cast<size_t>(cpu)] = pick;
    // The governor lets the tick stop unless it chose a polling state or predicts an idle period
    // shorter than a tick (menu_select()); tick_nohz_idle_stop_tick() counts idle_calls then.
    const bool stop = predicted >= tick_ns_ && !states_[static_cast<size_t>(pick)].polling;
    tick_stopped_[static_cast<size_t>(cpu)] = stop;
    if (stop) ++sg_[static_cast<size_t>(cpu)].idle_calls;
    if (!c0_.empty()) set_c0(cpu, states_[static_cast<size_t>(pick)].polling);  // POLL is C0
    acc_[static_cast<size_t>(cpu)].idle_entered = engine_.now();
    acc_[static_cast<size_t>(cpu)].idle_since = engine_.now();
    if (obs_) obs_->cpu_idle(engine_.now(), cpu, pick);
}

void Hardware::idle_exit(int cpu, bool tick) {
    int& st = idle_state_[static_cast<size_t>(cpu)];
    if (st < 0) return;
    CpuAcc& a = acc_[static_cast<size_t>(cpu)];
    const Time dur = engine_.now() - a.idle_entered;
    a.idle_res[static_cast<size_t>(st)] += dur;
    // The governors learn the idle time before the wakeup, not the exit after it: menu_update()
    // deducts the exit latency (or halves a period under twice it), teo_update() half of it.
    // A wakeup by the kept tick is no genuine one: menu takes 9/10 of MAX_INTERESTING (50 ms),
    // teo the sleep length to the next timer, which without timers is as long.
    const Time exit = states_[static_cast<size_t>(st)].exit_ns;
    Time measured = dur;
    if (tick) measured = 45 * kNsPerMs;
    else if (teo_) measured = dur >= exit ? dur - exit / 2 : dur / 2;
    else measured = dur > 2 * exit ? dur - exit : dur / 2;
    auto& pos = idle_hist_pos_[static_cast<size_t>(cpu)];
    Time& slot = idle_hist_[static_cast<size_t>(cpu)][static_cast<size_t>(pos)];
    const auto old_us = static_cast<uint64_t>(slot) / 1000, new_us = static_cast<uint64_t>(measured) / 1000;
    idle_us_sum_[static_cast<size_t>(cpu)] += new_us - old_us;
    idle_us_sq_[static_cast<size_t>(cpu)] += new_us * new_us - old_us * old_us;
    // menu_update()'s correction factor: next_timer x factor follows the periods with weight 1/8.
    Time& avg = idle_avg_[static_cast<size_t>(cpu)];
    avg = static_cast<Time>(static_cast<uint64_t>(avg) - static_cast<uint64_t>(avg) / 8 + static_cast<uint64_t>(measured) / 8);
    slot = measured;
    pos = (pos + 1) % 8;
    st = -1;
    if (obs_) obs_->cpu_idle(engine_.now(), cpu, -1);
}

int64_t Hardware::transfer_by_distance(CpuDistance d) const {
    switch (d) {
        case CpuDistance::same_cpu: return 0;
        case CpuDistance::smt: return prof_.refill_smt_ns_per_kib;
        case CpuDistance::cluster: return prof_.refill_cluster_ns_per_kib;
        case CpuDistance::llc: return prof_.refill_llc_ns_per_kib;
        case CpuDistance::cross_llc: return prof_.refill_cross_llc_ns_per_kib;
        case CpuDistance::cross_numa: return prof_.refill_cross_numa_ns_per_kib;
    }
    return 0;
}

int64_t Hardware::switch_in(CacheWarmth& w, int cpu) {
    if (w.footprint_kib <= 0) {
        w.cpu = cpu;
        return 0;
    }
    double per_kib;
    if (w.cpu < 0) {
        per_kib = static_cast<double>(prof_.refill_dram_ns_per_kib);  // a new task starts cold
    } else {
        // The set left on w.cpu fades with other work there and with time away.
        const double other = client_ ? static_cast<double>(client_->cpu_busy_ns(w.cpu) - w.busy_at_leave) : 0.0;
        const double away = static_cast<double>(engine_.now() - w.left_at);
        double warm = 1.0;
        if (prof_.cache_evict_busy_ns > 0) warm *= std::exp(-std::max(0.0, other) / static_cast<double>(prof_.cache_evict_busy_ns));
        if (prof_.cache_evict_idle_ns > 0) warm *= std::exp(-away / static_cast<double>(prof_.cache_evict_idle_ns));
        const double dram = static_cast<double>(prof_.refill_dram_ns_per_kib);
        per_kib = w.cpu == cpu ? (1.0 - warm) * dram
                               : warm * static_cast<double>(transfer_ns_per_kib(w.cpu, cpu)) + (1.0 - warm) * dram;
    }
    w.cpu = cpu;
    const auto cost = static_cast<int64_t>(per_kib * static_cast<double>(w.footprint_kib));
    refill_ns_ += cost;
    return cost;
}

void Hardware::untouch_shared(int object, int last, int64_t cost) {
    if (static_cast<size_t>(object) < shared_last_cpu_.size()) shared_last_cpu_[static_cast<size_t>(object)] = last;
    refill_ns_ -= cost;
}

void Hardware::begin_window() {
    for (int c = 0; c < topo_.nr_cpus(); ++c) {
        account(c);
        CpuAcc& a = acc_[static_cast<size_t>(c)];
        a.khz_time = a.khz_busy_time = 0;
        a.busy_time = 0;
        std::fill(a.opp_res.begin(), a.opp_res.end(), 0);
        std::fill(a.opp_busy.begin(), a.opp_busy.end(), 0);
        // Idle residency restarts now; a CPU idle across the boundary counts from here.
        std::fill(a.idle_res.begin(), a.idle_res.end(), 0);
        if (idle_state_[static_cast<size_t>(c)] >= 0) a.idle_entered = engine_.now();
    }
    refill_at_window_ = refill_ns_;
    window_start_ = engine_.now();
}

HardwareStats Hardware::window_stats() const {
    auto* self = const_cast<Hardware*>(this);
    for (int c = 0; c < topo_.nr_cpus(); ++c) self->account(c);
    const Time now = engine_.now();
    const double window = static_cast<double>(std::max<Time>(1, now - window_start_));
    const int n = topo_.nr_cpus();
    HardwareStats out;
    out.governor = gov_name_;
    double khz_sum = 0, busy_khz = 0, busy_t = 0;
    // Residency per frequency over all CPUs: the policies' tables merged (one table: its OPPs).
    std::map<int64_t, double> opp_tot;
    for (const Domain& d : doms_)
        for (int64_t f : d.opp) opp_tot.emplace(f, 0.0);
    std::vector<double> idle_tot(states_.size(), 0);
    for (int c = 0; c < n; ++c) {
        const CpuAcc& a = acc_[static_cast<size_t>(c)];
        const double mean = a.khz_time / window;
        out.cpu_freq_khz.push_back(mean);
        khz_sum += mean;
        busy_khz += a.khz_busy_time;
        busy_t += static_cast<double>(a.busy_time);
        const std::vector<int64_t>& opp = dom(c).opp;
        for (size_t i = 0; i < opp.size(); ++i) opp_tot[opp[i]] += static_cast<double>(a.opp_res[i]);
        for (size_t i = 0; i < states_.size(); ++i) idle_tot[i] += static_cast<double>(a.idle_res[i]);
        const int st = idle_state_[static_cast<size_t>(c)];
        if (st >= 0) idle_tot[static_cast<size_t>(st)] += static_cast<double>(now - std::max(a.idle_entered, window_start_));
    }
    out.freq_khz_mean = khz_sum / n;
    out.freq_khz_busy = busy_t > 0 ? busy_khz / busy_t : 0.0;
    for (const auto& [khz, t] : opp_tot) out.freq_residency.emplace_back(khz, t / (window * n));
    for (size_t i = 0; i < states_.size(); ++i)
        out.idle_residency.emplace_back(states_[i].name, idle_tot[i] / (window * n));
    out.cache_refill_ns = refill_ns_ - refill_at_window_;
    out.has_energy_model = !em_power_uw_.empty() && !em_power_uw_.front().empty();
    if (out.has_energy_model)
        for (int c = 0; c < n; ++c) {
            const CpuAcc& a = acc_[static_cast<size_t>(c)];
            const std::vector<int64_t>& p = em_power_uw_[static_cast<size_t>(c)];
            double uj = 0;  // ns x uW = 1e-9 uJ
            for (size_t i = 0; i < p.size(); ++i) uj += static_cast<double>(a.opp_busy[i]) * static_cast<double>(p[i]) * 1e-9;
            out.cpu_energy_uj.push_back(uj);
            out.energy_uj += uj;
        }
    return out;
}

}  // namespace wakesim
