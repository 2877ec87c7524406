// `wakesim run --trace FILE.pftrace`: Perfetto's protobuf trace. A small protobuf decoder of its
// own (the wire format of protobuf.dev's encoding guide) reads the file with the field numbers of
// Perfetto's .proto files (protos/perfetto/trace/trace.proto, trace_packet.proto,
// ftrace/ftrace_event_bundle.proto, ftrace/ftrace_event.proto, ftrace/sched.proto,
// ftrace/power.proto, ftrace/ftrace.proto, ps/process_tree.proto, common/system_info.proto in
// google/perfetto), and the events must be the text trace's of the same run, one for one.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "trace_test_util.h"

using namespace wakesim;

namespace {

// One field of a message: varints (wire type 0) keep the value, length-delimited ones (2) the bytes.
struct Field {
    uint32_t number = 0;
    uint32_t wire = 0;
    uint64_t value = 0;
    std::string_view bytes;
};

// Every field of one message, in order; throws on a truncated or malformed encoding.
std::vector<Field> decode(std::string_view msg) {
    size_t at = 0;
    auto varint = [&] {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (at >= msg.size()) throw std::runtime_error("truncated varint");
            const auto b = static_cast<uint8_t>(msg[at++]);
            v |= uint64_t{b & 0x7fu} << shift;
            if (!(b & 0x80)) return v;
        }
        throw std::runtime_error("varint longer than 10 bytes");
    };
    std::vector<Field> fields;
    while (at < msg.size()) {
        Field f;
        const uint64_t key = varint();
        f.number = static_cast<uint32_t>(key >> 3);
        f.wire = static_cast<uint32_t>(key & 7);
        if (f.number == 0) throw std::runtime_error("field number 0");
        if (f.wire == 0) {
            f.value = varint();
        } else if (f.wire == 2) {
            const uint64_t n = varint();
            if (n > msg.size() - at) throw std::runtime_error("length past the end");
            f.bytes = msg.substr(at, n);
            at += n;
        } else if (f.wire == 1 || f.wire == 5) {
            const size_t n = f.wire == 1 ? 8 : 4;
            if (n > msg.size() - at) throw std::runtime_error("fixed field past the end");
            at += n;
        } else {
            throw std::runtime_error("unexpected wire type " + std::to_string(f.wire));
        }
        fields.push_back(f);
    }
    return fields;
}

const Field* find(const std::vector<Field>& fs, uint32_t number) {
    for (const auto& f : fs)
        if (f.number == number) return &f;
    return nullptr;
}
int64_t int_of(const std::vector<Field>& fs, uint32_t number) {
    const Field* f = find(fs, number);
    REQUIRE(f);
    REQUIRE(f->wire == 0);
    return static_cast<int64_t>(f->value);
}
std::string str_of(const std::vector<Field>& fs, uint32_t number) {
    const Field* f = find(fs, number);
    REQUIRE(f);
    REQUIRE(f->wire == 2);
    return std::string(f->bytes);
}

// sched_switch's prev_state as the kernel's format string prints it (4.14+ encoding).
std::string state_letters(int64_t raw) {
    switch (raw) {
        case 0: return "R";
        case 0x100: return "R+";
        case 0x1: return "S";
        case 0x10: return "X";
        default: return "?" + std::to_string(raw);
    }
}

struct Decoded {
    std::map<int, std::vector<std::string>> lines;  // per CPU, in bundle order: the text trace's line
    std::map<int, std::vector<uint64_t>> stamps;    // per CPU, nanoseconds
    std::map<std::string, int> kinds;               // events by ftrace name
    std::map<int64_t, std::string> process_names, thread_names;
    std::string sysname, release;
    size_t packets = 0, bundles = 0;
    bool one_sequence = true;
};

// The ftrace event name of FtraceEvent's oneof field.
std::string event_name(uint32_t which) {
    switch (which) {
        case 3: return "tracing_mark_write";  // print
        case 4: return "sched_switch";
        case 11: return "cpu_frequency";
        case 13: return "cpu_idle";
        case 17: return "sched_wakeup";
        case 20: return "sched_waking";
        case 114: return "sched_wakeup_new";
        case 491: return "sched_migrate_task";
        default: return "unknown event field " + std::to_string(which);
    }
}

