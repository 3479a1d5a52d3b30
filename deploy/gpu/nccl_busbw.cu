// nccl_busbw.cu - bus bandwidth of NCCL collectives, one process driving every GPU of the host (issue #17 item 2).
//
// Why not torch: through torch.distributed a 1 MiB all_reduce costs 25-45 us of host work per operation on the
// GPU machine's vCPUs, varying from batch to batch, so a 1 % change at 1-4 MiB drowns (docs/benchmarks.md §3).
// Here one thread enqueues each operation for all GPUs inside one NCCL group (as nccl-tests does), a few us of
// host work, so the GPUs stay busy and the comparison "plugin on / NCCL_PROFILER_PLUGIN=none" is resolved where
// the plugin's host cost would show first.
//
// NCCL is opened with dlopen (the library torch uses, path given): its few entry points are declared here from
// the documented API (ncclResult_t is an int, ncclFloat32 = 7, ncclSum = 0, a communicator is an opaque pointer).
//
// Build (host code only; cudart linked statically):
//   nvcc -O2 -o build/nccl_busbw deploy/gpu/nccl_busbw.cu -ldl
// Run:
//   build/nccl_busbw --nccl /path/libnccl.so.2 [--colls all_reduce,all_gather,reduce_scatter,sendrecv]
//                    [--min 1K] [--max 1G] [--seconds 0.25] [--label L]
// Prints one JSON object per line and point: {"label","coll","bytes","ranks","batches":[us per op, ...],
// "median_us","algbw_gbs","busbw_gbs"}; the batch times are each batch's wall time (CUDA events on GPU 0,
// after every GPU's stream finished) divided by its operation count.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

typedef struct ncclComm* nccl_comm_t;
typedef int (*comm_init_all_fn)(nccl_comm_t*, int, const int*);
typedef int (*comm_destroy_fn)(nccl_comm_t);
typedef int (*group_fn)(void);
typedef int (*all_reduce_fn)(const void*, void*, size_t, int, int, nccl_comm_t, cudaStream_t);
typedef int (*all_gather_fn)(const void*, void*, size_t, int, nccl_comm_t, cudaStream_t);
typedef int (*reduce_scatter_fn)(const void*, void*, size_t, int, int, nccl_comm_t, cudaStream_t);
typedef int (*send_recv_fn)(const void*, size_t, int, int, nccl_comm_t, cudaStream_t);
typedef const char* (*error_string_fn)(int);

static const int kFloat32 = 7;
static const int kSum = 0;

struct Nccl {
    comm_init_all_fn comm_init_all;
    comm_destroy_fn comm_destroy;
    group_fn group_start, group_end;
    all_reduce_fn all_reduce;
    all_gather_fn all_gather;
    reduce_scatter_fn reduce_scatter;
    send_recv_fn send, recv;
    error_string_fn error_string;
};

static void die(const char* what) {
    fprintf(stderr, "nccl_busbw: %s\n", what);
    exit(1);
}

#define CUDA_OK(call)                                                                                 \
    do {                                                                                              \
        cudaError_t e_ = (call);                                                                      \
        if (e_ != cudaSuccess) {                                                                      \
            fprintf(stderr, "nccl_busbw: %s: %s\n", #call, cudaGetErrorString(e_));                   \
            exit(1);                                                                                  \
        }                                                                                             \
    } while (0)

static Nccl* g_nccl;
static void nccl_ok(int rc, const char* what) {
    if (rc != 0) {
        fprintf(stderr, "nccl_busbw: %s: %s\n", what, g_nccl->error_string ? g_nccl->error_string(rc) : "error");
        exit(1);
    }
}

static void* sym(void* lib, const char* name) {
    void* p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "nccl_busbw: %s not in the NCCL library\n", name);
        exit(1);
    }
    return p;
}

static size_t parse_size(const char* s) {
    char* end;
    double v = strtod(s, &end);
    size_t mult = 1;
    if (*end == 'K' || *end == 'k') mult = 1ull << 10;
    else if (*end == 'M' || *end == 'm') mult = 1ull << 20;
    else if (*end == 'G' || *end == 'g') mult = 1ull << 30;
    else if (*end != '\0') die("bad size (use e.g. 1K, 4M, 1G)");
    return (size_t)(v * (double)mult);
}

