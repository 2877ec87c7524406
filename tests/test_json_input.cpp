// Strict JSON input: units, near-miss suggestions, JSON pointers and one-line error messages.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "input/json_input.h"
#include "topology/cpuset.h"

using namespace wakesim;
using nlohmann::json;

namespace {

template <class F>
InputError input_error_of(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e;
    }
    FAIL("expected an InputError");
    throw std::logic_error("unreachable");
}

template <class F>
std::string invalid_argument_of(F&& f) {
    try {
        f();
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    FAIL("expected std::invalid_argument");
    throw std::logic_error("unreachable");
}

// A file in the temp directory, removed at scope exit.
struct TempFile {
    std::filesystem::path path;
    TempFile(const std::string& name, const std::string& content) {
        path = std::filesystem::temp_directory_path() /
               ("wakesim_json_input_" + std::to_string(::getpid()) + "_" + name);
        std::ofstream(path, std::ios::binary) << content;
    }
    ~TempFile() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

const std::vector<std::string> kPolicies = {"plain", "wf_sync", "prev_first", "idle_scan"};

}  // namespace

// ---- units -----------------------------------------------------------------------------------

TEST_CASE("Durations in every unit parse to integer nanoseconds", "[json_input][units]") {
    CHECK(parse_duration_ns("400ns") == 400);
    CHECK(parse_duration_ns("35us") == 35'000);
    CHECK(parse_duration_ns("35\xC2\xB5s") == 35'000);  // micro sign
    CHECK(parse_duration_ns("35\xCE\xBCs") == 35'000);  // Greek mu
    CHECK(parse_duration_ns("4ms") == 4'000'000);
    CHECK(parse_duration_ns("2s") == 2'000'000'000);
    CHECK(parse_duration_ns("0us") == 0);
    CHECK(parse_duration_ns("35 us") == 35'000);
}

TEST_CASE("Decimal durations round to the nearest nanosecond", "[json_input][units]") {
    CHECK(parse_duration_ns("1.5ms") == 1'500'000);
    CHECK(parse_duration_ns("3.2us") == 3'200);
    CHECK(parse_duration_ns("0.000000001s") == 1);
    CHECK(parse_duration_ns("0.4ns") == 0);
    CHECK(parse_duration_ns("0.5ns") == 1);
    CHECK(parse_duration_ns("1.0000000015s") == 1'000'000'002);
    CHECK(parse_duration_ns("0.1234567891234567891234s") == 123'456'789);
}

TEST_CASE("A duration without a unit is rejected naming the accepted units", "[json_input][units]") {
    CHECK(invalid_argument_of([] { parse_duration_ns("35"); }) ==
          "expected a duration with a unit (ns, us, ms, s), got \"35\"");
    CHECK(invalid_argument_of([] { parse_duration_ns(""); }) ==
          "expected a duration with a unit (ns, us, ms, s), got an empty string");
}

TEST_CASE("Unknown units and trailing junk are rejected", "[json_input][units]") {
    CHECK(invalid_argument_of([] { parse_duration_ns("3sec"); }) ==
          "unknown unit \"sec\" in \"3sec\"; expected a duration with a unit (ns, us, ms, s)");
    CHECK(invalid_argument_of([] { parse_duration_ns("3MS"); }).find("(did you mean \"ms\"?)") !=
          std::string::npos);
    for (const char* bad : {"35us ", " 35us", "3.5.2ms", "1e3us", "35us!", "35u s"})
        CHECK_THROWS_AS(parse_duration_ns(bad), std::invalid_argument);
}

TEST_CASE("Malformed numbers are rejected", "[json_input][units]") {
    for (const char* bad : {"us", ".5ms", "5.ms", "+3us", "-", "--3us", "3,5ms"})
        CHECK_THROWS_AS(parse_duration_ns(bad), std::invalid_argument);
}

TEST_CASE("Negative durations are rejected with a message saying so", "[json_input][units]") {
    CHECK(invalid_argument_of([] { parse_duration_ns("-3us"); }) ==
          "durations must not be negative, got \"-3us\"");
    CHECK(invalid_argument_of([] { parse_frequency_khz("-1GHz"); }).find("must not be negative") !=
          std::string::npos);
    CHECK(invalid_argument_of([] { parse_size_bytes("-4KiB"); }).find("must not be negative") !=
          std::string::npos);
}

TEST_CASE("Durations beyond 1e18 nanoseconds are rejected as too large", "[json_input][units]") {
    CHECK(parse_duration_ns("1000000000s") == 1'000'000'000'000'000'000);
    CHECK(invalid_argument_of([] { parse_duration_ns("1000000001s"); }) ==
          "duration \"1000000001s\" is too large (at most 1000000000s)");
    CHECK_THROWS_AS(parse_duration_ns("99999999999999999999999999999999999999ns"), std::invalid_argument);
}

TEST_CASE("Frequencies accept Hz to GHz with a case-insensitive prefix", "[json_input][units]") {
    CHECK(parse_frequency_khz("3GHz") == 3'000'000);
    CHECK(parse_frequency_khz("2.4GHz") == 2'400'000);
    CHECK(parse_frequency_khz("800MHz") == 800'000);
    CHECK(parse_frequency_khz("800mhz") == 800'000);  // "m" is mega here, never milli
    CHECK(parse_frequency_khz("2400kHz") == 2'400);
    CHECK(parse_frequency_khz("2400KHZ") == 2'400);
    CHECK(parse_frequency_khz("1500Hz") == 2);  // rounds to the nearest kHz
    CHECK(parse_frequency_khz("1499Hz") == 1);
    CHECK_THROWS_AS(parse_frequency_khz("3G"), std::invalid_argument);
    CHECK_THROWS_AS(parse_frequency_khz("3000"), std::invalid_argument);
}

TEST_CASE("Sizes accept binary multiples and whole numbers of bytes only", "[json_input][units]") {
    CHECK(parse_size_bytes("512B") == 512);
    CHECK(parse_size_bytes("4KiB") == 4096);
    CHECK(parse_size_bytes("64K") == 65536);
    CHECK(parse_size_bytes("1MiB") == 1 << 20);
    CHECK(parse_size_bytes("1M") == 1 << 20);
    CHECK(parse_size_bytes("1G") == int64_t{1} << 30);
    CHECK(parse_size_bytes("2GiB") == int64_t{2} << 30);
    CHECK(parse_size_bytes("1.5KiB") == 1536);
    CHECK(invalid_argument_of([] { parse_size_bytes("1.5B"); }) ==
          "size \"1.5B\" is not a whole number of bytes");
    CHECK_THROWS_AS(parse_size_bytes("1KB"), std::invalid_argument);
    CHECK_THROWS_AS(parse_size_bytes("4096"), std::invalid_argument);
}

TEST_CASE("format_duration picks the largest unit and trims trailing zeros", "[json_input][units]") {
    CHECK(format_duration(0) == "0ns");
    CHECK(format_duration(750) == "750ns");
    CHECK(format_duration(3'200) == "3.2us");
    CHECK(format_duration(4'000'000) == "4ms");
    CHECK(format_duration(1'500'000'000) == "1.5s");
    CHECK(format_duration(1'234'567) == "1.234567ms");
    CHECK(format_duration(-2'000) == "-2us");
}

TEST_CASE("format_duration output parses back to the same nanoseconds", "[json_input][units]") {
    for (int64_t ns : {int64_t{1}, int64_t{999}, int64_t{1'001}, int64_t{35'000}, int64_t{1'234'567},
                       int64_t{3'000'000'001}, int64_t{1'000'000'000'000'000'000}})
        CHECK(parse_duration_ns(format_duration(ns)) == ns);
}

// ---- near misses -----------------------------------------------------------------------------

TEST_CASE("Edit distance counts insertions, deletions and substitutions", "[json_input][near_miss]") {
    CHECK(edit_distance("", "") == 0);
    CHECK(edit_distance("abc", "") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("scan_depth", "scan_depth") == 0);
    CHECK(edit_distance("scan_depht", "scan_depth") == 2);
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("plian", "plain") == 2);
}

TEST_CASE("nearest_name suggests a close candidate and nothing for a distant one", "[json_input][near_miss]") {
    CHECK(nearest_name("plian", kPolicies) == "plain");
    CHECK(nearest_name("wf_snyc", kPolicies) == "wf_sync");
    CHECK(nearest_name("idle_scna", kPolicies) == "idle_scan");
    CHECK(nearest_name("round_robin", kPolicies).empty());
    CHECK(nearest_name("xy", {"ab"}).empty());  // a full rewrite is not a near miss
    CHECK(nearest_name("abc", {}).empty());
    // Ties go to the earliest candidate.
    CHECK(nearest_name("cat", {"bat", "cap"}) == "bat");
    // Long names tolerate len/3 edits.
    CHECK(nearest_name("migration_cost_nss", {"migration_cost_ns"}) == "migration_cost_ns");
}

// ---- JsonNode --------------------------------------------------------------------------------

TEST_CASE("An unknown key is reported at its own pointer with the near miss", "[json_input][node]") {
    const json j = json::parse(R"({"policies": [{"params": {"scan_depht": 4}}]})");
    const JsonNode root(j, "s.json");
    const JsonNode params = root.at("policies")[0].at("params");
    const InputError e = input_error_of([&] { params.check_keys({"scan_depth", "threshold"}); });
    CHECK(e.file() == "s.json");
    CHECK(e.pointer() == "/policies/0/params/scan_depht");
    CHECK(e.expected() == "unknown key \"scan_depht\"; did you mean \"scan_depth\"?");
    CHECK(std::string(e.what()) ==
          "s.json: /policies/0/params/scan_depht: unknown key \"scan_depht\"; did you mean \"scan_depth\"?");
}

TEST_CASE("An unknown key with no near miss lists the valid keys", "[json_input][node]") {
    const json j = json::parse(R"({"machine": {}, "zzzzzz": 1})");
    const JsonNode root(j, "s.json");
    const InputError e = input_error_of([&] { root.check_keys(std::vector<std::string>{"machine", "tasks"}); });
    CHECK(e.pointer() == "/zzzzzz");
    CHECK(e.expected() == "unknown key \"zzzzzz\"; expected one of: machine, tasks");
    CHECK_NOTHROW(root.check_keys({"machine", "tasks", "zzzzzz"}));
}

TEST_CASE("A missing required key is reported at the parent object", "[json_input][node]") {
    const json j = json::parse(R"({"tasks": {"a": {}}})");
    const JsonNode root(j, "s.json");
    InputError e = input_error_of([&] { root.at("machine"); });
    CHECK(e.pointer().empty());
    CHECK(e.expected() == "missing required key \"machine\"");
    CHECK(std::string(e.what()) == "s.json: /: missing required key \"machine\"");
    e = input_error_of([&] { root.at("tasks").at("a").at("period"); });
    CHECK(e.pointer() == "/tasks/a");
}

TEST_CASE("Pointers of nested values are built from escaped keys and indices", "[json_input][node]") {
    const json j = json::parse(R"({"a/b": {"c~d": [[1, {"e": true}]]}})");
    const JsonNode root(j, "s.json");
    const JsonNode e = root.at("a/b").at("c~d")[0][1].at("e");
    CHECK(e.pointer() == "/a~1b/c~0d/0/1/e");
    CHECK(root.get("a/b")->pointer() == "/a~1b");
    CHECK_FALSE(root.get("missing").has_value());
    CHECK(json_pointer_escape("~/x") == "~0~1x");
    CHECK(root.keys() == std::vector<std::string>{"a/b"});
    CHECK(root.at("a/b").at("c~d").size() == 1);
    const InputError err = input_error_of([&] { root.at("a/b").at("c~d")[3]; });
    CHECK(err.pointer() == "/a~1b/c~0d");
}

TEST_CASE("Type mismatches name the expected and actual JSON types", "[json_input][node]") {
    const json j = json::parse(R"({"arr": [1], "obj": {}, "s": "x", "n": 3, "f": 2.5, "b": true, "z": null})");
    const JsonNode root(j, "s.json");
    CHECK(input_error_of([&] { root.at("arr").require_object(); }).expected() == "expected an object, got array");
    CHECK(input_error_of([&] { root.at("obj").require_array(); }).expected() == "expected an array, got object");
    CHECK(input_error_of([&] { root.at("n").as_string(); }).expected() == "expected a string, got integer 3");
    CHECK(input_error_of([&] { root.at("f").as_string(); }).expected() == "expected a string, got number 2.5");
    CHECK(input_error_of([&] { root.at("z").as_string(); }).expected() == "expected a string, got null");
    CHECK(input_error_of([&] { root.at("s").as_bool(); }).expected() ==
          "expected a boolean (true or false), got string \"x\"");
    CHECK(input_error_of([&] { root.at("b").at("x"); }).expected() == "expected an object, got boolean");
    CHECK(input_error_of([&] { root.at("arr")[0].keys(); }).pointer() == "/arr/0");
    CHECK(root.at("s").as_string() == "x");
    CHECK(root.at("b").as_bool());
}

TEST_CASE("as_int rejects non-integers, booleans and values out of range", "[json_input][node]") {
    const json j = json::parse(
        R"({"zero": 0, "half": 2.5, "two": 2.0, "t": true, "big": 18446744073709551615, "e19": 1e19, "e17": 1e17, "e3": 1e3})");
    const JsonNode root(j, "s.json");
    CHECK(input_error_of([&] { root.at("zero").as_int(1, 1024); }).expected() ==
          "expected an integer in [1, 1024], got 0");
    CHECK(input_error_of([&] { root.at("half").as_int(1, 1024); }).expected() ==
          "expected an integer in [1, 1024], got 2.5");
    CHECK(input_error_of([&] { root.at("t").as_int(1, 1024); }).expected() ==
          "expected an integer in [1, 1024], got boolean true");
    // Beyond int64: the message names the upper end it missed, though the range has none of its own.
    CHECK(input_error_of([&] { root.at("big").as_int(0, INT64_MAX); }).expected() ==
          "expected an integer in [0, 9223372036854775807], got 18446744073709551615");
    CHECK(input_error_of([&] { root.at("e19").as_int(0, INT64_MAX); }).expected() ==
          "expected an integer in [0, 9223372036854775807], got 1e+19");
    CHECK(input_error_of([&] { root.at("e19").as_int(INT64_MIN, INT64_MAX); }).expected() ==
          "expected an integer <= 9223372036854775807, got 1e+19");
    // In int64's range but above 2^53, a float is not exact: it must be written in digits.
    CHECK(input_error_of([&] { root.at("e17").as_int(0, INT64_MAX); }).expected() ==
          "expected an integer >= 0 in digits (with an exponent a number is exact only up to 2^53), got 1e+17");
    CHECK(input_error_of([&] { root.at("e17").as_int(1, 1024); }).expected() == "expected an integer in [1, 1024], got 1e+17");
    CHECK(root.at("e3").as_int(1, 1024) == 1000);
    CHECK(root.at("two").as_int(1, 1024) == 2);
    CHECK(root.at("zero").as_int(0, 0) == 0);
}

TEST_CASE("as_double checks the type and the range", "[json_input][node]") {
    const json j = json::parse(R"({"p": 0.25, "i": 1, "big": 1.5, "s": "0.5"})");
    const JsonNode root(j, "s.json");
    CHECK(root.at("p").as_double(0.0, 1.0) == 0.25);
    CHECK(root.at("i").as_double(0.0, 1.0) == 1.0);
    CHECK(input_error_of([&] { root.at("big").as_double(0.0, 1.0); }).expected() ==
          "expected a number in [0, 1], got 1.5");
    CHECK(input_error_of([&] { root.at("s").as_double(0.0, 1.0); }).expected() ==
          "expected a number in [0, 1], got string \"0.5\"");
}

TEST_CASE("as_duration_ns needs a string with a unit inside the range", "[json_input][node]") {
    const json j = json::parse(R"({"ok": "35us", "bare": "35", "num": 35, "long": "20ms", "neg": "-3us"})");
    const JsonNode root(j, "s.json");
    CHECK(root.at("ok").as_duration_ns(1'000, 10'000'000) == 35'000);
    InputError e = input_error_of([&] { root.at("bare").as_duration_ns(0, INT64_MAX); });
    CHECK(e.pointer() == "/bare");
    CHECK(e.expected() == "expected a duration with a unit (ns, us, ms, s), got \"35\"");
    CHECK(input_error_of([&] { root.at("num").as_duration_ns(0, INT64_MAX); }).expected() ==
          "expected a duration with a unit (ns, us, ms, s), got integer 35");
    CHECK(input_error_of([&] { root.at("long").as_duration_ns(1'000, 10'000'000); }).expected() ==
          "expected a duration in [1us, 10ms], got \"20ms\"");
    CHECK(input_error_of([&] { root.at("neg").as_duration_ns(0, INT64_MAX); }).expected() ==
          "durations must not be negative, got \"-3us\"");
}

TEST_CASE("Frequency and size members check their units and ranges", "[json_input][node]") {
    const json j = json::parse(
        R"({"f": "3GHz", "fbad": 3000, "b": 4096, "bs": "64KiB", "bneg": -1, "bf": 1.5, "bbig": "2GiB"})");
    const JsonNode root(j, "s.json");
    CHECK(root.at("f").as_frequency_khz(100'000, 10'000'000) == 3'000'000);
    CHECK(input_error_of([&] { root.at("f").as_frequency_khz(100'000, 2'000'000); }).expected() ==
          "expected a frequency in [100MHz, 2GHz], got \"3GHz\"");
    CHECK(input_error_of([&] { root.at("fbad").as_frequency_khz(1, INT64_MAX); }).expected() ==
          "expected a frequency with a unit (Hz, kHz, MHz, GHz), got integer 3000");
    CHECK(root.at("b").as_size_bytes(1, INT64_MAX) == 4096);
    CHECK(root.at("bs").as_size_bytes(1, INT64_MAX) == 65536);
    CHECK(input_error_of([&] { root.at("bneg").as_size_bytes(0, INT64_MAX); }).expected() ==
          "sizes must not be negative, got -1");
    CHECK_THROWS_AS(root.at("bf").as_size_bytes(0, INT64_MAX), InputError);
    CHECK(input_error_of([&] { root.at("bbig").as_size_bytes(1, int64_t{1} << 30); }).expected() ==
          "expected a size in [1B, 1GiB], got \"2GiB\"");
}

TEST_CASE("as_enum lists the choices and suggests the nearest one", "[json_input][node]") {
    const json j = json::parse(R"({"ok": "wf_sync", "typo": "plian", "far": "round_robin", "n": 1})");
    const JsonNode root(j, "s.json");
    CHECK(root.at("ok").as_enum(kPolicies) == "wf_sync");
    CHECK(input_error_of([&] { root.at("typo").as_enum(kPolicies); }).expected() ==
          "expected one of: plain, wf_sync, prev_first, idle_scan; got \"plian\" (did you mean \"plain\"?)");
    CHECK(input_error_of([&] { root.at("far").as_enum(kPolicies); }).expected() ==
          "expected one of: plain, wf_sync, prev_first, idle_scan; got \"round_robin\"");
    CHECK(input_error_of([&] { root.at("n").as_enum(kPolicies); }).expected() ==
          "expected one of: plain, wf_sync, prev_first, idle_scan; got integer 1");
}

TEST_CASE("Optional members fall back to defaults and are checked when present", "[json_input][node]") {
    const json j = json::parse(R"({"name": "x", "on": false, "n": 7, "p": 0.5, "d": "2ms", "bad": 0})");
    const JsonNode root(j, "s.json");
    CHECK(root.string_or("name", "def") == "x");
    CHECK(root.string_or("nope", "def") == "def");
    CHECK_FALSE(root.bool_or("on", true));
    CHECK(root.bool_or("nope", true));
    CHECK(root.int_or("n", 1, 0, 10) == 7);
    CHECK(root.int_or("nope", 1, 0, 10) == 1);
    CHECK(root.double_or("p", 0.1, 0.0, 1.0) == 0.5);
    CHECK(root.double_or("nope", 0.1, 0.0, 1.0) == 0.1);
    CHECK(root.duration_or("d", 5, 0, INT64_MAX) == 2'000'000);
    CHECK(root.duration_or("nope", 5, 0, INT64_MAX) == 5);
    CHECK(input_error_of([&] { root.int_or("bad", 1, 1, 10); }).pointer() == "/bad");
    CHECK(root.has("name"));
    CHECK_FALSE(root.has("nope"));
}

// ---- files -----------------------------------------------------------------------------------

TEST_CASE("A missing file is reported with the system's reason", "[json_input][file]") {
    const std::string path = "/nonexistent/wakesim/scenario.json";
    const InputError e = input_error_of([&] { load_json_file(path); });
    CHECK(e.file() == path);
    CHECK(e.pointer().empty());
    CHECK(e.expected() == "cannot read file: No such file or directory");
}

TEST_CASE("Malformed JSON is reported with its line and column, and the pointer of the value it is in", "[json_input][file]") {
    const TempFile f("trailing_comma.json", "{\n  \"a\": 1,\n  \"b\": [1, 2,]\n}\n");
    const InputError e = input_error_of([&] { load_json_file(f.path.string()); });
    CHECK(e.file() == f.path.string());
    CHECK(e.pointer() == "/b/2");  // the third element of b, missing
    CHECK(e.expected().rfind("malformed JSON at line 3, column 14: ", 0) == 0);
    CHECK(e.expected().find("unexpected ']'") != std::string::npos);
    CHECK(e.expected().find('\n') == std::string::npos);

    const TempFile g("truncated.json", "[1, 2");
    CHECK(input_error_of([&] { load_json_file(g.path.string()); }).expected() ==
          "malformed JSON at line 1, column 6: unexpected end of input; expected ']'");
    CHECK(input_error_of([&] { load_json_file(g.path.string()); }).pointer() == "/2");
    // Inside a member's value; between members (the object itself); not JSON at all (the root).
    const TempFile h("nested.json", "{\"run\": {\"seeds\": tru}}");
    CHECK(input_error_of([&] { load_json_file(h.path.string()); }).pointer() == "/run/seeds");
    const TempFile k("missing_comma.json", "{\"run\": {\"seeds\": [1] \"duration\": \"1s\"}}");
    CHECK(input_error_of([&] { load_json_file(k.path.string()); }).pointer() == "/run");
    const TempFile t("trace.txt", "# tracer: nop\n");
    CHECK(input_error_of([&] { load_json_file(t.path.string()); }).pointer().empty());
}

TEST_CASE("An empty file and duplicate keys are rejected", "[json_input][file]") {
    const TempFile empty("empty.json", " \n");
    CHECK(input_error_of([&] { load_json_file(empty.path.string()); }).expected() ==
          "file is empty; expected a JSON document");

    const TempFile dup("dup.json", R"({"tasks": [{"name": "a"}, {"name": "b", "name": "c"}]})");
    const InputError e = input_error_of([&] { load_json_file(dup.path.string()); });
    CHECK(e.pointer() == "/tasks/1/name");
    CHECK(e.expected() == "duplicate key \"name\"");

    const TempFile ok("ok.json", R"({"a": {"x": 1}, "b": {"x": 2}, "c": [[1], {"x": 3}]})");
    CHECK(load_json_file(ok.path.string())["c"][1]["x"] == 3);
}

// ---- CPU lists -------------------------------------------------------------------------------

TEST_CASE("CPU lists expand ranges into ascending unique ids", "[json_input][cpulist]") {
    CHECK(parse_cpu_list("0-3,8,10-11") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
    CHECK(parse_cpu_list("5") == std::vector<int>{5});
    CHECK(parse_cpu_list("8,0-2,1") == std::vector<int>{0, 1, 2, 8});
    CHECK(parse_cpu_list("0-1023").size() == 1024);
    CHECK(parse_cpu_list("0-1\n") == std::vector<int>{0, 1});  // as read from sysfs
    // Strides, as taskset -c reads them: every n-th CPU of the range from its first.
    CHECK(parse_cpu_list("0-7:2") == std::vector<int>{0, 2, 4, 6});
    CHECK(parse_cpu_list("1-15:4,0") == std::vector<int>{0, 1, 5, 9, 13});
    CHECK(parse_cpu_list("0-3:1") == std::vector<int>{0, 1, 2, 3});
    CHECK(parse_cpu_list("2-2:5") == std::vector<int>{2});
}

TEST_CASE("CPU lists reject junk, reversed ranges, negative and too large ids", "[json_input][cpulist]") {
    for (const char* bad : {"", "a", "0-", "-", ",1", "1,", "1,,2", "3:2", "0-3:", "0-3:0", "0-3:2:2", "1 2", "0x1", "1-2-3"})
        CHECK_THROWS_AS(parse_cpu_list(bad), std::invalid_argument);
    CHECK(invalid_argument_of([] { parse_cpu_list("3-1"); }) == "reversed range 3-1 in CPU list \"3-1\"");
    CHECK(invalid_argument_of([] { parse_cpu_list("-1"); }) == "CPU ids must not be negative, got \"-1\"");
    CHECK(invalid_argument_of([] { parse_cpu_list("0,1024"); }) ==
          "CPU id 1024 is out of range [0, 1023] in \"0,1024\"");
    CHECK(invalid_argument_of([] { parse_cpu_list("0-7:0"); }) ==
          "expected a stride in [1, 1023] after ':' (\"0-7:2\" is 0,2,4,6) in CPU list \"0-7:0\"");
}

// ---- one-line messages -----------------------------------------------------------------------

TEST_CASE("Messages stay on one line and long values are cut", "[json_input][messages]") {
    const json j = {{"bad\nkey", 1}, {"v", std::string(200, 'x') + "\n"}};
    const JsonNode root(j, "s.json");
    const InputError e = input_error_of([&] { root.check_keys({"v"}); });
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
    CHECK(e.expected().find("\"bad\\nkey\"") != std::string::npos);

    const InputError v = input_error_of([&] { root.at("v").as_duration_ns(0, INT64_MAX); });
    CHECK(std::string(v.what()).find('\n') == std::string::npos);
    CHECK(v.expected().size() < 120);
    CHECK(v.expected().find("...") != std::string::npos);
}
