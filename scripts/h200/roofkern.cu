// Small CUDA kernels whose FLOPs, integer ops and bytes are known by construction, profiled by
// ncu on an H200 (scripts/h200/device_run.sh) so that ncu-roof's analysis can be checked against
// hand counts. Each kernel's expected work is written to stdout as one "expect" line, and its
// time without the profiler (CUDA events, median of 20) as one "time" line.
#include <cuda_fp16.h>
#include <mma.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cstring>
using namespace nvcuda;

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "CUDA %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); std::exit(1);} } while (0)

__global__ void vector_add_f32(const float* a, const float* b, float* c, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void daxpy_f64(double alpha, const double* x, double* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

// one block per row, D % blockDim == 0
__global__ void rmsnorm_f32(const float* x, const float* w, float* y, int D, float eps) {
  __shared__ float part[32];
  const float* xr = x + (long)blockIdx.x * D;
  float* yr = y + (long)blockIdx.x * D;
  float s = 0.f;
  for (int j = threadIdx.x; j < D; j += blockDim.x) { float v = xr[j]; s = fmaf(v, v, s); }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    float t = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffff, t, o);
    if (threadIdx.x == 0) part[0] = rsqrtf(t / D + eps);
  }
  __syncthreads();
  float inv = part[0];
  for (int j = threadIdx.x; j < D; j += blockDim.x) yr[j] = xr[j] * inv * w[j];
}

__global__ void sgemm_naive_f32(const float* A, const float* B, float* C, int N) {
  int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= N || c >= N) return;
  float s = 0.f;
  for (int k = 0; k < N; ++k) s = fmaf(A[(long)r * N + k], B[(long)k * N + c], s);
  C[(long)r * N + c] = s;
}

template <int T>
__global__ void sgemm_tiled_f32(const float* A, const float* B, float* C, int N) {
  __shared__ float As[T][T], Bs[T][T + 1];
  int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
  float s = 0.f;
  for (int k0 = 0; k0 < N; k0 += T) {
    As[threadIdx.y][threadIdx.x] = A[(long)r * N + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(long)(k0 + threadIdx.y) * N + c];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) s = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], s);
    __syncthreads();
  }
  C[(long)r * N + c] = s;
}

// each warp one 16x16 tile of C, operands straight from global memory
__global__ void wmma_gemm_f16(const half* A, const half* B, float* C, int N) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tiles = N / 16, tr = warp / tiles, tc = warp % tiles;
  if (tr >= tiles) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.f);
  for (int k = 0; k < N; k += 16) {
    wmma::load_matrix_sync(a, A + (long)tr * 16 * N + k, N);
    wmma::load_matrix_sync(b, B + (long)k * N + tc * 16, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + (long)tr * 16 * N + tc * 16, acc, N, wmma::mem_row_major);
}

__global__ void wmma_gemm_s8(const signed char* A, const signed char* B, int* C, int N) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tiles = N / 16, tr = warp / tiles, tc = warp % tiles;
  if (tr >= tiles) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
  wmma::fill_fragment(acc, 0);
  for (int k = 0; k < N; k += 16) {
    wmma::load_matrix_sync(a, A + (long)tr * 16 * N + k, N);
    wmma::load_matrix_sync(b, B + (long)k * N + tc * 16, N);
    wmma::mma_sync(acc, a, b, acc);
  }
  wmma::store_matrix_sync(C + (long)tr * 16 * N + tc * 16, acc, N, wmma::mem_row_major);
}

__global__ void reduce_sum_i32(const int* x, unsigned long long* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x, stride = (long)gridDim.x * blockDim.x;
  int s = 0;
  for (; i < n; i += stride) s += x[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, (unsigned long long)(unsigned)s);
}

// ITERS __expf per thread: one FMUL (by log2 e) and one MUFU.EX2 each, plus one FFMA
template <int ITERS>
__global__ void expf_loop_f32(float* y, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = (float)(i & 1023) * 1e-4f;
#pragma unroll 8
  for (int k = 0; k < ITERS; ++k) v = fmaf(__expf(v), 0.25f, -0.2f);
  y[i] = v;
}

// a 16 MiB buffer (fits the 60 MB L2) read PASSES times by every block in turn: L2-bound
template <int PASSES>
__global__ void l2_resident_read(const float4* x, float* out, long n4) {
  float4 s = make_float4(0, 0, 0, 0);
  long stride = (long)gridDim.x * blockDim.x;
  for (int p = 0; p < PASSES; ++p)
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += stride) {
      float4 v = __ldcg(x + ((i + p * 4096) % n4));
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
  if (s.x + s.y + s.z + s.w == 1234.5f) out[0] = s.x;
}