struct Setup {
    int n;
    std::vector<nccl_comm_t> comms;
    std::vector<cudaStream_t> streams;
    std::vector<float*> send, recv;
};

// One operation on every GPU, in one group. bytes: the size nccl-tests reports (all_gather: the gathered
// output; reduce_scatter: the input; all_reduce and sendrecv: the buffer).
static void enqueue(const Nccl& nc, Setup& s, const std::string& coll, size_t bytes) {
    size_t count = bytes / sizeof(float);
    nccl_ok(nc.group_start(), "ncclGroupStart");
    for (int d = 0; d < s.n; d++) {
        if (coll == "all_reduce")
            nccl_ok(nc.all_reduce(s.send[d], s.recv[d], count, kFloat32, kSum, s.comms[d], s.streams[d]), "ncclAllReduce");
        else if (coll == "all_gather")
            nccl_ok(nc.all_gather(s.send[d], s.recv[d], count / s.n, kFloat32, s.comms[d], s.streams[d]), "ncclAllGather");
        else if (coll == "reduce_scatter")
            nccl_ok(nc.reduce_scatter(s.send[d], s.recv[d], count / s.n, kFloat32, kSum, s.comms[d], s.streams[d]),
                    "ncclReduceScatter");
        else { // sendrecv: a ring, each GPU sends to the next and receives from the previous
            nccl_ok(nc.send(s.send[d], count, kFloat32, (d + 1) % s.n, s.comms[d], s.streams[d]), "ncclSend");
            nccl_ok(nc.recv(s.recv[d], count, kFloat32, (d + s.n - 1) % s.n, s.comms[d], s.streams[d]), "ncclRecv");
        }
    }
    nccl_ok(nc.group_end(), "ncclGroupEnd");
}

static void sync_all(Setup& s) {
    for (int d = 0; d < s.n; d++) {
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaStreamSynchronize(s.streams[d]));
    }
}

// Wall time of `ops` operations, us per operation: events on GPU 0's stream around them, after every stream is done.
static double time_batch(const Nccl& nc, Setup& s, const std::string& coll, size_t bytes, int ops, cudaEvent_t a,
                         cudaEvent_t b) {
    sync_all(s);
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaEventRecord(a, s.streams[0]));
    for (int i = 0; i < ops; i++) enqueue(nc, s, coll, bytes);
    // GPU 0's stop after every GPU's last operation: the other streams' ends are awaited through events
    for (int d = 1; d < s.n; d++) {
        cudaEvent_t done;
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        CUDA_OK(cudaEventRecord(done, s.streams[d]));
        CUDA_OK(cudaSetDevice(0));
        CUDA_OK(cudaStreamWaitEvent(s.streams[0], done, 0));
        CUDA_OK(cudaEventDestroy(done));
    }
    CUDA_OK(cudaEventRecord(b, s.streams[0]));
    CUDA_OK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    return (double)ms * 1000.0 / ops;
}

