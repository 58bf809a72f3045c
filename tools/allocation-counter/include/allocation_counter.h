#ifndef BAREBLE_ALLOCATION_COUNTER_H
#define BAREBLE_ALLOCATION_COUNTER_H

/* Counts heap allocations made by the whole process while enabled, so the benchmark can
   report bytes and allocations per advertising report. It interposes malloc and friends
   (glibc supports replacing the allocator by ELF symbol interposition) and forwards to
   glibc's own implementation. Linked into bareble-bench only. */

#include <stdint.h>

void bareble_allocation_counter_enable(int enabled);
/* Leaves the calling thread's allocations out of the count (1) or counts them again (0):
   a benchmark's fake controller is not the host being measured. */
void bareble_allocation_counter_ignore_thread(int ignored);
uint64_t bareble_allocation_count(void);
uint64_t bareble_allocated_bytes(void);

/* Bytes malloc has handed out and not had back, in every arena and in mmap'd blocks
   (glibc's mallinfo2): a leak grows this, fragmentation only grows the RSS. */
uint64_t bareble_heap_bytes_in_use(void);

#endif