// each block re-reads its own 16 KiB slice PASSES times: L1-bound
template <int PASSES>
__global__ void l1_resident_read(const float4* x, float* out) {
  const float4* mine = x + (long)blockIdx.x * 1024;
  float4 s = make_float4(0, 0, 0, 0);
  for (int p = 0; p < PASSES; ++p)
    for (int j = threadIdx.x; j < 1024; j += blockDim.x) {
      float4 v = __ldg(mine + ((j + p) & 1023));
      s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
  if (s.x + s.y + s.z + s.w == 1234.5f) out[blockIdx.x] = s.x;
}

// shared-memory traffic; STRIDE 1: conflict-free, STRIDE 32: 32-way bank conflicts
template <int STRIDE>
__global__ void shared_stride(float* out, int iters) {
  __shared__ float buf[8192];
  for (int j = threadIdx.x; j < 8192; j += blockDim.x) buf[j] = j;
  __syncthreads();
  float s = 0.f;
  int base = (threadIdx.x * STRIDE) % 8192;
  for (int k = 0; k < iters; ++k) s += buf[(base + k) & 8191];
  if (s == 1234.5f) out[blockIdx.x] = s;
}

static float timed(void (*launch)(void*), void* ctx) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < 23; ++r) {
    CK(cudaEventRecord(a)); launch(ctx); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
    float t; CK(cudaEventElapsedTime(&t, a, b)); if (r >= 3) ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e-3f;
}

