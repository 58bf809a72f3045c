#include "allocation_counter.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static atomic_int enabled;
static atomic_uint_least64_t count;
static atomic_uint_least64_t bytes;
static _Thread_local int thread_ignored;

static inline void record(size_t size) {
    if (atomic_load_explicit(&enabled, memory_order_relaxed) && !thread_ignored) {
        atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&bytes, size, memory_order_relaxed);
    }
}

void bareble_allocation_counter_enable(int on) { atomic_store(&enabled, on); }
void bareble_allocation_counter_ignore_thread(int ignored) { thread_ignored = ignored; }
uint64_t bareble_allocation_count(void) { return atomic_load(&count); }
uint64_t bareble_allocated_bytes(void) { return atomic_load(&bytes); }

uint64_t bareble_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)info.uordblks + (uint64_t)info.hblkhd;
}

void *malloc(size_t size) {
    record(size);
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    record(count_ * size);
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    record(size);
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    record(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    record(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    record(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