// The event as the ftrace text writer prints it after the context columns, with the context's pid
// and the time in microseconds in front, so that both formats compare line for line.
std::string render(uint64_t ts, int64_t pid, uint32_t which, const std::vector<Field>& f, int cpu) {
    std::ostringstream o;
    o << ts / 1000 << " " << pid << " " << event_name(which) << ": ";
    char cpu3[8];
    auto wake = [&] {
        std::snprintf(cpu3, sizeof cpu3, "%03d", static_cast<int>(int_of(f, 5)));
        o << "comm=" << str_of(f, 1) << " pid=" << int_of(f, 2) << " prio=" << int_of(f, 3)
          << " target_cpu=" << cpu3;
    };
    switch (which) {
        case 20:
        case 17:
        case 114: wake(); break;
        case 491:
            o << "comm=" << str_of(f, 1) << " pid=" << int_of(f, 2) << " prio=" << int_of(f, 3)
              << " orig_cpu=" << int_of(f, 4) << " dest_cpu=" << int_of(f, 5);
            break;
        case 4:
            o << "prev_comm=" << str_of(f, 1) << " prev_pid=" << int_of(f, 2)
              << " prev_prio=" << int_of(f, 3) << " prev_state=" << state_letters(int_of(f, 4))
              << " ==> next_comm=" << str_of(f, 5) << " next_pid=" << int_of(f, 6) << " next_prio=" << int_of(f, 7);
            break;
        case 11:
        case 13:
            CHECK(int_of(f, 2) == cpu);  // cpu_id: the bundle's CPU
            o << "state=" << int_of(f, 1) << " cpu_id=" << int_of(f, 2);
            break;
        case 3: {
            std::string buf = str_of(f, 2);
            CHECK(buf.back() == '\n');
            buf.pop_back();
            o << buf;
            break;
        }
        default: break;
    }
    return o.str();
}

Decoded decode_trace(std::string_view file) {
    Decoded d;
    for (const Field& p : decode(file)) {
        REQUIRE(p.number == 1);  // Trace.packet
        REQUIRE(p.wire == 2);
        ++d.packets;
        const auto pkt = decode(p.bytes);
        const Field* seq = find(pkt, 10);  // trusted_packet_sequence_id
        d.one_sequence &= seq && seq->wire == 0 && seq->value == 2;
        if (const Field* si = find(pkt, 45)) {  // system_info
            const std::string uts_bytes = str_of(decode(si->bytes), 1);
            const auto uts = decode(uts_bytes);
            d.sysname = str_of(uts, 1);
            d.release = str_of(uts, 3);
        }
        if (const Field* pt = find(pkt, 2)) {  // process_tree
            CHECK(find(pkt, 8));               // a timestamp
            for (const Field& e : decode(pt->bytes)) {
                const auto m = decode(e.bytes);
                if (e.number == 1) {
                    d.process_names[int_of(m, 1)] = str_of(m, 3);
                    CHECK(int_of(m, 9) == 1);  // cmdline_is_comm
                } else if (e.number == 2) {
                    CHECK(int_of(m, 3) == int_of(m, 1));  // tgid = tid
                    d.thread_names[int_of(m, 1)] = str_of(m, 2);
                }
            }
        }
        const Field* fb = find(pkt, 1);  // ftrace_events
        if (!fb) continue;
        ++d.bundles;
        const auto bundle = decode(fb->bytes);
        const int cpu = static_cast<int>(int_of(bundle, 1));
        for (const Field& ev : bundle) {
            if (ev.number != 2) continue;
            const auto e = decode(ev.bytes);
            const auto ts = static_cast<uint64_t>(int_of(e, 1));
            const int64_t pid = int_of(e, 2);
            const Field* body = nullptr;
            for (const Field& f : e)
                if (f.number != 1 && f.number != 2) body = &f;
            REQUIRE(body);
            REQUIRE(body->wire == 2);
            const std::string line = render(ts, pid, body->number, decode(body->bytes), cpu);
            d.lines[cpu].push_back(line);
            d.stamps[cpu].push_back(ts);
            ++d.kinds[event_name(body->number)];
        }
    }
    return d;
}

// The text trace of the same run in the same form: per CPU, "USECS PID event: args".
struct TextTrace {
    std::map<int, std::vector<std::string>> lines;
    std::map<std::string, int> kinds;
};

