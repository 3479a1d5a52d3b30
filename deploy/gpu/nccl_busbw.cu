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
// Two ways to drive the GPUs (--procs): 0, one thread enqueues each operation for every GPU in one group (the
// host cost of all ranks adds up on one thread: the strictest case); 1, one process per GPU (as torchrun or MPI
// run NCCL; the unique id goes from rank 0 to the others through a pipe).
//
// Build (host code only; cudart linked statically):
//   nvcc -O2 -o build/nccl_busbw deploy/gpu/nccl_busbw.cu -ldl
// Run:
//   build/nccl_busbw --nccl /path/libnccl.so.2 [--procs 0|1] [--colls all_reduce,all_gather,reduce_scatter,sendrecv]
//                    [--min 1K] [--max 1G] [--seconds 0.25] [--batches 10] [--label L]
//                    [--cpus-per-rank N --cpu-base C]   (with --procs 1: rank r pinned to N CPUs from C + r * N)
// Prints one JSON object per line and point: {"label","coll","bytes","ranks","batches":[us per op, ...],
// "median_us","algbw_gbs","busbw_gbs"}; the batch times are each batch's wall time (CUDA events on the first
// local GPU, after every local GPU's stream finished) divided by its operation count. A batch holds as many
// operations as take about seconds/8 (agreed by all ranks: the slowest rank's probe).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

typedef struct ncclComm* nccl_comm_t;
typedef struct {
    char internal[128]; // NCCL_UNIQUE_ID_BYTES
} nccl_unique_id_t;
typedef int (*comm_init_all_fn)(nccl_comm_t*, int, const int*);
typedef int (*get_unique_id_fn)(nccl_unique_id_t*);
typedef int (*comm_init_rank_fn)(nccl_comm_t*, int, nccl_unique_id_t, int);
typedef int (*comm_destroy_fn)(nccl_comm_t);
typedef int (*group_fn)(void);
typedef int (*all_reduce_fn)(const void*, void*, size_t, int, int, nccl_comm_t, cudaStream_t);
typedef int (*all_gather_fn)(const void*, void*, size_t, int, nccl_comm_t, cudaStream_t);
typedef int (*reduce_scatter_fn)(const void*, void*, size_t, int, int, nccl_comm_t, cudaStream_t);
typedef int (*send_recv_fn)(const void*, size_t, int, int, nccl_comm_t, cudaStream_t);
typedef const char* (*error_string_fn)(int);

static const int kFloat32 = 7;
static const int kSum = 0;
static const int kMax = 2;

