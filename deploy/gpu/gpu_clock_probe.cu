// gpu_clock_probe: an independent measurement of each GPU's %globaltimer against the host's CLOCK_MONOTONIC, to
// check the window engine's passive estimate (offset, drift, error bound; issue #17 item 3).
//
// Method (a handshake through mapped pinned host memory, no kernel launch inside the bracket):
//   a one-thread kernel announces that it runs, then for each of R rounds spins on a host-written "go" word,
//   reads %globaltimer as soon as it sees the round's number, writes the reading and a "done" word back.
//   The host, for each round: t0 = CLOCK_MONOTONIC, writes go, spins until done, t1 = CLOCK_MONOTONIC.
//   The reading g was taken after the GPU saw go (after t0) and before the host saw done (before t1), so
//   host time − GPU time at that instant lies in [t0 − g, t1 − g]: a bracket of the offset, its width one
//   PCIe round trip or two. Every --interval-ms one kernel runs R rounds; the narrowest bracket is kept.
// Quantisation: %globaltimer advances in steps (its update period u is measured first: a kernel reads it in a
//   tight loop); a reading is at most u behind the continuous clock, so the bracket's lower edge is widened by u.
// Output (stdout, CSV with '#' comment lines):
//   # device,<dev>,<pciBusId>,<name>               one per GPU
//   # tick,<dev>,<reads>,<distinct>,<minStepNs>,<medianStepNs>,<maxStepNs>,<updatePeriodNs>
//   # realtime,<dev>,<CLOCK_REALTIME − g at start, ns>  (globaltimer's epoch: near 0 if it was set from wall time)
//   sample,<dev>,<t0>,<t1>,<g>                     the narrowest round of each interval (ns)
// The fit (offset, drift, bound) is gpu-clock-check.sh's, from these lines.
//
// Build (sm_90 for H100/H200, PTX for anything newer; the CUDA runtime is linked statically, the driver is
// loaded at run time):
//   nvcc -O2 -std=c++17 -gencode arch=compute_90,code=[sm_90,compute_90] -o build/gpu-clock/gpu_clock_probe \
//        deploy/gpu/gpu_clock_probe.cu
// Run: gpu_clock_probe [--seconds S] [--interval-ms M] [--rounds R] [--devices 0,1]   (all GPUs by default)
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kMaxRounds = 64;
constexpr int kTickReads = 1 << 16;

struct Shared {            // mapped pinned host memory, one per GPU
    volatile uint32_t go;      // host → GPU: the round the host releases
    volatile uint32_t started; // GPU → host: the kernel's launch number, once it runs
    volatile uint32_t done;    // GPU → host: the round whose reading is in g[]
    volatile uint32_t abort;   // host → GPU: give up (the host timed out), so no kernel spins on after exit
    volatile uint64_t g[kMaxRounds];
};

__device__ __forceinline__ uint64_t globaltimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// Rounds are numbered launch * kMaxRounds + round + 1 so that a stale go of the last launch never matches.
__global__ void handshake(Shared* s, uint32_t launch, int rounds) {
    s->started = launch;
    __threadfence_system();
    for (int r = 0; r < rounds; r++) {
        const uint32_t want = launch * kMaxRounds + r + 1;
        while (s->go != want) {
            if (s->abort) return;
        }
        const uint64_t g = globaltimer();
        s->g[r] = g;
        __threadfence_system();
        s->done = want;
        __threadfence_system();
    }
}

__global__ void tight_reads(uint64_t* out, int n) {
    for (int i = 0; i < n; i++) out[i] = globaltimer();
}

uint64_t monotonic_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

uint64_t realtime_ns() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::mutex out_lock;

bool check(cudaError_t e, int dev, const char* what) {
    if (e == cudaSuccess) return true;
    std::lock_guard<std::mutex> g(out_lock);
    std::fprintf(stderr, "gpu_clock_probe: device %d: %s: %s\n", dev, what, cudaGetErrorString(e));
    return false;
}

// Spins until *word == want or the deadline passes; false on timeout.
bool wait_for(volatile uint32_t* word, uint32_t want, uint64_t deadline_ns) {
    for (uint32_t i = 0;; i++) {
        if (*word == want) return true;
        if ((i & 1023u) == 0 && monotonic_ns() > deadline_ns) return false;
    }
}