int main(int argc, char** argv) {
    const char* lib_path = nullptr;
    std::string colls = "all_reduce,all_gather,reduce_scatter,sendrecv", label = "run";
    size_t min_bytes = 1 << 10, max_bytes = 1ull << 30;
    double seconds = 0.25;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc) die("every option takes a value (--nccl PATH --colls LIST --min S --max S --seconds S --label L)");
        const char* v = argv[++i];
        if (a == "--nccl") lib_path = v;
        else if (a == "--colls") colls = v;
        else if (a == "--min") min_bytes = parse_size(v);
        else if (a == "--max") max_bytes = parse_size(v);
        else if (a == "--seconds") seconds = atof(v);
        else if (a == "--label") label = v;
        else die(("unknown option " + a).c_str());
    }
    if (!lib_path) die("--nccl PATH (libnccl.so.2) is required");
    if (min_bytes < 1024 || max_bytes < min_bytes || seconds <= 0) die("need 1K <= --min <= --max and --seconds > 0");
    void* lib = dlopen(lib_path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) die(dlerror());
    Nccl nc;
    nc.comm_init_all = (comm_init_all_fn)sym(lib, "ncclCommInitAll");
    nc.comm_destroy = (comm_destroy_fn)sym(lib, "ncclCommDestroy");
    nc.group_start = (group_fn)sym(lib, "ncclGroupStart");
    nc.group_end = (group_fn)sym(lib, "ncclGroupEnd");
    nc.all_reduce = (all_reduce_fn)sym(lib, "ncclAllReduce");
    nc.all_gather = (all_gather_fn)sym(lib, "ncclAllGather");
    nc.reduce_scatter = (reduce_scatter_fn)sym(lib, "ncclReduceScatter");
    nc.send = (send_recv_fn)sym(lib, "ncclSend");
    nc.recv = (send_recv_fn)sym(lib, "ncclRecv");
    nc.error_string = (error_string_fn)sym(lib, "ncclGetErrorString");
    g_nccl = &nc;

    Setup s;
    CUDA_OK(cudaGetDeviceCount(&s.n));
    if (s.n < 2) die("needs at least two GPUs");
    s.comms.resize(s.n);
    s.streams.resize(s.n);
    s.send.resize(s.n);
    s.recv.resize(s.n);
    for (int d = 0; d < s.n; d++) {
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaStreamCreateWithFlags(&s.streams[d], cudaStreamNonBlocking));
        CUDA_OK(cudaMalloc(&s.send[d], max_bytes));
        CUDA_OK(cudaMalloc(&s.recv[d], max_bytes));
        CUDA_OK(cudaMemset(s.send[d], 0, max_bytes));
    }
    nccl_ok(nc.comm_init_all(s.comms.data(), s.n, nullptr), "ncclCommInitAll");
    CUDA_OK(cudaSetDevice(0));
    cudaEvent_t a, b;
    CUDA_OK(cudaEventCreate(&a));
    CUDA_OK(cudaEventCreate(&b));

    size_t start = 0;
    while (start <= colls.size()) {
        size_t comma = colls.find(',', start);
        std::string coll = colls.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        start = comma == std::string::npos ? colls.size() + 1 : comma + 1;
        if (coll != "all_reduce" && coll != "all_gather" && coll != "reduce_scatter" && coll != "sendrecv")
            die(("unknown collective " + coll).c_str());
        for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
            // warm up, then size a batch to ~1/8 of the point's time; at least 8 batches
            for (int i = 0; i < 5; i++) enqueue(nc, s, coll, bytes);
            double probe = time_batch(nc, s, coll, bytes, 10, a, b);
            int ops = std::max(1, std::min(5000, (int)(seconds / 8 * 1e6 / std::max(probe, 0.1))));
            std::vector<double> batches;
            double spent = 0;
            while (batches.size() < 8 || (spent < seconds && batches.size() < 64)) {
                double us = time_batch(nc, s, coll, bytes, ops, a, b);
                batches.push_back(us);
                spent += us * ops / 1e6;
            }
            std::vector<double> sorted = batches;
            std::sort(sorted.begin(), sorted.end());
            double med = sorted[sorted.size() / 2];
            double algbw = (double)bytes / (med * 1e-6) / 1e9;
            double factor = coll == "all_reduce" ? 2.0 * (s.n - 1) / s.n
                            : coll == "sendrecv"  ? 1.0
                                                  : (double)(s.n - 1) / s.n;
            printf("{\"label\":\"%s\",\"coll\":\"%s\",\"bytes\":%zu,\"ranks\":%d,\"ops_per_batch\":%d,\"batches\":[",
                   label.c_str(), coll.c_str(), bytes, s.n, ops);
            for (size_t i = 0; i < batches.size(); i++) printf("%s%.3f", i ? "," : "", batches[i]);
            printf("],\"median_us\":%.3f,\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f}\n", med, algbw, algbw * factor);
            fflush(stdout);
        }
    }
    sync_all(s);
    for (int d = 0; d < s.n; d++) nc.comm_destroy(s.comms[d]);
    return 0;
}
