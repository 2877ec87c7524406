// FUSE opcodes and what the kernel does with each (synchronous, background, no reply), the
// per-opcode server work of passthrough_hp on tmpfs, and one FUSE connection's declaration as the
// `program` and `bonnie` kinds read it (transport, queues, server threads, costs).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hw/machine_profile.h"
#include "input/params.h"
#include "topology/topology.h"

namespace wakesim {

class JsonNode;
struct FuseConnDef;

// `conn_read` is the fio kind's READ, costed by FuseCosts::server_work (the Op's default).
enum class FuseOp : uint8_t {
    conn_read, lookup, create, open, getattr, setattr, getxattr, flush, release, unlink, read, write, forget,
    writeback,
};
inline constexpr size_t kNrFuseOps = 14;

// "LOOKUP", ... (conn_read: "READ").
const char* fuse_op_name(FuseOp op);
// The step name ("lookup", ...; not conn_read), or nullopt.
std::optional<FuseOp> fuse_op_from_step(std::string_view name);
std::vector<std::string> fuse_op_step_names();

// How the kernel sends it.
enum class FuseSend : uint8_t {
    sync,        // __fuse_request_send: the requester sleeps in request_wait_answer
    background,  // fuse_simple_background: queued, the requester goes on (RELEASE of a regular file)
    forget,      // fuse_queue_forget: no reply, always through /dev/fuse (also in io-uring mode)
    writeback,   // fuse_send_writepage: a background request (args->force: never throttled) that the
                 // writer then waits for (close() -> fuse_flush -> write_inode_now)
};
FuseSend fuse_op_send(FuseOp op);
// READ copies its bytes into the reply, WRITE in the request: both carry `bytes`.
bool fuse_op_has_data(FuseOp op);

// Server work per request of each opcode (reference-capacity ns), data copies excluded.
struct FuseOpCosts {
    std::array<int64_t, kNrFuseOps> server{};
    int64_t copy_per_kib = 0;
    // The handler's work for one request of `op` carrying `bytes` (two copies of the data:
    // tmpfs <-> the server's buffer, the buffer <-> the app's pages).
    int64_t work(FuseOp op, int64_t bytes) const;
};

// One FUSE connection's parameters (transport, threads, queues, the per-request costs of
// fuse_conn.h and the per-opcode server work): `program`'s "fuse" objects and the `bonnie` kind.
const ParamTable& fuse_conn_params();
// libfuse's and the kernel's settings that change no sleep or wakeup, so the model has no key for them.
const std::vector<LeftOutSetting>& fuse_left_out();
struct FuseConnSpec {
    std::shared_ptr<const FuseConnDef> def;
    FuseOpCosts ops;
    int64_t server_footprint_kib = 0;
};
// Reads the keys of fuse_conn_params() from `obj` (`p` read from it), checked against `topo`;
// the system calls of both sides cost the machine's `syscall`.
FuseConnSpec read_fuse_conn(const JsonNode& obj, const ParamValues& p, const Topology& topo, const MachineProfile& prof);

// io-uring queue placement (the reduced-queues series, v3): `n` queues spread over the nodes
// round-robin, lowest-numbered CPUs first; and the queue a request submitted on each CPU uses.
std::vector<int> fuse_spread_queues(int64_t n, const Topology& topo);
std::vector<int> fuse_queue_map(const std::vector<int>& queue_cpu, const Topology& topo);

}  // namespace wakesim