struct Nccl {
    comm_init_all_fn comm_init_all;
    get_unique_id_fn get_unique_id;
    comm_init_rank_fn comm_init_rank;
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

// The GPUs this process drives: local index i is device devs[i], rank ranks[i] of n.
struct Setup {
    int n;
    std::vector<int> devs, ranks;
    std::vector<nccl_comm_t> comms;
    std::vector<cudaStream_t> streams;
    std::vector<float*> send, recv;
};

// One operation on every GPU, in one group. bytes: the size nccl-tests reports (all_gather: the gathered
// output; reduce_scatter: the input; all_reduce and sendrecv: the buffer).
static void enqueue(const Nccl& nc, Setup& s, const std::string& coll, size_t bytes) {
    size_t count = bytes / sizeof(float);
    nccl_ok(nc.group_start(), "ncclGroupStart");
    for (size_t d = 0; d < s.devs.size(); d++) {
        int r = s.ranks[d];
        if (coll == "all_reduce")
            nccl_ok(nc.all_reduce(s.send[d], s.recv[d], count, kFloat32, kSum, s.comms[d], s.streams[d]), "ncclAllReduce");
        else if (coll == "all_gather")
            nccl_ok(nc.all_gather(s.send[d], s.recv[d], count / s.n, kFloat32, s.comms[d], s.streams[d]), "ncclAllGather");
        else if (coll == "reduce_scatter")
            nccl_ok(nc.reduce_scatter(s.send[d], s.recv[d], count / s.n, kFloat32, kSum, s.comms[d], s.streams[d]),
                    "ncclReduceScatter");
        else { // sendrecv: a ring, each GPU sends to the next and receives from the previous
            nccl_ok(nc.send(s.send[d], count, kFloat32, (r + 1) % s.n, s.comms[d], s.streams[d]), "ncclSend");
            nccl_ok(nc.recv(s.recv[d], count, kFloat32, (r + s.n - 1) % s.n, s.comms[d], s.streams[d]), "ncclRecv");
        }
    }
    nccl_ok(nc.group_end(), "ncclGroupEnd");
}

static void sync_all(Setup& s) {
    for (size_t d = 0; d < s.devs.size(); d++) {
        CUDA_OK(cudaSetDevice(s.devs[d]));
        CUDA_OK(cudaStreamSynchronize(s.streams[d]));
    }
}

// The largest of every rank's value (one process per GPU: an all_reduce of one float); else the value itself.
static double agree_max(const Nccl& nc, Setup& s, double v, float* scratch) {
    if (s.devs.size() == (size_t)s.n) return v;
    float f = (float)v;
    CUDA_OK(cudaSetDevice(s.devs[0]));
    CUDA_OK(cudaMemcpy(scratch, &f, sizeof f, cudaMemcpyHostToDevice));
    nccl_ok(nc.all_reduce(scratch, scratch, 1, kFloat32, kMax, s.comms[0], s.streams[0]), "ncclAllReduce(max)");
    CUDA_OK(cudaStreamSynchronize(s.streams[0]));
    CUDA_OK(cudaMemcpy(&f, scratch, sizeof f, cudaMemcpyDeviceToHost));
    return f;
}

// Wall time of `ops` operations, us per operation: events on GPU 0's stream around them, after every stream is done.
static double time_batch(const Nccl& nc, Setup& s, const std::string& coll, size_t bytes, int ops, cudaEvent_t a,
                         cudaEvent_t b) {
    sync_all(s);
    CUDA_OK(cudaSetDevice(s.devs[0]));
    CUDA_OK(cudaEventRecord(a, s.streams[0]));
    for (int i = 0; i < ops; i++) enqueue(nc, s, coll, bytes);
    // the first GPU's stop after every local GPU's last operation: the other streams' ends are awaited through events
    for (size_t d = 1; d < s.devs.size(); d++) {
        cudaEvent_t done;
        CUDA_OK(cudaSetDevice(s.devs[d]));
        CUDA_OK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        CUDA_OK(cudaEventRecord(done, s.streams[d]));
        CUDA_OK(cudaSetDevice(s.devs[0]));
        CUDA_OK(cudaStreamWaitEvent(s.streams[0], done, 0));
        CUDA_OK(cudaEventDestroy(done));
    }
    CUDA_OK(cudaEventRecord(b, s.streams[0]));
    CUDA_OK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, a, b));
    return (double)ms * 1000.0 / ops;
}

// "a,b,c" -> {"a", "b", "c"} (an empty item stays, to be refused as an unknown collective).
static std::vector<std::string> split_commas(const std::string& list) {
    std::vector<std::string> items;
    size_t start = 0;
    for (size_t comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
        items.push_back(list.substr(start, comma - start));
    items.push_back(list.substr(start));
    return items;
}

struct Options {
    const char* lib_path = nullptr;
    std::vector<std::string> colls{"all_reduce", "all_gather", "reduce_scatter", "sendrecv"};
    std::string label = "run";
    size_t min_bytes = 1 << 10, max_bytes = 1ull << 30;
    double seconds = 0.25;
    int batches = 10;
    int procs = 0;
    // With --procs 1: rank r runs on CPUs cpu_base + r * cpus_per_rank ... + cpus_per_rank - 1 (0: unpinned), so
    // that the ranks' proxy and socket threads do not meet on a core, nor meet the ring consumer.
    int cpus_per_rank = 0;
    int cpu_base = 0;
};

static Nccl open_nccl(const char* path) {
    void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) die(dlerror());
    Nccl nc;
    nc.comm_init_all = (comm_init_all_fn)sym(lib, "ncclCommInitAll");
    nc.get_unique_id = (get_unique_id_fn)sym(lib, "ncclGetUniqueId");
    nc.comm_init_rank = (comm_init_rank_fn)sym(lib, "ncclCommInitRank");
    nc.comm_destroy = (comm_destroy_fn)sym(lib, "ncclCommDestroy");
    nc.group_start = (group_fn)sym(lib, "ncclGroupStart");
    nc.group_end = (group_fn)sym(lib, "ncclGroupEnd");
    nc.all_reduce = (all_reduce_fn)sym(lib, "ncclAllReduce");
    nc.all_gather = (all_gather_fn)sym(lib, "ncclAllGather");
    nc.reduce_scatter = (reduce_scatter_fn)sym(lib, "ncclReduceScatter");
    nc.send = (send_recv_fn)sym(lib, "ncclSend");
    nc.recv = (send_recv_fn)sym(lib, "ncclRecv");
    nc.error_string = (error_string_fn)sym(lib, "ncclGetErrorString");
    return nc;
}

