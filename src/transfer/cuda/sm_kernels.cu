// The GPU side of bwscope's CUDA backend: copy kernels run by the SMs and
// the start blocker. Compiled to PTX by scripts/gpu/build-ptx.py (NVRTC,
// compute_70, so any GPU from Volta on JIT-compiles it) and embedded in the
// binary as sm_kernels.ptx: building bwscope needs no CUDA toolkit.
//
// Every copy kernel moves `bytes` bytes `loops` times, 16 bytes per access,
// over a grid-stride loop with four loads in flight per thread before their
// stores (the bytes in flight are what a copy's bandwidth needs), then the
// tail byte by byte. Host memory is touched with cache operators that make
// every pass cross the link: loads from host memory are `ld.global.cv`
// (fetch again, never served from a cached line) and stores to host memory
// `st.global.wt` (write through to system memory).

typedef unsigned long long u64;

#define COPY_BODY(LOAD, STORE)                                              \
    const u64 stride = (u64)gridDim.x * blockDim.x;                         \
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;           \
    const u64 n = bytes / 16;                                               \
    for (u64 l = 0; l < loops; l++) {                                       \
        u64 i = first;                                                      \
        for (; i + 3 * stride < n; i += 4 * stride) {                       \
            uint4 a = LOAD(src + i);                                        \
            uint4 b = LOAD(src + i + stride);                               \
            uint4 c = LOAD(src + i + 2 * stride);                           \
            uint4 d = LOAD(src + i + 3 * stride);                           \
            STORE(dst + i, a);                                              \
            STORE(dst + i + stride, b);                                     \
            STORE(dst + i + 2 * stride, c);                                 \
            STORE(dst + i + 3 * stride, d);                                 \
        }                                                                   \
        for (; i < n; i += stride) {                                        \
            STORE(dst + i, LOAD(src + i));                                  \
        }                                                                   \
        for (u64 j = n * 16 + first; j < bytes; j += stride) {              \
            ((unsigned char *)dst)[j] = ((const unsigned char *)src)[j];    \
        }                                                                   \
    }

#define PLAIN_LOAD(p) (*(p))
#define PLAIN_STORE(p, v) (*(p) = (v))
#define HOST_LOAD(p) __ldcv(p)
#define HOST_STORE(p, v) __stwt((p), (v))

// Device memory to device memory.
extern "C" __global__ void bws_copy_d2d(uint4 *__restrict__ dst, const uint4 *__restrict__ src,
                                        u64 bytes, u64 loops) {
    COPY_BODY(PLAIN_LOAD, PLAIN_STORE)
}

// Mapped host memory to device memory: every load crosses the link.
extern "C" __global__ void bws_copy_h2d(uint4 *__restrict__ dst, uint4 *__restrict__ src,
                                        u64 bytes, u64 loops) {
    COPY_BODY(HOST_LOAD, PLAIN_STORE)
}

// Device memory to mapped host memory: every store is written through.
extern "C" __global__ void bws_copy_d2h(uint4 *__restrict__ dst, const uint4 *__restrict__ src,
                                        u64 bytes, u64 loops) {
    COPY_BODY(PLAIN_LOAD, HOST_STORE)
}

// The start blocker: holds its stream until the host, having queued every
// copy of a sample behind it, sets latch[0]; so the time to queue work is
// outside the timed region (nvbandwidth's spin kernel). Gives up after
// `timeout_ns` of the GPU's global timer and says so in latch[1].
extern "C" __global__ void bws_spin(volatile int *latch, u64 timeout_ns) {
    u64 start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (latch[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) {
            latch[1] = 1;
            break;
        }
    }
}