// The update period of %globaltimer: a kernel reads it back to back; consecutive distinct readings differ by the
// step; the update period is the median step (reads far faster than the clock changes see every update).
bool measure_tick(int dev) {
    uint64_t* d = nullptr;
    if (!check(cudaMalloc(&d, kTickReads * sizeof(uint64_t)), dev, "cudaMalloc")) return false;
    std::vector<uint64_t> h(kTickReads);
    tight_reads<<<1, 1>>>(d, kTickReads);  // warm-up (code load)
    tight_reads<<<1, 1>>>(d, kTickReads);
    bool ok = check(cudaDeviceSynchronize(), dev, "tight_reads") &&
              check(cudaMemcpy(h.data(), d, kTickReads * sizeof(uint64_t), cudaMemcpyDeviceToHost), dev, "copy");
    cudaFree(d);
    if (!ok) return false;
    std::vector<uint64_t> steps;
    for (int i = 1; i < kTickReads; i++)
        if (h[i] != h[i - 1]) steps.push_back(h[i] - h[i - 1]);
    uint64_t mn = 0, med = 0, mx = 0;
    if (!steps.empty()) {
        std::vector<uint64_t> s = steps;
        std::sort(s.begin(), s.end());
        mn = s.front();
        med = s[s.size() / 2];
        mx = s.back();
    }
    // Reads per ns: if the loop is slower than the clock, every read is distinct and the median step is the loop's
    // time, not the clock's: then the update period is at most the median step (reported as such).
    std::lock_guard<std::mutex> g(out_lock);
    std::printf("# tick,%d,%d,%zu,%llu,%llu,%llu,%llu\n", dev, kTickReads, steps.size() + 1, (unsigned long long)mn,
                (unsigned long long)med, (unsigned long long)mx, (unsigned long long)med);
    std::fflush(stdout);
    return true;
}

struct Sample {
    uint64_t t0, t1, g;
};

