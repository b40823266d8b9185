// SPDX-License-Identifier: BSL-1.0
#include "core/config.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

using namespace vkshmem;

namespace {
std::map<std::string, std::string> g_env;
const char* lookup(const char* n) {
    auto it = g_env.find(n);
    return it == g_env.end() ? nullptr : it->second.c_str();
}
} // namespace

TEST_CASE("sizes take k/m/g/t suffixes in either case") {
    CHECK(parse_size("0") == 0u);
    CHECK(parse_size("123") == 123u);
    CHECK(parse_size("4k") == 4096u);
    CHECK(parse_size("4K") == 4096u);
    CHECK(parse_size("512M") == 512ull << 20);
    CHECK(parse_size("512mb") == 512ull << 20);
    CHECK(parse_size("2g") == 2ull << 30);
    CHECK(parse_size("1T") == 1ull << 40);
    CHECK(parse_size(" 64m ") == 64ull << 20);
    CHECK(parse_size("100b") == 100u);
}

TEST_CASE("malformed sizes are rejected") {
    for (const char* bad : {"", "m", "12q", "1.5g", "-1", "1gg", "1kx", "99999999999999999999", "20000000t"})
        CHECK_FALSE(parse_size(bad).has_value());
}

TEST_CASE("booleans and integers") {
    CHECK(parse_bool("1") == true);
    CHECK(parse_bool("YES") == true);
    CHECK(parse_bool("off") == false);
    CHECK_FALSE(parse_bool("2").has_value());
    CHECK(parse_int("-5") == -5);
    CHECK_FALSE(parse_int("5x").has_value());
}

TEST_CASE("defaults, environment values and SMA_ spellings") {
    g_env = {};
    Config c;
    REQUIRE_FALSE(load_config(c, lookup));
    CHECK(c.SHMEM_SYMMETRIC_SIZE == 512ull << 20);
    CHECK(c.VKSHMEM_DEVICE_HEAP_SIZE == 256ull << 20);
    CHECK(c.VKSHMEM_DEBUG == DebugLevel::Warn);
    g_env = {{"SHMEM_SYMMETRIC_SIZE", "1g"}, {"VKSHMEM_ERROR_CHECKS", "1"}, {"SHMEM_DEBUG", "1"}};
    REQUIRE_FALSE(load_config(c, lookup));
    CHECK(c.SHMEM_SYMMETRIC_SIZE == 1ull << 30);
    CHECK(c.VKSHMEM_ERROR_CHECKS);
    CHECK(c.VKSHMEM_DEBUG == DebugLevel::Debug);
    g_env = {{"SMA_SYMMETRIC_SIZE", "3m"}};
    REQUIRE_FALSE(load_config(c, lookup));
    CHECK(c.SHMEM_SYMMETRIC_SIZE == 3ull << 20);
}

TEST_CASE("a malformed value names the variable and leaves the config as it was") {
    g_env = {{"SHMEM_SYMMETRIC_SIZE", "64m"}};
    Config c;
    REQUIRE_FALSE(load_config(c, lookup));
    g_env = {{"SHMEM_SYMMETRIC_SIZE", "12q"}};
    auto err = load_config(c, lookup);
    REQUIRE(err);
    CHECK(err->variable == "SHMEM_SYMMETRIC_SIZE");
    CHECK(err->message.find("12q") != std::string::npos);
    CHECK(c.SHMEM_SYMMETRIC_SIZE == 64ull << 20);
}

TEST_CASE("unknown VKSHMEM_ variables get the nearest valid name") {
    auto u = unknown_variables({"VKSHMEM_DEVICE_HEAP_SIZ", "VKSHMEM_EROR_CHECKS", "VKSHMEM_DEVICE", "PATH",
                                "SHMEM_FOO", "VKSHMEM_MPIRUN"});
    REQUIRE(u.size() == 2);
    CHECK(u[0].name == "VKSHMEM_DEVICE_HEAP_SIZ");
    CHECK(u[0].suggestion == "VKSHMEM_DEVICE_HEAP_SIZE");
    CHECK(u[1].suggestion == "VKSHMEM_ERROR_CHECKS");
}

TEST_CASE("every table row has a parseable default and shows up in the references") {
    Config c;
    g_env = {};
    REQUIRE_FALSE(load_config(c, lookup));
    std::string md = env_reference(true, nullptr), text = env_reference(false, &c);
    for (const auto& d : env_table()) {
        INFO(d.name);
        CHECK(md.find(std::string("`") + d.name + "`") != std::string::npos);
        CHECK(text.find(d.name) != std::string::npos);
        CHECK(std::string(d.doc).size() > 10);
    }
}

TEST_CASE("enumerated variables take only their table's values, in any case") {
    Config c;
    g_env = {};
    REQUIRE_FALSE(load_config(c, lookup));
    CHECK(c.VKSHMEM_NETWORK == Network::Auto);
    CHECK(c.VKSHMEM_BARRIER_ALGORITHM == BarrierAlgorithm::Dissemination);
    CHECK(c.VKSHMEM_REDUCE_ALGORITHM == ReduceAlgorithm::Auto);
    g_env = {{"VKSHMEM_NETWORK", "OFI"}, {"VKSHMEM_DEVICE_ROUTE", " copy "}, {"VKSHMEM_DEBUG", "Trace"}};
    REQUIRE_FALSE(load_config(c, lookup));
    CHECK(c.VKSHMEM_NETWORK == Network::Ofi);
    CHECK(c.VKSHMEM_DEVICE_ROUTE == DeviceRoute::Copy);
    CHECK(c.VKSHMEM_DEBUG == DebugLevel::Trace);
    CHECK(to_text(c.VKSHMEM_NETWORK) == "ofi");
    CHECK(to_text(HostAmoRoute::Proxy) == "proxy");

    // Each enumerated variable: every listed value parses back to itself; anything else fails,
    // naming the value and the list, and leaves the config as it was.
    for (const auto& d : env_table()) {
        if (d.type != EnvType::Enum) continue;
        INFO(d.name);
        REQUIRE(d.choices.size() >= 2);
        CHECK(std::find(d.choices.begin(), d.choices.end(), d.default_text) != d.choices.end());
        for (const auto& v : d.choices) {
            g_env = {{d.name, v}};
            REQUIRE_FALSE(load_config(c, lookup));
            CHECK(value_text(c, d) == v);
        }
        g_env = {{d.name, "bogus"}};
        auto err = load_config(c, lookup);
        REQUIRE(err);
        CHECK(err->variable == d.name);
        CHECK(err->message == "malformed value 'bogus': expected " + env_choices_text(d));
        CHECK(value_text(c, d) == d.choices.back()); // unchanged
    }
    const EnvDesc* net = nullptr;
    for (const auto& d : env_table())
        if (std::string_view(d.name) == "VKSHMEM_NETWORK") net = &d;
    REQUIRE(net);
    CHECK(env_choices_text(*net) == "auto, ucx, ofi or none");
    CHECK(env_reference(true, nullptr).find("| `VKSHMEM_NETWORK` | one of `auto`, `ucx`, `ofi`, `none` | `auto` |") !=
          std::string::npos);
    CHECK(env_reference(false, nullptr).find("values: auto, ucx, ofi or none") != std::string::npos);
}
