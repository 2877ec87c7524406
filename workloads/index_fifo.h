// A fixed-capacity FIFO of indices (tasks, requests): sized once at set-up, so the wait queues of
// channels and FUSE connections allocate nothing per event.
#pragma once
#include <cstddef>
#include <vector>

namespace wakesim {

struct IndexFifo {
    std::vector<int> buf;
    size_t head = 0, size = 0;
    void push(int v) {
        buf[(head + size) % buf.size()] = v;
        ++size;
    }
    int pop() {
        int v = buf[head];
        head = (head + 1) % buf.size();
        --size;
        return v;
    }
    bool empty() const { return size == 0; }
};

}  // namespace wakesim
