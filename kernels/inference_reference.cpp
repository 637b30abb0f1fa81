// The float64 reference of the inference kernel (inference_cpu.hpp): the
// checked rows through two float64 passes, the error metric and tolerance.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <type_traits>

#include "host_threads.hpp"
#include "inference_cpu.hpp"
#include "random_inputs.hpp"

namespace mpsb::inference {
namespace {

// One layer of the two float64 reference passes (output_reference): y = x W + b for the checked rows,
// r (rounded) and p (unrounded) side by side. Each output element is the bias plus the products in
// ascending k, as a plain k-i-j loop sums them, but summed in registers (reference_block) rather than
// in all rows' accumulators (2 MB at the defaults' 64 rows, through memory once per k: 2.7 s). The
// work is cut into tiles of kTileRows rows x kTileCols output features, whose strip of W stays in
// cache; tiles are independent: threads take them in turn (host_threads.hpp).
constexpr std::int64_t kTileRows = 16, kTileCols = 256;  // multiples of the blocks below

constexpr int kBlockRows = 2, kBlockCols = 4;  // a reference_block: 16 accumulators

struct ReferenceLayer {
  const float* w;  // h x h
  const float* packed;  // W's columns in blocks of kBlockCols, each block's k rows contiguous (pack_columns)
  const float* b;  // h
  const double *xr, *xp;  // n x h
  double *yr, *yp;        // n x h
  std::int64_t n, h;
};

// W's columns [j, j + kBlockCols) for every k, block after block: packed[(j / kBlockCols) h + k][c] =
// W[k][j + c]. A block then reads its weights in one sweep, not one page of W per k. Columns past the
// last whole block stay in W alone.
void pack_columns(const float* w, std::int64_t h, float* packed) {
  for (std::int64_t jb = 0; jb < h / kBlockCols; ++jb) {
    for (std::int64_t k = 0; k < h; ++k) {
      for (int c = 0; c < kBlockCols; ++c) packed[(jb * h + k) * kBlockCols + c] = w[k * h + jb * kBlockCols + c];
    }
  }
}

// Two doubles operated on together (GCC and Clang vector extension: SSE2 on any x86-64, NEON on
// arm64): each lane is the same IEEE multiply or add the scalar code does, so the sums are unchanged.
typedef double Double2 __attribute__((vector_size(16)));

// Rows [r, r + R) x features [j, j + kBlockCols) of the tile, summed over every k in registers: the
// rows share each load of W (from `packed`), and the R x kBlockCols x 2 accumulators never leave the
// CPU until the sums are done.
template <int R>
void reference_block(const ReferenceLayer& L, std::int64_t r, std::int64_t j) {
  static_assert(kBlockCols == 4, "two Double2 per block row");
  const std::int64_t h = L.h;
  Double2 ar[R][2], ap[R][2];
  for (int i = 0; i < R; ++i) {
    for (int c = 0; c < 2; ++c) ar[i][c] = ap[i][c] = Double2{L.b[j + 2 * c], L.b[j + 2 * c + 1]};
  }
  const float* wk = L.packed + (j / kBlockCols) * h * kBlockCols;
  for (std::int64_t k = 0; k < h; ++k, wk += kBlockCols) {
    const Double2 w0{wk[0], wk[1]}, w1{wk[2], wk[3]};
    for (int i = 0; i < R; ++i) {
      const double xr_k = L.xr[(r + i) * h + k], xp_k = L.xp[(r + i) * h + k];
      const Double2 xr2{xr_k, xr_k}, xp2{xp_k, xp_k};
      ar[i][0] += xr2 * w0;
      ar[i][1] += xr2 * w1;
      ap[i][0] += xp2 * w0;
      ap[i][1] += xp2 * w1;
    }
  }
  for (int i = 0; i < R; ++i) {
    for (int c = 0; c < kBlockCols; ++c) {
      L.yr[(r + i) * h + j + c] = ar[i][c / 2][c % 2];
      L.yp[(r + i) * h + j + c] = ap[i][c / 2][c % 2];
    }
  }
}

// One feature past the last whole block (H not a multiple of kBlockCols), from W itself.
void reference_column(const ReferenceLayer& L, std::int64_t r, std::int64_t j) {
  const std::int64_t h = L.h;
  double ar = L.b[j], ap = L.b[j];
  for (std::int64_t k = 0; k < h; ++k) {
    const double w_kj = L.w[k * h + j];
    ar += L.xr[r * h + k] * w_kj;
    ap += L.xp[r * h + k] * w_kj;
  }
  L.yr[r * h + j] = ar;
  L.yp[r * h + j] = ap;
}

void reference_tile(const ReferenceLayer& L, std::int64_t r0, std::int64_t j0) {
  const std::int64_t r1 = std::min(L.n, r0 + kTileRows), j1 = std::min(L.h, j0 + kTileCols);
  const std::int64_t whole = L.h / kBlockCols * kBlockCols;  // columns in whole blocks
  auto blocks = [&](auto rows, std::int64_t r) {
    constexpr int R = decltype(rows)::value;
    std::int64_t j = j0;
    for (; j + kBlockCols <= std::min(j1, whole); j += kBlockCols) reference_block<R>(L, r, j);
    for (; j < j1; ++j) {
      for (int i = 0; i < R; ++i) reference_column(L, r + i, j);
    }
  };
  std::int64_t r = r0;
  for (; r + kBlockRows <= r1; r += kBlockRows) blocks(std::integral_constant<int, kBlockRows>{}, r);
  for (; r < r1; ++r) blocks(std::integral_constant<int, 1>{}, r);
}

void run_tiles(const ReferenceLayer& L) {
  const std::int64_t row_tiles = (L.n + kTileRows - 1) / kTileRows, col_tiles = (L.h + kTileCols - 1) / kTileCols;
  for_each_chunk(row_tiles * col_tiles,
                 [&](std::int64_t t) { reference_tile(L, (t % row_tiles) * kTileRows, (t / row_tiles) * kTileCols); });
}

}  // namespace

double tolerance(Storage s, double sensitivity) {
  return kLastRoundingAllowance * unit_roundoff(s) + kSensitivityFactor * sensitivity;
}

OutputReference output_reference(Storage s, const Shape& shape, std::uint64_t seed, std::uint64_t sample_seed,
                                 double budget) {
  const std::int64_t batch = shape.batch, h = shape.hidden;
  // Rows (samples) are independent chains through the network: check whole
  // rows, two float64 passes each.
  const double per_row = 2.0 * static_cast<double>(h) * static_cast<double>(h) * static_cast<double>(shape.layers);
  const auto budget_rows = static_cast<std::int64_t>(std::max(2.0, std::floor(budget / per_row)));
  std::set<std::int64_t> row_set;
  if (batch <= budget_rows) {
    for (std::int64_t i = 0; i < batch; ++i) row_set.insert(i);
  } else {
    row_set = {0, batch - 1};
    std::uint64_t state = sample_seed;
    while (static_cast<std::int64_t>(row_set.size()) < budget_rows) {
      row_set.insert(static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(batch)));
    }
  }
  const std::vector<std::int64_t> rows(row_set.begin(), row_set.end());
  const auto n = static_cast<std::int64_t>(rows.size());