bool probe_device(int dev, double seconds, int interval_ms, int rounds) {
    if (!check(cudaSetDevice(dev), dev, "cudaSetDevice")) return false;
    char bus[64] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof bus, dev);
    cudaDeviceProp prop;
    if (!check(cudaGetDeviceProperties(&prop, dev), dev, "cudaGetDeviceProperties")) return false;
    {
        std::lock_guard<std::mutex> g(out_lock);
        std::printf("# device,%d,%s,%s\n", dev, bus, prop.name);
        std::fflush(stdout);
    }
    if (!measure_tick(dev)) return false;
    Shared* host = nullptr;
    if (!check(cudaHostAlloc((void**)&host, sizeof(Shared), cudaHostAllocMapped), dev, "cudaHostAlloc")) return false;
    std::memset((void*)host, 0, sizeof(Shared));
    Shared* devp = nullptr;
    if (!check(cudaHostGetDevicePointer((void**)&devp, host, 0), dev, "cudaHostGetDevicePointer")) return false;
    cudaStream_t stream;
    if (!check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), dev, "cudaStreamCreate")) return false;

    std::vector<Sample> out;
    const uint64_t start = monotonic_ns();
    const uint64_t end = start + uint64_t(seconds * 1e9);
    bool realtime_done = false;
    bool ok = true;
    for (uint32_t launch = 1; ok; launch++) {
        const uint64_t due = start + uint64_t(launch - 1) * uint64_t(interval_ms) * 1000000ull;
        if (due >= end) break;
        while (monotonic_ns() < due) std::this_thread::sleep_for(std::chrono::microseconds(200));
        handshake<<<1, 1, 0, stream>>>(devp, launch, rounds);
        if (!check(cudaGetLastError(), dev, "launch")) { ok = false; break; }
        // The kernel may wait for another process's context (time slicing): up to 2 s.
        if (!wait_for(&host->started, launch, monotonic_ns() + 2000000000ull)) {
            std::lock_guard<std::mutex> g(out_lock);
            std::fprintf(stderr, "gpu_clock_probe: device %d: launch %u did not start within 2 s\n", dev, launch);
            ok = false;
            break;
        }
        Sample best{0, ~0ull, 0};
        for (int r = 0; r < rounds; r++) {
            const uint32_t want = launch * kMaxRounds + r + 1;
            std::atomic_thread_fence(std::memory_order_seq_cst);
            const uint64_t t0 = monotonic_ns();
            std::atomic_thread_fence(std::memory_order_seq_cst);
            host->go = want;
            if (!wait_for(&host->done, want, t0 + 2000000000ull)) {
                std::lock_guard<std::mutex> g(out_lock);
                std::fprintf(stderr, "gpu_clock_probe: device %d: round %u not answered within 2 s\n", dev, want);
                ok = false;
                break;
            }
            std::atomic_thread_fence(std::memory_order_seq_cst);
            const uint64_t t1 = monotonic_ns();
            const uint64_t g = host->g[r];
            if (t1 - t0 < best.t1 - best.t0) best = Sample{t0, t1, g};
        }
        if (!ok) break;
        if (!check(cudaStreamSynchronize(stream), dev, "handshake")) { ok = false; break; }
        if (!realtime_done) {
            // globaltimer's epoch, for the record (one launch, a coarse bracket is enough).
            const uint64_t rt = realtime_ns();
            const uint64_t mono = monotonic_ns();
            const int64_t mono_minus_g = int64_t(best.t0 + (best.t1 - best.t0) / 2 - best.g);
            std::lock_guard<std::mutex> g(out_lock);
            std::printf("# realtime,%d,%lld\n", dev, (long long)(int64_t(rt - mono) + mono_minus_g));
            realtime_done = true;
        }
        out.push_back(best);
    }
    {
        std::lock_guard<std::mutex> g(out_lock);
        for (const Sample& s : out)
            std::printf("sample,%d,%llu,%llu,%llu\n", dev, (unsigned long long)s.t0, (unsigned long long)s.t1,
                        (unsigned long long)s.g);
        std::fflush(stdout);
    }
    if (!ok) {
        // A kernel that started late would wait for a go that never comes: release it before the context goes.
        host->abort = 1;
        cudaStreamSynchronize(stream);
    }
    cudaStreamDestroy(stream);
    cudaFreeHost(host);
    return ok;
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "gpu_clock_probe: %s\nusage: gpu_clock_probe [--seconds S] [--interval-ms M] [--rounds R (1..%d)] "
                 "[--devices 0,1,...]\n",
                 why, kMaxRounds);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 60;
    int interval_ms = 10;
    int rounds = 8;
    std::vector<int> devices;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + a).c_str());
        const char* v = argv[++i];
        char* endp = nullptr;
        errno = 0;
        if (a == "--seconds") {
            seconds = std::strtod(v, &endp);
            if (*endp || seconds <= 0) usage("--seconds needs a positive number");
        } else if (a == "--interval-ms") {
            interval_ms = int(std::strtol(v, &endp, 10));
            if (*endp || interval_ms < 1) usage("--interval-ms needs an integer >= 1");
        } else if (a == "--rounds") {
            rounds = int(std::strtol(v, &endp, 10));
            if (*endp || rounds < 1 || rounds > kMaxRounds) usage("--rounds needs an integer in 1..64");
        } else if (a == "--devices") {
            std::string list = v;
            size_t p = 0;
            while (p <= list.size()) {
                const size_t q = std::min(list.find(',', p), list.size());
                const std::string item = list.substr(p, q - p);
                const long d = std::strtol(item.c_str(), &endp, 10);
                if (item.empty() || *endp || d < 0) usage("--devices needs a comma-separated list of device numbers");
                devices.push_back(int(d));
                p = q + 1;
            }
        } else {
            usage(("unknown option " + a).c_str());
        }
    }
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        std::fprintf(stderr, "gpu_clock_probe: no CUDA device (%s)\n", e == cudaSuccess ? "count 0" : cudaGetErrorString(e));
        return 1;
    }
    if (devices.empty())
        for (int d = 0; d < count; d++) devices.push_back(d);
    for (int d : devices)
        if (d >= count) {
            std::fprintf(stderr, "gpu_clock_probe: device %d does not exist (%d devices)\n", d, count);
            return 2;
        }
    std::printf("# probe,seconds=%g,interval_ms=%d,rounds=%d,clock=CLOCK_MONOTONIC\n", seconds, interval_ms, rounds);
    std::fflush(stdout);
    std::vector<std::thread> threads;
    std::vector<int> results(devices.size(), 0);
    for (size_t i = 0; i < devices.size(); i++)
        threads.emplace_back([&, i] { results[i] = probe_device(devices[i], seconds, interval_ms, rounds) ? 1 : 0; });
    for (auto& t : threads) t.join();
    for (int r : results)
        if (!r) return 1;
    return 0;
}