TextTrace text_trace(TraceWindow window = {}) {
    static const std::regex line(R"(-(\d+)\s+\(\s*(?:\d+|-+)\)\s\[(\d+)\]\s+d\.\.2\.\s+(\d+)\.(\d{6}):\s+(\S+): (.*)$)");
    TextTrace t;
    std::istringstream in(tracetest::traced_bytes(window));
    for (std::string l; std::getline(in, l);) {
        if (l.empty() || l[0] == '#') continue;
        std::smatch m;
        INFO(l);
        REQUIRE(std::regex_search(l, m, line));
        const uint64_t us = std::stoull(m[3].str()) * 1000000 + std::stoull(m[4].str());
        t.lines[std::stoi(m[2].str())].push_back(std::to_string(us) + " " + m[1].str() + " " + m[5].str() + ": " +
                                                 m[6].str());
        ++t.kinds[m[5].str()];
    }
    return t;
}

}  // namespace

TEST_CASE("The Perfetto trace parses as Trace packets on one sequence, with SystemInfo first", "[trace][perfetto]") {
    const std::string file = tracetest::traced_bytes({}, TraceFormat::perfetto);
    REQUIRE(file.size() > 100);
    const Decoded d = decode_trace(file);
    CHECK(d.one_sequence);
    CHECK(d.bundles > 4);  // 4 CPUs: some CPU's events span several bundles (the 32 KiB flush)
    // The first packet is the SystemInfo: trace_processor reads prev_state by the kernel release.
    const auto first = decode(decode(file).front().bytes);
    CHECK(find(first, 45));
    CHECK(d.sysname == "Linux");
    CHECK(d.release.rfind("6.19", 0) == 0);
}

TEST_CASE("The Perfetto trace holds the text trace's events, CPU by CPU, in order", "[trace][perfetto]") {
    const Decoded d = decode_trace(tracetest::traced_bytes({}, TraceFormat::perfetto));
    const TextTrace t = text_trace();
    CHECK(d.kinds == t.kinds);
    for (const char* k : {"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "cpu_idle",
                          "tracing_mark_write"}) {
        INFO(k);
        CHECK(t.kinds.count(k));
    }
    REQUIRE(d.lines.size() == t.lines.size());
    for (const auto& [cpu, lines] : t.lines) {
        INFO("CPU " << cpu);
        REQUIRE(d.lines.count(cpu));
        const auto& got = d.lines.at(cpu);
        REQUIRE(got.size() == lines.size());
        for (size_t i = 0; i < lines.size(); ++i) {
            INFO("event " << i);
            REQUIRE(got[i] == lines[i]);
        }
    }
    // The hog preempted by the ticker is R+ in both (0x100, TASK_REPORT_MAX, in the protobuf).
    bool preempted = false;
    for (const auto& l : d.lines.at(0)) preempted |= l.find("prev_comm=hog prev_pid=1000 prev_prio=120 prev_state=R+") != std::string::npos;
    CHECK(preempted);
}

TEST_CASE("Perfetto bundles are in time order per CPU and name every task", "[trace][perfetto]") {
    const Decoded d = decode_trace(tracetest::traced_bytes({}, TraceFormat::perfetto));
    for (const auto& [cpu, ts] : d.stamps) {
        INFO("CPU " << cpu);
        for (size_t i = 1; i < ts.size(); ++i) REQUIRE(ts[i - 1] <= ts[i]);
    }
    const std::map<int64_t, std::string> expected{{1000, "hog"}, {1001, "ticker"}, {1002, "pinger"}, {1003, "ponger"}};
    CHECK(d.process_names == expected);
    CHECK(d.thread_names == expected);
}

TEST_CASE("A Perfetto trace window holds the text trace's events of the window", "[trace][perfetto]") {
    const TraceWindow w{5000000, 7000000};
    const Decoded d = decode_trace(tracetest::traced_bytes(w, TraceFormat::perfetto));
    const TextTrace t = text_trace(w);
    CHECK(d.kinds == t.kinds);
    CHECK(d.lines == t.lines);
    for (const auto& [cpu, ts] : d.stamps) {
        CHECK(ts.front() >= 5000000);
        CHECK(ts.back() < 7000000);
    }
    // Same run, same bytes.
    CHECK(tracetest::traced_bytes(w, TraceFormat::perfetto) == tracetest::traced_bytes(w, TraceFormat::perfetto));
}

TEST_CASE("The trace format follows the file name unless --trace-format says", "[trace][perfetto]") {
    CHECK(trace_format_for_path("out.pftrace") == TraceFormat::perfetto);
    CHECK(trace_format_for_path("dir.x/out.perfetto-trace") == TraceFormat::perfetto);
    CHECK(trace_format_for_path("out.trace") == TraceFormat::ftrace);
    CHECK(trace_format_for_path("out.pftrace.txt") == TraceFormat::ftrace);
    CHECK(trace_format_for_path("pftrace") == TraceFormat::ftrace);
}
