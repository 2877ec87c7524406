// Typed parameters (input/params.h): declared defaults, values as written, every type's errors at
// the value's JSON pointer, unknown keys with the near miss, and misuse as a programming error.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "input/params.h"

using namespace wakesim;
using nlohmann::json;

namespace {

const ParamTable& table() {
    static const ParamTable t = {
        {.name = "loops", .type = ParamType::integer, .default_value = "8", .min = 1, .max = 64, .help = "rounds"},
        {.name = "ratio", .type = ParamType::real, .default_value = "0.5", .min = 0, .max = 1, .help = "a share"},
        {.name = "poll", .type = ParamType::boolean, .default_value = "true", .help = "poll first"},
        {.name = "window", .type = ParamType::duration, .default_value = "40ms", .min = 1000, .max = 3600e9,
         .help = "how long"},
        {.name = "clock", .type = ParamType::frequency, .default_value = "2.4GHz", .help = "the clock"},
        {.name = "buffer", .type = ParamType::size, .default_value = "4KiB", .min = 0, .max = 1 << 20,
         .help = "bytes"},
        {.name = "bytes", .type = ParamType::size, .default_value = "100", .help = "a plain number of bytes"},
        {.name = "variant", .type = ParamType::choice, .default_value = "two_bits",
         .choices = {"one_bit", "two_bits", "pair_id"}, .help = "which"},
        {.name = "label", .type = ParamType::text, .default_value = "x", .help = "a label"},
        {.name = "cpus", .type = ParamType::cpulist, .help = "allowed CPUs", .absent_means = "all CPUs"},
    };
    return t;
}

const ParamTable& with_required() {
    static const ParamTable t = {
        {.name = "count", .type = ParamType::integer, .min = 1, .max = 4096, .help = "how many"},
        {.name = "nice", .type = ParamType::integer, .default_value = "0", .min = -20, .max = 19, .help = "nice"},
    };
    return t;
}

ParamValues read(const std::string& text, const ParamTable& t = table(), const std::vector<std::string>& other = {}) {
    static json j;  // JsonNode keeps a pointer to it
    j = json::parse(text);
    return read_params(JsonNode(j, "s.json", "/w"), t, other);
}

InputError error_of(const std::string& text, const ParamTable& t = table()) {
    try {
        read(text, t);
    } catch (const InputError& e) {
        return e;
    }
    FAIL("expected an InputError for " << text);
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("params: declared defaults, read back typed and as written", "[params]") {
    for (const ParamValues& v : {default_params(table()), read("{}")}) {
        CHECK(v.integer("loops") == 8);
        CHECK(v.real("ratio") == 0.5);
        CHECK(v.boolean("poll"));
        CHECK(v.duration_ns("window") == 40'000'000);
        CHECK(v.frequency_khz("clock") == 2'400'000);
        CHECK(v.size_bytes("buffer") == 4096);
        CHECK(v.size_bytes("bytes") == 100);
        CHECK(v.choice("variant") == "two_bits");
        CHECK(v.text("label") == "x");
        CHECK(v.cpulist("cpus").empty());  // optional, left out
        CHECK(v.written("window") == "40ms");
        CHECK(v.written("bytes") == "100");
        CHECK(v.written("cpus").empty());
        for (const ParamSpec& s : table()) CHECK_FALSE(v.given(s.name));
        CHECK(&v.table() == &table());
    }
}

TEST_CASE("params: given values, and what the user wrote", "[params]") {
    const ParamValues v = read(R"({"loops": 64, "ratio": 1, "poll": false, "window": "1.5ms", "clock": "800MHz",
                                  "buffer": 512, "variant": "pair_id", "label": "a b", "cpus": "0-3,8"})");
    CHECK(v.integer("loops") == 64);
    CHECK(v.real("ratio") == 1.0);
    CHECK_FALSE(v.boolean("poll"));
    CHECK(v.duration_ns("window") == 1'500'000);
    CHECK(v.frequency_khz("clock") == 800'000);
    CHECK(v.size_bytes("buffer") == 512);
    CHECK(v.choice("variant") == "pair_id");
    CHECK(v.text("label") == "a b");
    CHECK(v.cpulist("cpus") == "0-3,8");
    CHECK(v.written("window") == "1.5ms");
    CHECK(v.written("clock") == "800MHz");
    CHECK(v.written("buffer") == "512");
    CHECK(v.written("poll") == "false");
    CHECK(v.written("cpus") == "0-3,8");
    CHECK(v.given("loops"));
    CHECK(v.given("cpus"));
    CHECK_FALSE(v.given("bytes"));
    CHECK(v.size_bytes("bytes") == 100);
}

TEST_CASE("params: each type's errors name the value's pointer", "[params]") {
    struct Bad {
        const char* json;
        const char* pointer;
        const char* expected;
    };
    const Bad cases[] = {
        {R"({"loops": "8"})", "/w/loops", "expected an integer in [1, 64], got string \"8\""},
        {R"({"loops": 2.5})", "/w/loops", "expected an integer in [1, 64], got 2.5"},
        {R"({"ratio": "half"})", "/w/ratio", "expected a number in [0, 1], got string \"half\""},
        {R"({"poll": 1})", "/w/poll", "expected a boolean (true or false), got integer 1"},
        {R"({"window": 40})", "/w/window", "expected a duration with a unit (ns, us, ms, s), got integer 40"},
        {R"({"window": "40 parsecs"})", "/w/window", "unknown unit \"parsecs\" in \"40 parsecs\"; expected a duration with a unit (ns, us, ms, s)"},
        {R"({"clock": "3G"})", "/w/clock", "unknown unit \"G\" in \"3G\"; expected a frequency with a unit (Hz, kHz, MHz, GHz)"},
        {R"({"buffer": -1})", "/w/buffer", "sizes must not be negative, got -1"},
        {R"({"buffer": "1KB"})", "/w/buffer", "unknown unit \"KB\" in \"1KB\"; expected a size with a unit (B, KiB or K, MiB or M, GiB or G) (decimal units are "
                                                 "ambiguous; did you mean \"KiB\"?)"},
        {R"({"variant": "two_bit"})", "/w/variant", "expected one of: one_bit, two_bits, pair_id; got \"two_bit\" (did you mean \"two_bits\"?)"},
        {R"({"variant": 2})", "/w/variant", "expected one of: one_bit, two_bits, pair_id; got integer 2"},
        {R"({"label": ""})", "/w/label", "expected a non-empty string"},
        {R"({"cpus": 3})", "/w/cpus", "expected a CPU list: a string such as \"0-3,8\" or an array of CPU ids such as [0, 1, 2]; got number \"3\""},
        {R"({"cpus": []})", "/w/cpus", "expected a non-empty array of CPU ids such as [0, 1, 2]"},
        {R"({"cpus": [0, "1"]})", "/w/cpus/1", "expected an integer in [0, 1023], got string \"1\""},
    };
    for (const Bad& b : cases) {
        INFO(b.json);
        const InputError e = error_of(b.json);
        CHECK(e.file() == "s.json");
        CHECK(e.pointer() == b.pointer);
        CHECK(e.expected() == b.expected);
    }
}

TEST_CASE("params: values outside the declared range", "[params]") {
    CHECK(error_of(R"({"loops": 0})").expected() == "expected an integer in [1, 64], got 0");
    CHECK(error_of(R"({"loops": 65})").expected() == "expected an integer in [1, 64], got 65");
    CHECK(error_of(R"({"ratio": 1.5})").expected() == "expected a number in [0, 1], got 1.5");
    CHECK(error_of(R"({"window": "500ns"})").expected() == "expected a duration in [1us, 3600s], got \"500ns\"");
    CHECK(error_of(R"({"buffer": "2MiB"})").expected() == "expected a size in [0B, 1MiB], got \"2MiB\"");
    CHECK(error_of(R"({"count": 5000})", with_required()).expected() == "expected an integer in [1, 4096], got 5000");
    CHECK(error_of(R"({"count": 1, "nice": -21})", with_required()).pointer() == "/w/nice");
}

TEST_CASE("params: unknown keys get the near miss, the caller's own keys pass", "[params]") {
    const InputError e = error_of(R"({"loop": 3})");
    CHECK(e.pointer() == "/w/loop");
    CHECK(e.expected() == "unknown key \"loop\"; did you mean \"loops\"?");
    CHECK(error_of(R"({"zzzz": 1})", with_required()).expected() ==
          "unknown key \"zzzz\"; expected one of: count, nice");
    const ParamValues v = read(R"({"kind": "pipe", "loops": 2})", table(), {"kind"});
    CHECK(v.integer("loops") == 2);
    CHECK_THROWS_AS(read(R"({"kind": "pipe"})"), InputError);
    CHECK(error_of("[1]").expected() == "expected an object, got array");
}

TEST_CASE("params: a required parameter must be given", "[params]") {
    const InputError e = error_of(R"({"nice": 3})", with_required());
    CHECK(e.pointer() == "/w");
    CHECK(e.expected() == "missing required key \"count\"");
    const ParamValues v = read(R"({"count": 3})", with_required());
    CHECK(v.integer("count") == 3);
    CHECK(v.integer("nice") == 0);
    CHECK(with_required()[0].required());
    CHECK_FALSE(with_required()[1].required());
    CHECK_FALSE(table().back().required());  // optional: absent_means
}

TEST_CASE("params: reading an undeclared name or with the wrong type is a logic_error", "[params]") {
    const ParamValues v = default_params(table());
    CHECK_THROWS_AS(v.integer("window"), std::logic_error);   // a duration
    CHECK_THROWS_AS(v.duration_ns("loops"), std::logic_error);
    CHECK_THROWS_AS(v.text("variant"), std::logic_error);     // a choice
    CHECK_THROWS_AS(v.choice("cpus"), std::logic_error);      // a cpulist
    CHECK_THROWS_AS(v.cpulist("label"), std::logic_error);
    CHECK_THROWS_AS(v.integer("lops"), std::logic_error);
    CHECK_THROWS_AS(v.written("lops"), std::logic_error);
    CHECK_THROWS_AS(v.given("lops"), std::logic_error);
    // Declaration mistakes: no default where one is needed, or a default and an absence both.
    CHECK_THROWS_AS(default_params(with_required()), std::logic_error);
    static const ParamTable both = {{.name = "cpus", .type = ParamType::cpulist, .default_value = "0",
                                     .help = "h", .absent_means = "all CPUs"}};
    CHECK_THROWS_AS(default_params(both), std::logic_error);
    static const json empty = json::object();
    CHECK_THROWS_AS(read_params(JsonNode(empty, "s.json"), both), std::logic_error);
}

TEST_CASE("params: names, type, unit and range text, and the Markdown table", "[params]") {
    CHECK(param_names(with_required()) == std::vector<std::string>{"count", "nice"});
    const ParamTable& t = table();
    CHECK(t[0].type_text() == "integer");
    CHECK(t[0].range_text() == "[1, 64]");
    CHECK(t[1].range_text() == "[0, 1]");
    CHECK(t[3].type_text() == "duration");
    CHECK(t[3].unit() == "ns");
    CHECK(t[3].range_text() == "[1us, 3600s]");
    CHECK(t[4].unit() == "kHz");
    CHECK(t[4].range_text().empty());
    CHECK(t[5].unit() == "bytes");
    CHECK(t[5].range_text() == "[0B, 1MiB]");
    CHECK(t[7].type_text() == "one of: one_bit, two_bits, pair_id");
    CHECK(t[9].type_text() == "CPU list");
    CHECK(params_markdown(with_required()) ==
          "| parameter | type | default | range | meaning |\n"
          "|---|---|---|---|---|\n"
          "| `count` | integer | required | [1, 4096] | how many |\n"
          "| `nice` | integer | `0` | [-20, 19] | nice |\n");
    CHECK(params_markdown_rows(ParamTable{t[9]}) == "| `cpus` | CPU list | all CPUs |  | allowed CPUs |\n");
    CHECK(params_markdown(t) == params_markdown_header() + params_markdown_rows(t));
}