// Runs the sweep on the GPUs of `s` (comms not yet created: `id_pipe` < 0 = every GPU here, ncclCommInitAll;
// else this process is rank s.ranks[0] and rank 0 hands the unique id to the others through the pipe).
static void sweep(const Options& o, Setup& s, int id_pipe[2]) {
    Nccl nc = open_nccl(o.lib_path);
    g_nccl = &nc;
    size_t local = s.devs.size();
    s.comms.resize(local);
    s.streams.resize(local);
    s.send.resize(local);
    s.recv.resize(local);
    for (size_t d = 0; d < local; d++) {
        CUDA_OK(cudaSetDevice(s.devs[d]));
        CUDA_OK(cudaStreamCreateWithFlags(&s.streams[d], cudaStreamNonBlocking));
        CUDA_OK(cudaMalloc(&s.send[d], o.max_bytes));
        CUDA_OK(cudaMalloc(&s.recv[d], o.max_bytes));
        CUDA_OK(cudaMemset(s.send[d], 0, o.max_bytes));
    }
    if (!id_pipe) {
        nccl_ok(nc.comm_init_all(s.comms.data(), s.n, s.devs.data()), "ncclCommInitAll");
    } else {
        nccl_unique_id_t id;
        if (s.ranks[0] == 0) {
            nccl_ok(nc.get_unique_id(&id), "ncclGetUniqueId");
            for (int r = 1; r < s.n; r++)
                if (write(id_pipe[1], &id, sizeof id) != (ssize_t)sizeof id) die("cannot pass the unique id");
        } else if (read(id_pipe[0], &id, sizeof id) != (ssize_t)sizeof id) {
            die("no unique id from rank 0");
        }
        CUDA_OK(cudaSetDevice(s.devs[0]));
        nccl_ok(nc.comm_init_rank(&s.comms[0], s.n, id, s.ranks[0]), "ncclCommInitRank");
    }
    CUDA_OK(cudaSetDevice(s.devs[0]));
    float* scratch;
    CUDA_OK(cudaMalloc(&scratch, sizeof(float)));
    cudaEvent_t a, b;
    CUDA_OK(cudaEventCreate(&a));
    CUDA_OK(cudaEventCreate(&b));
    bool prints = s.ranks[0] == 0;

    for (const std::string& coll : o.colls) {
        for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
            for (int i = 0; i < 5; i++) enqueue(nc, s, coll, bytes); // warm up
            double probe = agree_max(nc, s, time_batch(nc, s, coll, bytes, 10, a, b), scratch);
            int ops = std::max(1, std::min(5000, (int)(o.seconds / 8 * 1e6 / std::max(probe, 0.1))));
            std::vector<double> batches;
            for (int k = 0; k < o.batches; k++) batches.push_back(time_batch(nc, s, coll, bytes, ops, a, b));
            if (!prints) continue;
            std::vector<double> sorted = batches;
            std::sort(sorted.begin(), sorted.end());
            double med = sorted[sorted.size() / 2];
            double algbw = (double)bytes / (med * 1e-6) / 1e9;
            double factor = coll == "all_reduce" ? 2.0 * (s.n - 1) / s.n
                            : coll == "sendrecv"  ? 1.0
                                                  : (double)(s.n - 1) / s.n;
            printf("{\"label\":\"%s\",\"coll\":\"%s\",\"bytes\":%zu,\"ranks\":%d,\"procs\":%d,"
                   "\"ops_per_batch\":%d,\"batches\":[",
                   o.label.c_str(), coll.c_str(), bytes, s.n, o.procs, ops);
            for (size_t i = 0; i < batches.size(); i++) printf("%s%.3f", i ? "," : "", batches[i]);
            printf("],\"median_us\":%.3f,\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f}\n", med, algbw, algbw * factor);
            fflush(stdout);
        }
    }
    sync_all(s);
    for (size_t d = 0; d < local; d++) nc.comm_destroy(s.comms[d]);
}