  // Two float64 forward passes of the checked rows, one layer regenerated at
  // a time: r with the hidden activations rounded to the storage format
  // (through float, as the fp32 accumulator is rounded), p without rounding.
  const std::vector<float> input = make_input(s, shape, seed);
  std::vector<double> xr(static_cast<std::size_t>(n * h)), yr(xr.size()), xp(xr.size()), yp(xr.size());
  for (std::int64_t r = 0; r < n; ++r) {
    for (std::int64_t k = 0; k < h; ++k) xr[r * h + k] = input[rows[r] * h + k];
  }
  xp = xr;
  std::vector<float> w(static_cast<std::size_t>(h * h)), packed(w.size()), b(static_cast<std::size_t>(h));
  for (std::int64_t l = 0; l < shape.layers; ++l) {
    make_layer(s, h, seed, l, w.data(), b.data());
    pack_columns(w.data(), h, packed.data());
    const ReferenceLayer layer{w.data(), packed.data(), b.data(), xr.data(), xp.data(), yr.data(), yp.data(), n, h};
    run_tiles(layer);
    if (l + 1 < shape.layers) {
      for (auto& value : yr) value = round_to(static_cast<float>(std::max(value, 0.0)), s);
      for (auto& value : yp) value = std::max(value, 0.0);
    }
    std::swap(xr, yr);
    std::swap(xp, yp);
  }

