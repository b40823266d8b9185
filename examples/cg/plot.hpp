// SPDX-License-Identifier: BSL-1.0
// cg's pictures: the solution through heat2d's colour map, and the residual histories as a line
// plot (no font: the program prints the axes' ranges instead).
#pragma once

#include "../heat2d/png.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace cg_plot {

// The solution (nx x ny, top row first) over [0, max], at 256 to 1024 pixels on its longer side:
// small grids enlarged by a whole factor (each point a square of pixels), large ones sampled
// every few points (the file is stored uncompressed).
inline bool write_solution(const std::string& path, const std::vector<double>& u, std::uint32_t nx, std::uint32_t ny) {
    const std::uint32_t longer = std::max(nx, ny);
    const std::uint32_t up = std::max<std::uint32_t>(1, 256 / longer), down = (longer + 1023) / 1024;
    const std::uint32_t w = (nx * up + down - 1) / down, h = (ny * up + down - 1) / down;
    double hi = 0.0;
    for (double v : u) hi = std::max(hi, v);
    std::vector<float> img(std::size_t(w) * h);
    for (std::uint32_t y = 0; y < h; ++y)
        for (std::uint32_t x = 0; x < w; ++x)
            img[std::size_t(y) * w + x] = static_cast<float>(u[std::size_t(y * down / up) * nx + x * down / up]);
    return write_png(path, img, w, h, 0.0f, static_cast<float>(hi > 0.0 ? hi : 1.0));
}

struct Rgb {
    std::uint8_t r, g, b;
};

// A white RGB image to draw on.
class Canvas {
public:
    Canvas(std::uint32_t w, std::uint32_t h) : w_(w), h_(h), rgb_(3 * std::size_t(w) * h, 255) {}
    // A square of side 2 * radius + 1 centred on (x, y), clipped to the image.
    void dot(long x, long y, Rgb c, int radius) {
        for (long dy = -radius; dy <= radius; ++dy)
            for (long dx = -radius; dx <= radius; ++dx) {
                const long px = x + dx, py = y + dy;
                if (px < 0 || py < 0 || px >= long(w_) || py >= long(h_)) continue;
                std::uint8_t* p = &rgb_[3 * (std::size_t(py) * w_ + std::size_t(px))];
                p[0] = c.r, p[1] = c.g, p[2] = c.b;
            }
    }
    // A line of dots, one per pixel step along its longer side.
    void line(double x0, double y0, double x1, double y1, Rgb c, int radius) {
        const long steps = std::max(1L, std::lround(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))));
        for (long s = 0; s <= steps; ++s) {
            const double t = double(s) / double(steps);
            dot(std::lround(x0 + t * (x1 - x0)), std::lround(y0 + t * (y1 - y0)), c, radius);
        }
    }
    bool write(const std::string& path) const { return write_png_rgb(path, rgb_, w_, h_); }

private:
    std::uint32_t w_, h_;
    std::vector<std::uint8_t> rgb_;
};

struct Series {
    const std::vector<double>* values; // ||r|| after 0, 1, 2, ... iterations
    Rgb colour;
    int radius;
};

// What the plot spans, for the program to print.
struct Axes {
    int decade_lo, decade_hi; // log10 ||r|| at the bottom and top edges
    std::size_t iters;        // the right edge
    std::size_t step;         // iterations between vertical grid lines
};

// log10 ||r|| (vertical, a grey line at every power of ten) against the iteration (horizontal, a
// grey line every `step` iterations); series drawn in order, so later ones lie on top.
inline bool write_residuals(const std::string& path, const std::vector<Series>& series, Axes* axes) {
    constexpr std::uint32_t W = 640, H = 400, left = 30, right = 20, top = 20, bottom = 30;
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    std::size_t n = 1;
    for (const Series& s : series)
        for (double v : *s.values) {
            n = std::max(n, s.values->size());
            if (v > 0.0 && std::isfinite(v)) lo = std::min(lo, std::log10(v)), hi = std::max(hi, std::log10(v));
        }
    if (!(lo <= hi)) lo = -1.0, hi = 0.0; // nothing positive to plot: an empty frame
    axes->decade_lo = static_cast<int>(std::floor(lo));
    axes->decade_hi = std::max(static_cast<int>(std::ceil(hi)), axes->decade_lo + 1);
    axes->iters = n - 1;
    // 1, 2 or 5 times a power of ten, for at most 10 vertical grid lines.
    std::size_t step = 1;
    for (std::size_t p = 1; step * 10 < axes->iters; p *= 10)
        for (std::size_t m : {1, 2, 5})
            if (step * 10 < axes->iters) step = m * p;
    axes->step = step;

    const double pw = W - left - right, ph = H - top - bottom;
    const auto px = [&](double it) { return left + pw * it / double(std::max<std::size_t>(axes->iters, 1)); };
    const auto py = [&](double v) {
        const double l = v > 0.0 && std::isfinite(v) ? std::log10(v) : axes->decade_lo;
        return top + ph * (axes->decade_hi - l) / double(axes->decade_hi - axes->decade_lo);
    };
    Canvas c(W, H);
    const Rgb grid{215, 215, 215}, frame{0, 0, 0};
    for (int d = axes->decade_lo; d <= axes->decade_hi; ++d)
        c.line(left, py(std::pow(10.0, d)), left + pw, py(std::pow(10.0, d)), grid, 0);
    for (std::size_t it = 0; it <= axes->iters; it += step)
        c.line(px(double(it)), top, px(double(it)), top + ph, grid, 0);
    for (const Series& s : series)
        for (std::size_t i = 1; i < s.values->size(); ++i)
            c.line(px(double(i - 1)), py((*s.values)[i - 1]), px(double(i)), py((*s.values)[i]), s.colour, s.radius);
    c.line(left, top, left + pw, top, frame, 0);
    c.line(left, top + ph, left + pw, top + ph, frame, 0);
    c.line(left, top, left, top + ph, frame, 0);
    c.line(left + pw, top, left + pw, top + ph, frame, 0);
    return c.write(path);
}

} // namespace cg_plot
