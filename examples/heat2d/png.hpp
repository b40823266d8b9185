// SPDX-License-Identifier: BSL-1.0
// A minimal PNG writer (8-bit RGB, stored deflate blocks: no compression
// library needed) with a blue-to-red colour map. Shared by the examples
// (cg includes it from here).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

std::uint32_t crc32(const std::uint8_t* p, std::size_t n, std::uint32_t c = 0xffffffffu) {
    for (std::size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return c;
}

void put32(std::vector<std::uint8_t>& v, std::uint32_t x) {
    for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<std::uint8_t>(x >> s));
}

void chunk(std::FILE* f, const char* type, const std::vector<std::uint8_t>& data) {
    std::vector<std::uint8_t> c;
    put32(c, static_cast<std::uint32_t>(data.size()));
    c.insert(c.end(), type, type + 4);
    c.insert(c.end(), data.begin(), data.end());
    std::uint32_t crc = crc32(c.data() + 4, c.size() - 4) ^ 0xffffffffu;
    put32(c, crc);
    std::fwrite(c.data(), 1, c.size(), f);
}

// value in [lo, hi] -> blue .. cyan .. yellow .. red
void colour(float v, float lo, float hi, std::uint8_t* rgb) {
    float t = std::clamp((v - lo) / (hi - lo), 0.0f, 1.0f);
    float r = std::clamp(2.0f * t - 0.5f, 0.0f, 1.0f), g = std::clamp(1.5f - std::abs(4.0f * t - 2.0f), 0.0f, 1.0f),
          b = std::clamp(1.5f - 2.0f * t, 0.0f, 1.0f);
    rgb[0] = static_cast<std::uint8_t>(255 * r);
    rgb[1] = static_cast<std::uint8_t>(255 * g);
    rgb[2] = static_cast<std::uint8_t>(255 * b);
}

// 8-bit RGB pixels (3 * w * h bytes, top row first) as a PNG file.
bool write_png_rgb(const std::string& path, const std::vector<std::uint8_t>& rgb, std::uint32_t w, std::uint32_t h) {
    std::vector<std::uint8_t> raw; // filter byte 0, then RGB per row
    raw.reserve(std::size_t(h) * (1 + 3 * std::size_t(w)));
    for (std::uint32_t y = 0; y < h; ++y) {
        raw.push_back(0);
        const auto row = rgb.begin() + static_cast<long>(std::size_t(y) * 3 * w);
        raw.insert(raw.end(), row, row + static_cast<long>(3 * std::size_t(w)));
    }
    std::vector<std::uint8_t> z = {0x78, 0x01}; // zlib header, no compression
    std::uint32_t a = 1, b = 0;
    for (std::uint8_t c : raw) a = (a + c) % 65521, b = (b + a) % 65521;
    for (std::size_t off = 0; off < raw.size() || off == 0;) {
        std::size_t n = std::min<std::size_t>(65535, raw.size() - off);
        z.push_back(off + n >= raw.size() ? 1 : 0); // BFINAL, stored
        z.push_back(static_cast<std::uint8_t>(n));
        z.push_back(static_cast<std::uint8_t>(n >> 8));
        z.push_back(static_cast<std::uint8_t>(~n));
        z.push_back(static_cast<std::uint8_t>(~n >> 8));
        z.insert(z.end(), raw.begin() + static_cast<long>(off), raw.begin() + static_cast<long>(off + n));
        off += n;
        if (n == 0) break;
    }
    put32(z, (b << 16) | a);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    static const std::uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    std::fwrite(sig, 1, 8, f);
    std::vector<std::uint8_t> ihdr;
    put32(ihdr, w);
    put32(ihdr, h);
    ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0}); // 8-bit RGB
    chunk(f, "IHDR", ihdr);
    chunk(f, "IDAT", z);
    chunk(f, "IEND", {});
    return std::fclose(f) == 0;
}

// grid (w x h values, top row first) through the colour map over [lo, hi].
bool write_png(const std::string& path, const std::vector<float>& grid, std::uint32_t w, std::uint32_t h, float lo,
               float hi) {
    std::vector<std::uint8_t> rgb(3 * std::size_t(w) * h);
    for (std::size_t i = 0; i < std::size_t(w) * h; ++i) colour(grid[i], lo, hi, &rgb[3 * i]);
    return write_png_rgb(path, rgb, w, h);
}

} // namespace