template <typename T> static T* fill(long n, int seed) {
  std::vector<T> h(n);
  for (long i = 0; i < n; ++i) h[i] = (T)(((i * 2654435761u + seed) >> 7) % 97) ;
  T* d; CK(cudaMalloc(&d, n * sizeof(T))); CK(cudaMemcpy(d, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct Bufs {
  long nv; float *a, *b, *c; double *x64, *y64;
  int T, D; float *xr, *wr, *yr;
  int G; float *Ag, *Bg, *Cg;
  int H; half *Ah, *Bh; float* Ch; signed char *A8, *B8; int* C8;
  long ni; int* xi; unsigned long long* acc;
  long ne; float* ye;
  long n4; float4* l2buf; float4* l1buf; float* sink;
};

#define LAUNCH(name, ...) static void name(void* p) { Bufs& q = *(Bufs*)p; (void)q; __VA_ARGS__; }
LAUNCH(L_vadd, vector_add_f32<<<(q.nv + 255) / 256, 256>>>(q.a, q.b, q.c, q.nv))
LAUNCH(L_vadd_small, vector_add_f32<<<(1 << 20) / 256, 256>>>(q.a, q.b, q.c, 1 << 20))
LAUNCH(L_daxpy, daxpy_f64<<<(q.nv / 2 + 255) / 256, 256>>>(2.0, q.x64, q.y64, q.nv / 2))
LAUNCH(L_rms, rmsnorm_f32<<<q.T, 256>>>(q.xr, q.wr, q.yr, q.D, 1e-6f))
LAUNCH(L_naive, (sgemm_naive_f32<<<dim3(q.G / 16, q.G / 16), dim3(16, 16)>>>(q.Ag, q.Bg, q.Cg, q.G)))
LAUNCH(L_tiled, (sgemm_tiled_f32<32><<<dim3(q.G / 32, q.G / 32), dim3(32, 32)>>>(q.Ag, q.Bg, q.Cg, q.G)))
LAUNCH(L_hmma, wmma_gemm_f16<<<(q.H / 16) * (q.H / 16) / 4, 128>>>(q.Ah, q.Bh, q.Ch, q.H))
LAUNCH(L_imma, wmma_gemm_s8<<<(q.H / 16) * (q.H / 16) / 4, 128>>>(q.A8, q.B8, q.C8, q.H))
LAUNCH(L_red, reduce_sum_i32<<<132 * 8, 256>>>(q.xi, q.acc, q.ni))
LAUNCH(L_exp, expf_loop_f32<256><<<(q.ne + 255) / 256, 256>>>(q.ye, q.ne))
LAUNCH(L_l2, l2_resident_read<32><<<132 * 4, 256>>>(q.l2buf, q.sink, q.n4))
LAUNCH(L_l1, l1_resident_read<256><<<132 * 8, 256>>>(q.l1buf, q.sink))
LAUNCH(L_sh1, shared_stride<1><<<132 * 2, 256>>>(q.sink, 4096))
LAUNCH(L_sh32, shared_stride<32><<<132 * 2, 256>>>(q.sink, 4096))

int main() {
  cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
  int clk = 0, mclk = 0; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, 0);
  std::printf("device name=%s cc=%d.%d sms=%d l2_bytes=%d bus_bits=%d clock_khz=%d mem_clock_khz=%d smem_per_sm=%zu\n",
              pr.name, pr.major, pr.minor, pr.multiProcessorCount, pr.l2CacheSize, pr.memoryBusWidth, clk, mclk,
              pr.sharedMemPerMultiprocessor);
  Bufs q{};
  q.nv = 1L << 26; q.a = fill<float>(q.nv, 1); q.b = fill<float>(q.nv, 2); CK(cudaMalloc(&q.c, q.nv * 4));
  q.x64 = fill<double>(q.nv / 2, 3); q.y64 = fill<double>(q.nv / 2, 4);
  q.T = 8192; q.D = 4096; q.xr = fill<float>((long)q.T * q.D, 5); q.wr = fill<float>(q.D, 6); CK(cudaMalloc(&q.yr, (long)q.T * q.D * 4));
  q.G = 2048; q.Ag = fill<float>((long)q.G * q.G, 7); q.Bg = fill<float>((long)q.G * q.G, 8); CK(cudaMalloc(&q.Cg, (long)q.G * q.G * 4));
  q.H = 4096; q.Ah = fill<half>((long)q.H * q.H, 9); q.Bh = fill<half>((long)q.H * q.H, 10); CK(cudaMalloc(&q.Ch, (long)q.H * q.H * 4));
  q.A8 = fill<signed char>((long)q.H * q.H, 11); q.B8 = fill<signed char>((long)q.H * q.H, 12); CK(cudaMalloc(&q.C8, (long)q.H * q.H * 4));
  q.ni = 1L << 26; q.xi = fill<int>(q.ni, 13); CK(cudaMalloc(&q.acc, 8)); CK(cudaMemset(q.acc, 0, 8));
  q.ne = 1L << 22; CK(cudaMalloc(&q.ye, q.ne * 4));
  q.n4 = (16L << 20) / 16; q.l2buf = (float4*)fill<float>(q.n4 * 4, 14);
  q.l1buf = (float4*)fill<float>(132L * 8 * 1024 * 4, 15); CK(cudaMalloc(&q.sink, 132 * 8 * 4));
  CK(cudaDeviceSynchronize());

  struct K { const char* name; void (*f)(void*); double flop; double intops; double bytes; const char* what; };
  const double nv = q.nv, T = q.T, D = q.D, G = q.G, H = q.H, ni = q.ni, ne = q.ne;
  K ks[] = {
    {"vector_add_f32", L_vadd, nv, 0, 12 * nv, "fp32 FADD n; DRAM bytes 12n (2 reads + 1 write)"},
    {"vector_add_f32_small", L_vadd_small, 1 << 20, 0, 12.0 * (1 << 20), "n=2^20: fits L2"},
    {"daxpy_f64", L_daxpy, nv, 0, 24 * nv / 2, "fp64 DFMA n/2 = 2 flop each; DRAM 24 B/elem"},
    {"rmsnorm_f32", L_rms, 4 * T * D, 0, 8 * T * D + 4 * D, "FFMA x*x (2) + 2 FMUL per elem ~ 4 flop; DRAM x read once (if L2 keeps the row for the 2nd pass) + y"},
    {"sgemm_naive_f32", L_naive, 2 * G * G * G, 0, 12 * G * G, "2N^3 FLOP; DRAM >= 3N^2*4 B"},
    {"sgemm_tiled_f32", L_tiled, 2 * G * G * G, 0, 12 * G * G, "2N^3 FLOP, 32x32 shared tiles"},
    {"wmma_gemm_f16", L_hmma, 2 * H * H * H, 0, 8 * H * H, "2N^3 tensor FLOP fp16->fp32 (HMMA)"},
    {"wmma_gemm_s8", L_imma, 0, 2 * H * H * H, 6 * H * H, "2N^3 tensor integer ops s8->s32 (IMMA)"},
    {"reduce_sum_i32", L_red, 0, ni, 4 * ni, "IADD n (+shuffles); DRAM 4n"},
    {"expf_loop_f32", L_exp, 256 * 3 * ne, 0, 4 * ne, "per thread 256 x (FMUL + MUFU.EX2 + FFMA): XU 256n"},
    {"l2_resident_read", L_l2, 4 * 32 * (16.0 * (1 << 20) / 16), 0, 32 * 16.0 * (1 << 20), "16 MiB read 32x from L2 (__ldcg)"},
    {"l1_resident_read", L_l1, 4 * 256 * 1024.0 * 132 * 8, 0, 256 * 16384.0 * 132 * 8, "each block re-reads 16 KiB 256x (L1)"},
    {"shared_stride1", L_sh1, 4096.0 * 256 * 264, 0, 4 * 4096.0 * 256 * 264, "shared loads, no bank conflicts"},
    {"shared_stride32", L_sh32, 4096.0 * 256 * 264, 0, 4 * 4096.0 * 256 * 264, "shared loads, 32-way bank conflicts"},
  };
  const char* only = std::getenv("ROOFKERN_ONLY");
  bool timing = std::getenv("ROOFKERN_TIME") != nullptr;
  for (auto& k : ks) {
    if (only && !std::strstr(k.name, only)) continue;
    std::printf("expect kernel=%s flop=%.6g intops=%.6g min_bytes=%.6g note=\"%s\"\n", k.name, k.flop, k.intops, k.bytes, k.what);
    if (timing) {
      float s = timed(k.f, &q);
      std::printf("time kernel=%s seconds=%.6g achieved_flop_per_s=%.6g achieved_bytes_per_s=%.6g\n", k.name, s,
                  (k.flop + k.intops) / s, k.bytes / s);
    } else {
      int reps = std::strcmp(k.name, "vector_add_f32") == 0 ? 3 : 1;  // a repeated launch for groups/noise
      for (int r = 0; r < reps; ++r) k.f(&q);
      CK(cudaDeviceSynchronize()); CK(cudaGetLastError());
    }
  }
  std::printf("done\n");
  return 0;
}
