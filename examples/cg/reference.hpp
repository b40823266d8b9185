// SPDX-License-Identifier: BSL-1.0
// cg's problem and its check: the operator on the whole grid and CG on one CPU, which both
// distributed solvers must reproduce up to rounding.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace cg_ref {

struct Problem {
    std::uint32_t nx, ny;
    double cx, cy; // 1/hx^2 and 1/hy^2 with hx = 1/(nx+1), hy = 1/(ny+1): the unit square
};

// ap = A p on the whole grid (row-major, zero outside).
inline void apply(const Problem& pb, const std::vector<double>& p, std::vector<double>& ap) {
    const std::size_t nx = pb.nx;
    for (std::size_t y = 0; y < pb.ny; ++y)
        for (std::size_t c = 0; c < nx; ++c) {
            const std::size_t i = y * nx + c;
            const double u = p[i], w = c > 0 ? p[i - 1] : 0.0, e = c + 1 < nx ? p[i + 1] : 0.0,
                         n = y > 0 ? p[i - nx] : 0.0, s = y + 1 < pb.ny ? p[i + nx] : 0.0;
            ap[i] = pb.cx * (2.0 * u - w - e) + pb.cy * (2.0 * u - n - s);
        }
}

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

struct Solve {
    std::vector<double> x;
    std::vector<double> hist; // ||r|| after 0, 1, ... iterations (the recurrence's r)
};

// The same iteration on one CPU: what both distributed solvers must reproduce up to rounding.
inline Solve reference(const Problem& pb, int iters) {
    const std::size_t n = std::size_t(pb.nx) * pb.ny;
    Solve s{std::vector<double>(n, 0.0), {}};
    std::vector<double> r(n, 1.0), p = r, ap(n);
    double rr = dot(r, r);
    s.hist.push_back(std::sqrt(rr));
    for (int it = 0; it < iters; ++it) {
        apply(pb, p, ap);
        const double pap = dot(p, ap), alpha = pap > 0.0 ? rr / pap : 0.0;
        for (std::size_t i = 0; i < n; ++i) s.x[i] += alpha * p[i], r[i] -= alpha * ap[i];
        const double rr_new = dot(r, r), beta = rr > 0.0 ? rr_new / rr : 0.0;
        rr = rr_new;
        for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
        s.hist.push_back(std::sqrt(rr));
    }
    return s;
}

// ||f - A x||: the true residual, against the recurrence's.
inline double true_residual(const Problem& pb, const std::vector<double>& x) {
    std::vector<double> ax(x.size());
    apply(pb, x, ax);
    double s = 0.0;
    for (double v : ax) s += (1.0 - v) * (1.0 - v);
    return std::sqrt(s);
}

// The 2-norm condition number of A (its extreme eigenvalues are known in closed form): rounding
// differences in CG's iterates scale with it.
inline double condition(const Problem& pb) {
    const auto lam = [&](std::uint32_t kx, std::uint32_t ky) {
        const double sx = std::sin(kx * std::numbers::pi / (2.0 * (pb.nx + 1))),
                     sy = std::sin(ky * std::numbers::pi / (2.0 * (pb.ny + 1)));
        return 4.0 * (pb.cx * sx * sx + pb.cy * sy * sy);
    };
    return lam(pb.nx, pb.ny) / lam(1, 1);
}

} // namespace cg_ref