// The number of GPUs, asked in a child process: CUDA must not be initialised in a process that forks workers.
static int count_gpus_in_child() {
    int fds[2];
    if (pipe(fds) != 0) die("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
        if (write(fds[1], &n, sizeof n) != (ssize_t)sizeof n) _exit(1);
        _exit(0);
    }
    int n = 0;
    if (read(fds[0], &n, sizeof n) != (ssize_t)sizeof n) n = 0;
    waitpid(pid, nullptr, 0);
    close(fds[0]);
    close(fds[1]);
    return n;
}

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc)
            die("every option takes a value (--nccl PATH --procs 0|1 --colls LIST --min S --max S --seconds S "
                "--batches N --label L --cpus-per-rank N --cpu-base C)");
        const char* v = argv[++i];
        if (a == "--nccl") o.lib_path = v;
        else if (a == "--procs") o.procs = atoi(v);
        else if (a == "--colls") o.colls = split_commas(v);
        else if (a == "--min") o.min_bytes = parse_size(v);
        else if (a == "--max") o.max_bytes = parse_size(v);
        else if (a == "--seconds") o.seconds = atof(v);
        else if (a == "--batches") o.batches = atoi(v);
        else if (a == "--label") o.label = v;
        else if (a == "--cpus-per-rank") o.cpus_per_rank = atoi(v);
        else if (a == "--cpu-base") o.cpu_base = atoi(v);
        else die(("unknown option " + a).c_str());
    }
    if (!o.lib_path) die("--nccl PATH (libnccl.so.2) is required");
    if (o.min_bytes < 1024 || o.max_bytes < o.min_bytes || o.seconds <= 0 || o.batches < 3 || o.batches > 1000)
        die("need 1K <= --min <= --max, --seconds > 0 and 3 <= --batches <= 1000");
    for (const std::string& coll : o.colls) {
        if (coll != "all_reduce" && coll != "all_gather" && coll != "reduce_scatter" && coll != "sendrecv")
            die(("unknown collective " + coll).c_str());
    }
    if (o.procs == 0) {
        Setup s;
        CUDA_OK(cudaGetDeviceCount(&s.n));
        if (s.n < 2) die("needs at least two GPUs");
        for (int d = 0; d < s.n; d++) s.devs.push_back(d), s.ranks.push_back(d);
        sweep(o, s, nullptr);
        return 0;
    }
    int n = count_gpus_in_child();
    if (n < 2) die("needs at least two GPUs");
    int id_pipe[2];
    if (pipe(id_pipe) != 0) die("pipe");
    std::vector<pid_t> kids;
    for (int r = 0; r < n; r++) {
        pid_t pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) {
            if (o.cpus_per_rank > 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                for (int c = 0; c < o.cpus_per_rank; c++) CPU_SET(o.cpu_base + r * o.cpus_per_rank + c, &set);
                if (sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity (--cpus-per-rank)");
            }
            Setup s;
            s.n = n;
            s.devs.push_back(r);
            s.ranks.push_back(r);
            sweep(o, s, id_pipe);
            fflush(stdout);
            _exit(0);
        }
        kids.push_back(pid);
    }
    int failed = 0;
    for (pid_t k : kids) {
        int st = 0;
        waitpid(k, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) failed = 1;
    }
    if (failed) die("a rank failed (its message is above)");
    return 0;
}