  std::vector<double> rms(static_cast<std::size_t>(n));
  double sensitivity = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    const double* ref = xr.data() + r * h;
    double sum_squares = 0;
    for (std::int64_t j = 0; j < h; ++j) sum_squares += ref[j] * ref[j];
    rms[r] = std::max(std::sqrt(sum_squares / static_cast<double>(h)), 1e-300);
    for (std::int64_t j = 0; j < h; ++j) {
      sensitivity = std::max(sensitivity, std::fabs(ref[j] - xp[r * h + j]) / std::max(std::fabs(ref[j]), rms[r]));
    }
  }
  OutputReference out;
  out.storage = s;
  out.rows = rows;
  out.ref = std::move(xr);
  out.rms = std::move(rms);
  out.sensitivity = sensitivity;
  return out;
}

Verification verify_output(const OutputReference& reference, const Shape& shape, const float* out) {
  const std::int64_t batch = shape.batch, h = shape.hidden;
  const Storage s = reference.storage;
  Verification v;
  v.tolerance = tolerance(s, 0.0);
  for (std::int64_t idx = 0; idx < batch * h; ++idx) {
    if (!std::isfinite(out[idx])) {
      std::ostringstream msg;
      msg << "output[" << idx / h << "][" << idx % h << "] is not finite (" << out[idx] << ")";
      v.detail = msg.str();
      v.max_rel_error = INFINITY;
      return v;
    }
  }
  const std::vector<std::int64_t>& rows = reference.rows;
  const auto n = static_cast<std::int64_t>(rows.size());
  const std::vector<double>& xr = reference.ref;
  const std::vector<double>& rms = reference.rms;
  const double sensitivity = reference.sensitivity;
  v.tolerance = tolerance(s, sensitivity);
  for (std::int64_t r = 0; r < n; ++r) {
    const double* ref = xr.data() + r * h;
    const float* got = out + rows[r] * h;
    for (std::int64_t j = 0; j < h; ++j) {
      const double err = std::fabs(static_cast<double>(got[j]) - ref[j]) / std::max(std::fabs(ref[j]), rms[r]);
      ++v.checked;
      if (err > v.max_rel_error) {
        v.max_rel_error = err;
        if (err > v.tolerance) {
          std::ostringstream msg;
          msg << "output[" << rows[r] << "][" << j << "] = " << got[j] << ", float64 reference " << ref[j]
              << " (row RMS " << rms[r] << "; tolerance " << kLastRoundingAllowance << " u + "
              << kSensitivityFactor << " x rounding sensitivity " << sensitivity << ")";
          v.detail = msg.str();
        }
      }
    }
  }
  v.ok = v.max_rel_error <= v.tolerance;
  if (v.ok) v.detail.clear();
  return v;
}

Verification verify_output(Storage s, const Shape& shape, std::uint64_t seed, const float* out,
                           std::uint64_t sample_seed, double budget) {
  return verify_output(output_reference(s, shape, seed, sample_seed, budget), shape, out);
}

}  // namespace mpsb::inference
